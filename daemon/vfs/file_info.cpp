// statx -> FileStat, and the MS-FSCC 2.4 file information encoders.
#include "vfs/file_info.hpp"

#include <fcntl.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::vfs {
namespace {

// Seconds between 1601-01-01 and 1970-01-01.
constexpr int64_t kFiletimeEpochOffset = 11644473600;
constexpr uint64_t kTicksPerSecond = 10'000'000;
constexpr uint32_t kNsPerTick = 100;
// Windows reports allocation in whole clusters; 4 KiB is NTFS's default.
constexpr uint64_t kAllocationUnit = 4096;
constexpr uint64_t kStatBlockSize = 512;  // st_blocks unit
constexpr unsigned kStatxMask = STATX_BASIC_STATS | STATX_BTIME;

// MS-FSCC 2.4.3: byte alignment is what every Linux file gets.
constexpr uint32_t FILE_BYTE_ALIGNMENT = 0;
// The one stream every file has (MS-FSCC 2.4.49).
constexpr std::string_view kDefaultStreamName = "::$DATA";

uint64_t statx_filetime(const struct statx_timestamp& t) { return unix_to_filetime(t.tv_sec, t.tv_nsec); }

uint64_t round_up(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

uint32_t attributes_or_normal(const FileStat& st) {
  return st.attributes ? st.attributes : FILE_ATTRIBUTE_NORMAL;
}

void put_basic(ByteWriter& w, const FileStat& st) {
  w.u64(st.creation_time);
  w.u64(st.last_access_time);
  w.u64(st.last_write_time);
  w.u64(st.change_time);
  w.u32(attributes_or_normal(st));
  w.u32(0);  // Reserved
}

void put_standard(ByteWriter& w, const FileStat& st, const OpenInfo& open) {
  w.u64(st.allocation_size);
  w.u64(st.end_of_file);
  const uint32_t links = open.link_deleted && st.nlink > 0 ? st.nlink - 1 : st.nlink;
  w.u32(links);
  w.u8(open.delete_pending || links == 0 ? 1 : 0);
  w.u8(st.is_directory ? 1 : 0);
  w.u16(0);  // Reserved
}

// FILE_NAME_INFORMATION (MS-FSCC 2.4.32): length-prefixed UTF-16 name.
void put_name(ByteWriter& w, std::string_view name_utf8) {
  const Bytes name = utf8_to_utf16le(name_utf8);
  w.u32(static_cast<uint32_t>(name.size()));
  w.bytes(name);
}

// FileNameInformation carries the path from the share root with a leading
// '\' (what Windows servers return); the root itself is "\".
std::string rooted_name(std::string_view name) {
  std::string s = "\\";
  if (name.starts_with('\\')) name.remove_prefix(1);
  s.append(name);
  return s;
}

// FileNormalizedNameInformation: the same path without the leading '\'.
std::string_view unrooted_name(std::string_view name) {
  if (name.starts_with('\\')) name.remove_prefix(1);
  return name;
}

void put_all(ByteWriter& w, const FileStat& st, const OpenInfo& open) {
  put_basic(w, st);
  put_standard(w, st, open);
  w.u64(st.file_id);          // InternalInformation
  w.u32(open.ea_size);        // EaInformation
  w.u32(open.access_mask);    // AccessInformation
  w.u64(open.position);       // PositionInformation
  w.u32(open.mode_flags);     // ModeInformation
  w.u32(FILE_BYTE_ALIGNMENT); // AlignmentInformation
  put_name(w, rooted_name(open.name));
}

void put_network_open(ByteWriter& w, const FileStat& st) {
  put_network_open_times(w, st);
  w.u32(attributes_or_normal(st));
  w.u32(0);  // Reserved
}

// FILE_STREAM_INFORMATION: files have exactly the unnamed data stream;
// directories have no data stream, so the list is empty.
void put_streams(ByteWriter& w, const FileStat& st) {
  if (st.is_directory) return;
  const Bytes name = utf8_to_utf16le(kDefaultStreamName);
  w.u32(0);  // NextEntryOffset: last entry
  w.u32(static_cast<uint32_t>(name.size()));
  w.u64(st.end_of_file);
  w.u64(st.allocation_size);
  w.bytes(name);
}

void put_compression(ByteWriter& w, const FileStat& st) {
  w.u64(st.end_of_file);  // CompressedFileSize: not compressed
  w.u16(0);               // COMPRESSION_FORMAT_NONE
  w.u8(0);                // CompressionUnitShift
  w.u8(0);                // ChunkShift
  w.u8(0);                // ClusterShift
  w.zeros(3);             // Reserved
}

}  // namespace

// One append of the 48 bytes: every CREATE and CLOSE writes them, and six
// ByteWriter::u64 calls grow the vector six times (98 instructions each).
void put_network_open_times(ByteWriter& w, const FileStat& st) {
  const uint64_t fields[] = {st.creation_time, st.last_access_time, st.last_write_time,
                             st.change_time,   st.allocation_size,  st.end_of_file};
  uint8_t b[sizeof fields];
  for (size_t i = 0; i < std::size(fields); ++i) store_le64(b + 8 * i, fields[i]);  // one 8-byte store each
  w.bytes(b, sizeof b);
}

uint64_t unix_to_filetime(int64_t sec, uint32_t nsec) {
  if (sec < -kFiletimeEpochOffset) return 0;  // before 1601: not representable
  constexpr int64_t kMaxSec =
      int64_t(uint64_t(std::numeric_limits<int64_t>::max()) / kTicksPerSecond) - kFiletimeEpochOffset - 1;
  if (sec > kMaxSec) return uint64_t(std::numeric_limits<int64_t>::max());
  return uint64_t(sec + kFiletimeEpochOffset) * kTicksPerSecond + nsec / kNsPerTick;
}

struct timespec filetime_to_timespec(uint64_t filetime) {
  struct timespec ts = {};
  ts.tv_sec = static_cast<time_t>(int64_t(filetime / kTicksPerSecond) - kFiletimeEpochOffset);
  ts.tv_nsec = static_cast<long>((filetime % kTicksPerSecond) * kNsPerTick);
  return ts;
}

FileStat file_stat_from_statx(const struct statx& stx) {
  FileStat st;
  st.last_access_time = statx_filetime(stx.stx_atime);
  st.last_write_time = statx_filetime(stx.stx_mtime);
  st.change_time = statx_filetime(stx.stx_ctime);
  // Without a birth time the best guess is the oldest timestamp we have.
  st.creation_time = (stx.stx_mask & STATX_BTIME) ? statx_filetime(stx.stx_btime)
                                                  : std::min(st.last_write_time, st.change_time);
  st.mode = stx.stx_mode;
  st.is_directory = S_ISDIR(stx.stx_mode);
  // NTFS reports size and allocation 0 for directories; clients show them so.
  if (!st.is_directory) {
    st.end_of_file = stx.stx_size;
    st.allocation_size = round_up(stx.stx_blocks * kStatBlockSize, kAllocationUnit);
  }
  st.file_id = stx.stx_ino;
  st.device = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st.nlink = stx.stx_nlink;
  st.uid = stx.stx_uid;
  st.gid = stx.stx_gid;
  st.attributes = dos_attributes(st, {}, false);
  return st;
}

Result<FileStat> stat_fd(int fd) {
  struct statx stx = {};
  if (statx(fd, "", AT_EMPTY_PATH, kStatxMask, &stx) != 0) {
    return Unexpected(nt_status_from_errno(errno));
  }
  return file_stat_from_statx(stx);
}

Result<FileStat> stat_at(int dirfd, const char* name) {
  struct statx stx = {};
  if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, kStatxMask, &stx) != 0) {
    return Unexpected(nt_status_from_errno(errno));
  }
  return file_stat_from_statx(stx);
}

uint32_t reparse_tag(const FileStat& st) { return S_ISLNK(st.mode) ? IO_REPARSE_TAG_SYMLINK : 0; }

uint32_t dos_attributes(const FileStat& st, std::string_view name, bool hide_dot_files) {
  uint32_t attrs = 0;
  if (st.is_directory) attrs |= FILE_ATTRIBUTE_DIRECTORY;
  if (S_ISREG(st.mode)) attrs |= FILE_ATTRIBUTE_ARCHIVE;
  if (S_ISLNK(st.mode)) attrs |= FILE_ATTRIBUTE_REPARSE_POINT;  // a symbolic link (MS-FSCC 2.1.2.4)
  // READONLY on a Windows directory does not stop writes inside it (Explorer
  // uses it to mark customised folders), so only files get it.
  if (!st.is_directory && !(st.mode & S_IWUSR)) attrs |= FILE_ATTRIBUTE_READONLY;
  if (hide_dot_files) {
    const size_t sep = name.find_last_of("/\\");
    const std::string_view leaf = sep == std::string_view::npos ? name : name.substr(sep + 1);
    if (leaf.starts_with('.') && leaf != "." && leaf != "..") attrs |= FILE_ATTRIBUTE_HIDDEN;
  }
  return attrs ? attrs : FILE_ATTRIBUTE_NORMAL;
}

NtStatus encode_file_info(FileInfoClass cls, const FileStat& st, const OpenInfo& open, Bytes& out) {
  ByteWriter w(out);
  switch (cls) {
    case FileInfoClass::Basic: put_basic(w, st); break;
    case FileInfoClass::Standard: put_standard(w, st, open); break;
    case FileInfoClass::Internal: w.u64(st.file_id); break;
    case FileInfoClass::Ea: w.u32(open.ea_size); break;
    case FileInfoClass::Access: w.u32(open.access_mask); break;
    case FileInfoClass::Position: w.u64(open.position); break;
    case FileInfoClass::Mode: w.u32(open.mode_flags); break;
    case FileInfoClass::Alignment: w.u32(FILE_BYTE_ALIGNMENT); break;
    case FileInfoClass::All: put_all(w, st, open); break;
    case FileInfoClass::Name: put_name(w, rooted_name(open.name)); break;
    case FileInfoClass::NormalizedName: put_name(w, unrooted_name(open.name)); break;
    case FileInfoClass::NetworkOpen: put_network_open(w, st); break;
    case FileInfoClass::AttributeTag:
      w.u32(attributes_or_normal(st));
      w.u32(reparse_tag(st));
      break;
    case FileInfoClass::Stream: put_streams(w, st); break;
    case FileInfoClass::Compression: put_compression(w, st); break;
    // vfs::alternate_name: the generated 8.3 name, or the name itself when
    // it is one (MS-FSCC 2.4.5 allows OBJECT_NAME_NOT_FOUND then, but
    // clients such as smbclient's allinfo report an error for every such
    // file, and smb2.mangle opens a file by the name it is told).
    case FileInfoClass::AlternateName: put_name(w, open.short_name); break;
    default: return NtStatus::InvalidInfoClass;
  }
  return NtStatus::Success;
}

}  // namespace ringsmb::vfs
