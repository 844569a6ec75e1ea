// NTSTATUS codes (MS-ERREF 2.3) that ringsmb sends, and the one errno mapping.
#pragma once

#include <cstdint>
#include <expected>

namespace ringsmb {

#define RINGSMB_NTSTATUS_LIST(X)                         \
  X(Success, 0x00000000)                                 \
  X(Pending, 0x00000103)                                 \
  X(NotifyCleanup, 0x0000010B)                           \
  X(NotifyEnumDir, 0x0000010C)                           \
  X(ObjectNameExists, 0x40000000)                        \
  X(BufferOverflow, 0x80000005)                          \
  X(NoMoreFiles, 0x80000006)                             \
  X(NoMoreEas, 0x80000012)                               \
  X(InvalidEaName, 0x80000013)                           \
  X(EaListInconsistent, 0x80000014)                      \
  X(StoppedOnSymlink, 0x8000002D)                        \
  X(NoMoreEntries, 0x8000001A)                           \
  X(Unsuccessful, 0xC0000001)                            \
  X(NotImplemented, 0xC0000002)                          \
  X(InvalidInfoClass, 0xC0000003)                        \
  X(InfoLengthMismatch, 0xC0000004)                      \
  X(AccessViolation, 0xC0000005)                         \
  X(InvalidHandle, 0xC0000008)                           \
  X(InvalidParameter, 0xC000000D)                        \
  X(NoSuchDevice, 0xC000000E)                            \
  X(NoSuchFile, 0xC000000F)                              \
  X(InvalidDeviceRequest, 0xC0000010)                    \
  X(EndOfFile, 0xC0000011)                               \
  X(MoreProcessingRequired, 0xC0000016)                  \
  X(NoMemory, 0xC0000017)                                \
  X(InvalidSystemService, 0xC000001C)                    \
  X(InvalidLockSequence, 0xC000001E)                     \
  X(InvalidViewSize, 0xC000001F)                         \
  X(AccessDenied, 0xC0000022)                            \
  X(BufferTooSmall, 0xC0000023)                          \
  X(ObjectTypeMismatch, 0xC0000024)                      \
  X(ObjectNameInvalid, 0xC0000033)                       \
  X(ObjectNameNotFound, 0xC0000034)                      \
  X(ObjectNameCollision, 0xC0000035)                     \
  X(ObjectPathInvalid, 0xC0000039)                       \
  X(ObjectPathNotFound, 0xC000003A)                      \
  X(ObjectPathSyntaxBad, 0xC000003B)                     \
  X(SharingViolation, 0xC0000043)                        \
  X(QuotaExceeded, 0xC0000044)                           \
  X(EasNotSupported, 0xC000004F)                         \
  X(EaTooLarge, 0xC0000050)                              \
  X(NonexistentEaEntry, 0xC0000051)                      \
  X(NoEasOnFile, 0xC0000052)                             \
  X(FileLockConflict, 0xC0000054)                        \
  X(LockNotGranted, 0xC0000055)                          \
  X(DeletePending, 0xC0000056)                           \
  X(InvalidOwner, 0xC000005A)                            \
  X(PrivilegeNotHeld, 0xC0000061)                        \
  X(NoSuchUser, 0xC0000064)                              \
  X(NoSuchGroup, 0xC0000066)                             \
  X(WrongPassword, 0xC000006A)                           \
  X(LogonFailure, 0xC000006D)                            \
  X(AccountRestriction, 0xC000006E)                      \
  X(PasswordExpired, 0xC0000071)                         \
  X(AccountDisabled, 0xC0000072)                         \
  X(NoneMapped, 0xC0000073)                              \
  X(RangeNotLocked, 0xC000007E)                          \
  X(DiskFull, 0xC000007F)                                \
  X(AllottedSpaceExceeded, 0xC0000099)                   \
  X(InsufficientResources, 0xC000009A)                   \
  X(MediaWriteProtected, 0xC00000A2)                     \
  X(BadImpersonationLevel, 0xC00000A5)                   \
  X(PipeNotAvailable, 0xC00000AC)                        \
  X(IllegalFunction, 0xC00000AF)                         \
  X(IoTimeout, 0xC00000B5)                               \
  X(FileIsADirectory, 0xC00000BA)                        \
  X(NotSupported, 0xC00000BB)                            \
  X(BadNetworkPath, 0xC00000BE)                          \
  X(InvalidNetworkResponse, 0xC00000C3)                  \
  X(NetworkNameDeleted, 0xC00000C9)                      \
  X(NetworkAccessDenied, 0xC00000CA)                     \
  X(BadNetworkName, 0xC00000CC)                          \
  X(RequestNotAccepted, 0xC00000D0)                      \
  X(NotSameDevice, 0xC00000D4)                           \
  X(PipeEmpty, 0xC00000D9)                               \
  X(OplockNotGranted, 0xC00000E2)                        \
  X(InvalidOplockProtocol, 0xC00000E3)                   \
  X(InternalError, 0xC00000E5)                           \
  X(DirectoryNotEmpty, 0xC0000101)                       \
  X(NotADirectory, 0xC0000103)                           \
  X(NameTooLong, 0xC0000106)                             \
  X(TooManyOpenedFiles, 0xC000011F)                      \
  X(Cancelled, 0xC0000120)                               \
  X(CannotDelete, 0xC0000121)                            \
  X(FileClosed, 0xC0000128)                              \
  X(PipeBroken, 0xC000014B)                              \
  X(InvalidDeviceState, 0xC0000184)                      \
  X(FsDriverRequired, 0xC000019C)                        \
  X(UserSessionDeleted, 0xC0000203)                      \
  X(InvalidBufferSize, 0xC0000206)                       \
  X(ConnectionDisconnected, 0xC000020C)                  \
  X(NotFound, 0xC0000225)                                \
  X(DuplicateObjectid, 0xC000022A)                       \
  X(AccountLockedOut, 0xC0000234)                        \
  X(TooManyLinks, 0xC0000265)                            \
  X(NotAReparsePoint, 0xC0000275)                        \
  X(IoReparseTagInvalid, 0xC0000276)                     \
  X(IoReparseTagMismatch, 0xC0000277)                    \
  X(IoReparseDataInvalid, 0xC0000278)                    \
  X(NetworkSessionExpired, 0xC000035C)                   \
  X(FileSystemLimitation, 0xC0000427)                    \
  X(RequestOutOfSequence, 0xC000042A)                    \
  X(FileNotAvailable, 0xC0000467)                        \
  X(InvalidLockRange, 0xC00001A1)                        \
  X(SomeNotMapped, 0x00000107)                           \
  X(NoSuchDomain, 0xC00000DF)

enum class NtStatus : uint32_t {
#define RINGSMB_NTSTATUS_ENUM(name, value) name = value,
  RINGSMB_NTSTATUS_LIST(RINGSMB_NTSTATUS_ENUM)
#undef RINGSMB_NTSTATUS_ENUM
};

// "STATUS_OBJECT_NAME_NOT_FOUND"-style name for logs; "STATUS_0x........" if unknown.
const char* nt_status_name(NtStatus status);

// The one place where an errno becomes an NTSTATUS.
NtStatus nt_status_from_errno(int err);

inline bool nt_success(NtStatus s) { return (uint32_t(s) >> 30) != 3; }

template <typename T>
using Result = std::expected<T, NtStatus>;
using Unexpected = std::unexpected<NtStatus>;

}  // namespace ringsmb
