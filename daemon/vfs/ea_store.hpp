// Extended attributes (EAs: FILE_FULL_EA_INFORMATION, MS-FSCC 2.4.15),
// stored beside the file as extended attributes in the trusted.* namespace:
//
//   trusted.ringsmb.ea.<NAME>  =  u8 Flags | u8 name length | name | value
//
// <NAME> is the EA name with ASCII letters upper-cased (EA names compare
// without case, as on NTFS); the value holds the name as the client spelled
// it when it set the EA, which is what a query returns (the Linux kernel
// client matches user.* xattr names exactly). trusted.* for the reason named
// streams use it (docs/streams.md): only the server (CAP_SYS_ADMIN) reads
// or writes them, so a local user cannot forge one, and they cannot collide
// with the user.* attributes of the files (user.DOSATTRIB and whatever local
// programs keep there). The SMB2 layer checks FILE_READ_EA / FILE_WRITE_EA
// on the handle, opened with the user's identity.
//
// Limits: a name is 1..236 bytes (255, Linux's limit on an xattr name, less
// the prefix; Windows takes 255), without control characters or
// "*+,/:;<=>?[\]| (the characters MS-FSCC forbids in EA names); a value is at
// most 65535 bytes (EaValueLength is 16 bits); one file's EAs together at
// most 65535 bytes as a FILE_FULL_EA_INFORMATION list, as NTFS. The
// filesystem may hold less (ext4 without ea_inode: one 4 KiB block for all
// of a file's xattrs): a set that does not fit fails with EA_TOO_LARGE.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

inline constexpr std::string_view kEaXattrPrefix = "trusted.ringsmb.ea.";
inline constexpr size_t kMaxEaNameBytes = 255 - kEaXattrPrefix.size();
inline constexpr size_t kMaxEaSetBytes = 65535;
inline constexpr uint8_t FILE_NEED_EA = 0x80;

struct Ea {
  std::string name;  // as the client spelled it
  uint8_t flags = 0;
  Bytes value;       // empty in a SET: remove the EA
};

// A FILE_FULL_EA_INFORMATION list (SET_INFO FileFullEaInformation, the
// CREATE context SMB2_CREATE_EA_BUFFER). EaListInconsistent for an entry
// that runs past the buffer, lacks the NUL after its name or has a
// NextEntryOffset that is not 4-aligned or cuts into the entry;
// InvalidEaName for an empty, too long or forbidden name.
NtStatus parse_full_ea_list(ByteSpan buf, std::vector<Ea>& out);
// A FILE_GET_EA_INFORMATION list (QUERY_INFO's input buffer, MS-FSCC
// 2.4.15.1): the names asked for. EaListInconsistent / InvalidEaName as above.
NtStatus parse_get_ea_list(ByteSpan buf, std::vector<std::string>& out);
// One entry of a FILE_FULL_EA_INFORMATION list, without the padding after it.
size_t full_ea_entry_size(const Ea& ea);
// Appends EA to OUT, 4-aligning and linking after the entry at *PREVIOUS
// (SIZE_MAX: none yet); *PREVIOUS becomes this entry's offset.
void append_full_ea(Bytes& out, const Ea& ea, size_t* previous);
// The FILE_FULL_EA_INFORMATION list size of EAS (FileEaInformation's EaSize).
uint32_t full_ea_list_size(const std::vector<Ea>& eas);

// The file's EAs, ordered by name; none where the filesystem has no xattrs.
// FD may be an O_PATH descriptor.
Result<std::vector<Ea>> read_eas(int fd);
// The EaSize of the file behind FD (FileEaInformation, FileAllInformation,
// a directory entry): the size of its EA list, 0 when it has none or they
// cannot be read.
uint32_t ea_list_size(int fd);
// Applies CHANGES (an empty value removes that EA, if there is one) to the
// file's EAs: EaTooLarge when the result would exceed kMaxEaSetBytes or the
// filesystem's room. Not atomic across EAs: one that fails leaves the
// earlier ones of the list applied.
NtStatus write_eas(int fd, const std::vector<Ea>& changes);
// The xattr names (NUL-separated, as llistxattr gives them) of NAME in the
// directory DIRFD, not following a symlink; empty when there are none or
// they cannot be read.
std::string xattr_names_at(int dirfd, std::string_view name);
// The EaSize of NAME in DIRFD, whose xattr names are NAMES: one size probe
// (lgetxattr) for each of its EAs, nothing when it has none.
uint32_t ea_list_size_at(int dirfd, std::string_view name, std::string_view names);
// Folds NAME as EA names compare (ASCII upper case).
std::string fold_ea_name(std::string_view name);

}  // namespace ringsmb::vfs
