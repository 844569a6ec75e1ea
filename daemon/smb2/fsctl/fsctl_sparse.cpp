// Sparse files and ranges (MS-FSCC 2.3.33, 2.3.34, 2.3.64, 2.3.67, 2.3.73;
// MS-FSA 2.1.5.10.22, 2.1.5.10.33, 2.1.5.10.36, 2.1.5.10.39):
//
//  - FSCTL_SET_SPARSE: every Linux file may have holes; the flag itself
//    (FILE_ATTRIBUTE_SPARSE_FILE) is kept in the file's server-private
//    metadata (vfs/file_meta.hpp).
//  - FSCTL_SET_ZERO_DATA: on a sparse file, the whole 64 KiB units inside
//    the range are deallocated (fallocate PUNCH_HOLE) and the partial units
//    at its ends zeroed in place, as NTFS deallocates sparse files in
//    compression units; on another file the range is zeroed and stays
//    allocated (ZERO_RANGE). Never beyond EOF.
//  - FSCTL_QUERY_ALLOCATED_RANGES: SEEK_DATA / SEEK_HOLE within the range
//    asked for, clipped to EOF, for a sparse file; a file not marked sparse
//    is one range, as NTFS reports it.
//  - FSCTL_FILE_LEVEL_TRIM: the ranges are punched out (their data is no
//    longer needed, zeros are a valid content); a filesystem that cannot
//    punch holes processes none of them.
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/files/frozen_times.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/fsctl/fsctl.hpp"
#include "smb2/fsctl/fsctl_ranges.hpp"
#include "state/lock_table.hpp"
#include "vfs/file_info.hpp"
#include "vfs/file_meta.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr size_t kZeroDataInfoSize = 16;     // FILE_ZERO_DATA_INFORMATION
constexpr size_t kAllocatedRangeSize = 16;   // FILE_ALLOCATED_RANGE_BUFFER
constexpr size_t kTrimHeaderSize = 8;        // FILE_LEVEL_TRIM: Key, NumRanges
constexpr size_t kTrimRangeSize = 16;        // FILE_LEVEL_TRIM_RANGE
constexpr uint32_t kMaxTrimRanges = 4096;

constexpr uint64_t kSparseUnit = 64 * 1024;  // NTFS's compression unit with 4 KiB clusters

bool marked_sparse(const state::Open& open) { return vfs::read_file_meta(open.fd.get()).sparse; }

// Zeroes [offset, offset + length) with `first_mode`, falling back to the
// other fallocate mode and then to writing zeros.
int zero_range(int fd, int first_mode, uint64_t offset, uint64_t length) {
  if (length == 0) return 0;
  int second_mode = first_mode == FALLOC_FL_PUNCH_HOLE ? FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE;
  for (int mode : {first_mode, second_mode})
    if (fallocate(fd, mode | FALLOC_FL_KEEP_SIZE, off_t(offset), off_t(length)) == 0) return 0;
    else if (errno != EOPNOTSUPP && errno != ENOSYS) return errno;
  // Neither: write the zeros.
  static const std::vector<uint8_t> zeros(64 * 1024);
  for (uint64_t done = 0; done < length;) {
    size_t n = size_t(std::min<uint64_t>(zeros.size(), length - done));
    ssize_t w = pwrite(fd, zeros.data(), n, off_t(offset + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    done += uint64_t(w);
  }
  return 0;
}

// `end` is at most `size`; a range that reaches EOF frees its last, partial
// unit too (nothing follows it that the unit would still hold).
int zero_sparse_range(int fd, uint64_t offset, uint64_t end, uint64_t size) {
  uint64_t first_unit = (offset + kSparseUnit - 1) / kSparseUnit * kSparseUnit;
  uint64_t last_unit = end >= size ? end : end / kSparseUnit * kSparseUnit;
  if (first_unit >= last_unit) return zero_range(fd, FALLOC_FL_ZERO_RANGE, offset, end - offset);
  if (int err = zero_range(fd, FALLOC_FL_ZERO_RANGE, offset, first_unit - offset)) return err;
  if (int err = zero_range(fd, FALLOC_FL_PUNCH_HOLE, first_unit, last_unit - first_unit)) return err;
  return zero_range(fd, FALLOC_FL_ZERO_RANGE, last_unit, end - last_unit);
}

}  // namespace

std::vector<ByteRange64> allocated_ranges(int fd, uint64_t offset, uint64_t length, uint64_t size) {
  std::vector<ByteRange64> out;
  uint64_t end = std::min(size, offset + length < offset ? UINT64_MAX : offset + length);
  for (uint64_t pos = offset; pos < end;) {
    off_t data = lseek(fd, off_t(pos), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // no data after pos
      out.push_back({pos, end - pos});  // SEEK_DATA unsupported: all of it is data
      break;
    }
    if (uint64_t(data) >= end) break;
    off_t hole = lseek(fd, data, SEEK_HOLE);
    uint64_t stop = hole < 0 ? end : std::min(end, uint64_t(hole));
    out.push_back({uint64_t(data), stop - uint64_t(data)});
    pos = stop;
  }
  return out;
}

NtStatus fsctl_set_sparse(FsctlCall& call) {
  state::Open& open = *call.open;
  if (open.is_directory) return NtStatus::InvalidParameter;
  if (NtStatus s = check_change(*call.req.tree, open, Change::Sparse); s != NtStatus::Success) return s;
  // FILE_SET_SPARSE_BUFFER is optional: no buffer means "set".
  bool sparse = call.q.input.empty() || call.q.input[0] != 0;
  vfs::FileMeta meta = stored_meta(open);
  if (meta.sparse == sparse) return NtStatus::Success;
  meta.sparse = sparse;
  if (int err = write_stored_meta(open, meta)) return nt_status_from_errno(err);
  return NtStatus::Success;
}

NtStatus fsctl_set_zero_data(FsctlCall& call) {
  state::Open& open = *call.open;
  if (call.q.input.size() < kZeroDataInfoSize) return NtStatus::InvalidParameter;
  ByteReader r(call.q.input);
  int64_t offset = int64_t(r.u64()), beyond = int64_t(r.u64());
  if (offset < 0 || beyond < 0 || offset > beyond) return NtStatus::InvalidParameter;
  if (open.is_directory) return NtStatus::InvalidDeviceRequest;
  if (NtStatus s = check_change(*call.req.tree, open, Change::WriteData); s != NtStatus::Success) return s;
  if (!(open.granted_access & FILE_WRITE_DATA)) return NtStatus::AccessDenied;
  struct stat st;
  if (fstat(open.fd.get(), &st) != 0) return nt_status_from_errno(errno);
  uint64_t end = std::min<uint64_t>(uint64_t(beyond), uint64_t(st.st_size));  // never extends the file
  if (uint64_t(offset) >= end) return NtStatus::Success;
  uint64_t length = end - uint64_t(offset);
  if (open.node)
    if (NtStatus s = call.req.server.locks.check_io(open.node->device, open.node->inode, &open, uint64_t(offset),
                                                    length, true);
        s != NtStatus::Success)
      return s;
  int err = marked_sparse(open) ? zero_sparse_range(open.fd.get(), uint64_t(offset), end, uint64_t(st.st_size))
                                : zero_range(open.fd.get(), FALLOC_FL_ZERO_RANGE, uint64_t(offset), length);
  if (err) return nt_status_from_errno(err);
  restore_frozen_times(open);
  return NtStatus::Success;
}

NtStatus fsctl_query_allocated_ranges(FsctlCall& call) {
  state::Open& open = *call.open;
  if (call.q.input.size() < kAllocatedRangeSize) return NtStatus::InvalidParameter;
  ByteReader r(call.q.input);
  int64_t offset = int64_t(r.u64()), length = int64_t(r.u64());
  if (offset < 0 || length < 0 || offset > INT64_MAX - length) return NtStatus::InvalidParameter;
  if (open.is_directory) return NtStatus::InvalidParameter;
  if (!(open.granted_access & FILE_READ_DATA)) return NtStatus::AccessDenied;
  struct stat st;
  if (fstat(open.fd.get(), &st) != 0) return nt_status_from_errno(errno);
  std::vector<ByteRange64> ranges;
  if (marked_sparse(open)) {
    ranges = allocated_ranges(open.fd.get(), uint64_t(offset), uint64_t(length), uint64_t(st.st_size));
  } else if (uint64_t(offset) < uint64_t(st.st_size) && length > 0) {
    ranges.push_back({uint64_t(offset), std::min<uint64_t>(uint64_t(length), uint64_t(st.st_size) - offset)});
  }
  ByteWriter w(call.out);
  size_t room = call.q.max_output_response / kAllocatedRangeSize;
  // MS-FSA 2.1.5.10.22: no room for even one range that exists is
  // BUFFER_TOO_SMALL; no range needs no room.
  if (room == 0 && !ranges.empty()) return NtStatus::BufferTooSmall;
  for (size_t i = 0; i < ranges.size() && i < room; ++i) {
    w.u64(ranges[i].offset);
    w.u64(ranges[i].length);
  }
  return ranges.size() > room ? NtStatus::BufferOverflow : NtStatus::Success;
}

NtStatus fsctl_file_level_trim(FsctlCall& call) {
  state::Open& open = *call.open;
  ByteReader r(call.q.input);
  r.u32();  // Key: reserved
  uint32_t count = r.u32();
  if (!r.ok() || count > kMaxTrimRanges || call.q.input.size() < kTrimHeaderSize + size_t(count) * kTrimRangeSize)
    return NtStatus::InvalidParameter;
  if (call.q.max_output_response < 4) return NtStatus::BufferTooSmall;
  if (open.is_directory) return NtStatus::InvalidParameter;
  if (NtStatus s = check_change(*call.req.tree, open, Change::WriteData); s != NtStatus::Success) return s;
  if (!(open.granted_access & FILE_WRITE_DATA)) return NtStatus::AccessDenied;
  uint32_t processed = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t offset = r.u64(), length = r.u64();
    if (offset > uint64_t(INT64_MAX) || length > uint64_t(INT64_MAX) - offset) return NtStatus::InvalidParameter;
    if (length && fallocate(open.fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(offset),
                            off_t(length)) != 0) {
      if (errno == EOPNOTSUPP || errno == ENOSYS) break;
      return nt_status_from_errno(errno);
    }
    ++processed;
  }
  ByteWriter w(call.out);
  w.u32(processed);  // FILE_LEVEL_TRIM_OUTPUT.NumRangesProcessed
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
