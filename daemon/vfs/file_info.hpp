// What SMB needs to know about a file, derived from statx, and the encoders
// for the MS-FSCC information classes (file, directory and filesystem).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "wire/fscc.hpp"

namespace ringsmb::vfs {

// MS-FSCC 2.6 file attributes.
enum : uint32_t {
  FILE_ATTRIBUTE_READONLY = 0x1,
  FILE_ATTRIBUTE_HIDDEN = 0x2,
  FILE_ATTRIBUTE_SYSTEM = 0x4,
  FILE_ATTRIBUTE_DIRECTORY = 0x10,
  FILE_ATTRIBUTE_ARCHIVE = 0x20,
  FILE_ATTRIBUTE_NORMAL = 0x80,
  FILE_ATTRIBUTE_SPARSE_FILE = 0x200,
  FILE_ATTRIBUTE_REPARSE_POINT = 0x400,
};

// 100 ns intervals since 1601-01-01 (MS-DTYP FILETIME).
uint64_t unix_to_filetime(int64_t sec, uint32_t nsec);
struct timespec filetime_to_timespec(uint64_t filetime);

struct FileStat {
  uint64_t creation_time = 0;     // statx btime when the filesystem has it, else the older of mtime/ctime
  uint64_t last_access_time = 0;
  uint64_t last_write_time = 0;
  uint64_t change_time = 0;
  uint64_t end_of_file = 0;
  uint64_t allocation_size = 0;   // blocks * 512, rounded as Windows expects
  uint32_t attributes = 0;        // derived from the mode (see dos_attributes)
  uint64_t file_id = 0;           // inode number
  uint64_t device = 0;
  uint32_t nlink = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool is_directory = false;
};

// statx(fd, "", AT_EMPTY_PATH) -> FileStat. errno on failure.
Result<FileStat> stat_fd(int fd);
// statx relative to a directory fd, not following a final symlink.
Result<FileStat> stat_at(int dirfd, const char* name);
FileStat file_stat_from_statx(const struct statx& stx);

// DOS attributes that follow from the mode: DIRECTORY, READONLY when no
// write bit is set for the owner, ARCHIVE for regular files; HIDDEN for dot
// files when `hide_dot_files`. NORMAL only when nothing else applies.
uint32_t dos_attributes(const FileStat& st, std::string_view name, bool hide_dot_files);

// The reparse tag a file reports: IO_REPARSE_TAG_SYMLINK for a symbolic
// link (FILE_ATTRIBUTE_REPARSE_POINT is then set), 0 for every other file.
inline constexpr uint32_t IO_REPARSE_TAG_SYMLINK = 0xA000000C;  // MS-FSCC 2.1.2.1
uint32_t reparse_tag(const FileStat& st);

using wire::FileInfoClass;  // wire/fscc.hpp

// Per-open state the file-info encoders need beyond the stat.
struct OpenInfo {
  uint32_t access_mask = 0;     // granted access (FileAccessInformation)
  uint64_t position = 0;        // FilePositionInformation
  uint32_t mode_flags = 0;      // FileModeInformation (create options subset)
  bool delete_pending = false;  // FileStandardInformation
  // The open's name is to go at its last close (not a stream's delete):
  // NumberOfLinks counts the links not marked for deletion (MS-FSA
  // 2.1.5.12.27).
  bool link_deleted = false;
  std::string_view name;        // path of the open relative to the share, '\' separated, UTF-8
  std::string_view short_name;  // the 8.3 name of its last component (vfs/short_names.hpp); may be empty
  uint32_t ea_size = 0;         // FileEaInformation: size of the FILE_FULL_EA_INFORMATION list (vfs/ea_store.hpp)
};

// The times and sizes FILE_NETWORK_OPEN_INFORMATION starts with (MS-FSCC
// 2.4.29): CreationTime, LastAccessTime, LastWriteTime, ChangeTime,
// AllocationSize, EndOfFile. The CREATE and CLOSE responses carry the
// same fields (MS-SMB2 2.2.14, 2.2.16), then attributes of their own.
void put_network_open_times(ByteWriter& w, const FileStat& st);

// Appends the encoding of `cls` to `out`. Returns InvalidInfoClass for
// classes not supported, NotSupported where MS-FSCC says so.
NtStatus encode_file_info(FileInfoClass cls, const FileStat& st, const OpenInfo& open, Bytes& out);

using wire::FsInfoClass;  // wire/fscc.hpp
struct VolumeInfo {
  uint64_t creation_time = 0;
  uint32_t serial_number = 0;
  std::string label;  // the share name
  std::string fs_name = "NTFS";
  bool case_sensitive = false;
  bool named_streams = false;  // FILE_NAMED_STREAMS
  bool extended_attributes = false;  // FILE_SUPPORTS_EXTENDED_ATTRIBUTES (vfs/ea_store.hpp)
};
// statfs of `fd` gives sizes.
NtStatus encode_fs_info(FsInfoClass cls, int fd, const VolumeInfo& vol, Bytes& out);

// The device (FileStat::device) of FD's filesystem when it keeps its files
// in memory only (tmpfs, ramfs): fsync has nothing to write there and
// returns at once. 0 for any other filesystem.
uint64_t memory_filesystem_device(int fd);

// A self-relative security descriptor (MS-DTYP 2.4.6) for owner `uid`, group
// `gid` and the mode bits: owner/group SIDs as S-1-22-1-uid / S-1-22-2-gid
// (Samba's Unix-user mapping), a DACL granting owner, group and Everyone the
// rights that follow from the mode. `additional_info` (OWNER, GROUP, DACL,
// SACL bits) selects what is included.
Bytes build_security_descriptor(const FileStat& st, uint32_t additional_info);

}  // namespace ringsmb::vfs
