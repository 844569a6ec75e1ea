// Server-side copy (MS-SMB2 3.3.5.15.5, 3.3.5.15.6; MS-FSCC 2.3.8):
//
//  - FSCTL_SRV_REQUEST_RESUME_KEY names an open with a 24-byte key: its
//    persistent and volatile FileId and its SessionId. FileIds come from one
//    server-wide counter, so the key is unique on the server. The reply is
//    32 bytes (ResumeKey, ContextLength 0, 4 bytes of Context), the
//    OutputCount MS-SMB2 3.3.5.15.5 names and the layout Samba's client
//    parses.
//  - FSCTL_SRV_COPYCHUNK(_WRITE) copies chunks from the source open the key
//    names (on the same connection and session; any tree) into the target
//    open, with copy_file_range (the kernel copies, or reflinks where the
//    filesystem can), falling back to read/write where the kernel refuses
//    (overlapping ranges of one file, different filesystems). The limits of
//    3.3.3 are Windows' defaults (kMaxChunks, kMaxChunkSize, kMaxDataSize); a
//    request over them gets STATUS_INVALID_PARAMETER with the limits in the
//    reply (3.3.5.15.6.2). A copy runs on the worker thread: at most
//    kMaxDataSize per request.
//  - FSCTL_DUPLICATE_EXTENTS_TO_FILE clones the range with FICLONERANGE;
//    STATUS_NOT_SUPPORTED where the filesystem cannot share blocks.
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/fsctl/fsctl.hpp"
#include "smb2/fsctl/fsctl_copychunk.hpp"
#include "smb2/fruit/copyfile.hpp"
#include "smb2/files/frozen_times.hpp"
#include "smb2/leases/lease.hpp"
#include "state/lock_table.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr size_t kResumeKeySize = 24;
constexpr size_t kResumeKeyResponseSize = 32;    // ResumeKey, ContextLength, Context[4]
constexpr size_t kCopychunkResponseSize = 12;    // SRV_COPYCHUNK_RESPONSE
constexpr size_t kDuplicateExtentsDataSize = 40;  // DUPLICATE_EXTENTS_DATA (MS-FSCC 2.3.8)

// The open a resume key names: on this connection, in the session asking.
state::Open* open_by_resume_key(Request& req, ByteSpan key) {
  ByteReader r(key);
  uint64_t persistent = r.u64(), volatile_id = r.u64(), session_id = r.u64();
  if (!r.ok()) return nullptr;
  auto it = req.conn.tables->opens.find(volatile_id);
  if (it == req.conn.tables->opens.end()) return nullptr;
  state::Open* open = it->second.get();
  if (open->persistent_id != persistent || open->session_id != session_id) return nullptr;
  if (!req.session || open->session_id != req.session->session_id) return nullptr;
  return open;
}

// Copies `length` bytes in one buffer, so that overlapping ranges of one
// file copy as memmove would (a chunk is at most kMaxChunkSize).
NtStatus copy_through_buffer(int src, uint64_t src_off, int dst, uint64_t dst_off, uint32_t length) {
  std::vector<uint8_t> buf(length);
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(src, buf.data() + got, length - got, off_t(src_off + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return nt_status_from_errno(errno);
    if (n == 0) return NtStatus::InvalidViewSize;  // shrank meanwhile
    got += size_t(n);
  }
  for (size_t put = 0; put < length;) {
    ssize_t n = pwrite(dst, buf.data() + put, length - put, off_t(dst_off + put));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return nt_status_from_errno(errno);
    put += size_t(n);
  }
  return NtStatus::Success;
}

NtStatus copy_range(int src, uint64_t src_off, int dst, uint64_t dst_off, uint32_t length) {
  loff_t in = loff_t(src_off), out = loff_t(dst_off);
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = copy_file_range(src, &in, dst, &out, length - done, 0);
    if (n > 0) {
      done += uint64_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return NtStatus::InvalidViewSize;  // the source ended early
    if (errno == EINVAL || errno == EXDEV || errno == EOPNOTSUPP || errno == ENOSYS || errno == EBADF)
      return copy_through_buffer(src, src_off + done, dst, dst_off + done, uint32_t(length - done));
    return nt_status_from_errno(errno);
  }
  return NtStatus::Success;
}

// A chunk from or to a named stream (stream_io.hpp: the open's fd is its
// file's, the data is the stream's) goes through a buffer and the stream
// store; a chunk is at most kMaxChunkSize.
NtStatus copy_stream_range(const state::Open& src, uint64_t src_off, const state::Open& dst, uint64_t dst_off,
                           uint32_t length) {
  Bytes buf;
  if (src.stream) {
    auto data = vfs::read_stream_range(src.fd.get(), src.stream->key, src_off, length);
    if (!data) return data.error();
    buf = std::move(*data);
  } else {
    buf.resize(length);
    size_t got = 0;
    while (got < length) {
      ssize_t n = pread(src.fd.get(), buf.data() + got, length - got, off_t(src_off + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return nt_status_from_errno(errno);
      if (n == 0) break;
      got += size_t(n);
    }
    buf.resize(got);
  }
  if (buf.size() < length) return NtStatus::InvalidViewSize;  // the source ended early
  if (dst.stream) return vfs::write_stream_at(dst.fd.get(), dst.stream->key, dst_off, buf);
  for (size_t put = 0; put < buf.size();) {
    ssize_t n = pwrite(dst.fd.get(), buf.data() + put, buf.size() - put, off_t(dst_off + put));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return nt_status_from_errno(errno);
    put += size_t(n);
  }
  return NtStatus::Success;
}

// The size of what the open reads: its stream's, for a stream open.
Result<uint64_t> data_size(const state::Open& o) {
  if (o.stream) return vfs::stream_size(o.fd.get(), o.stream->key);
  struct stat st;
  if (fstat(o.fd.get(), &st) != 0) return Unexpected(nt_status_from_errno(errno));
  return uint64_t(st.st_size);
}

NtStatus check_access(Request& req, const state::Open& src, const state::Open& dst, bool write_only) {
  if (!(src.granted_access & (FILE_READ_DATA | FILE_EXECUTE))) return NtStatus::AccessDenied;
  if (NtStatus s = check_change(*req.tree, dst, Change::WriteData); s != NtStatus::Success) return s;
  if (!(dst.granted_access & FILE_WRITE_DATA)) return NtStatus::AccessDenied;
  // FSCTL_SRV_COPYCHUNK (unlike _WRITE) also needs read access to the target.
  if (!write_only && !(dst.granted_access & FILE_READ_DATA)) return NtStatus::AccessDenied;
  if (src.is_directory || dst.is_directory) return NtStatus::InvalidDeviceRequest;
  return NtStatus::Success;
}

NtStatus check_locks(Request& req, const state::Open& src, const state::Open& dst, const CopychunkRange& c) {
  if (src.node)
    if (NtStatus s = req.server.locks.check_io(src.node->device, src.node->inode, &src, c.source_offset, c.length, false);
        s != NtStatus::Success)
      return s;
  if (dst.node)
    return req.server.locks.check_io(dst.node->device, dst.node->inode, &dst, c.target_offset, c.length, true);
  return NtStatus::Success;
}

void write_copychunk_response(Bytes& out, uint32_t chunks, uint32_t chunk_bytes, uint32_t total) {
  ByteWriter w(out);
  w.u32(chunks);
  w.u32(chunk_bytes);
  w.u32(total);
}

NtStatus copy_chunks(Request& req, state::Open& src, state::Open& dst, const CopychunkCopy& copy, Bytes& out) {
  auto source_size = data_size(src);
  if (!source_size) return source_size.error();
  const uint64_t size = *source_size;
  break_read_caching(req.server, dst.node, &dst, req.conn);  // MS-FSA 2.1.5.3: writing the target
  uint32_t written = 0, total = 0;
  NtStatus status = NtStatus::Success;
  for (const CopychunkRange& c : copy.chunks) {
    if (c.source_offset > size || c.length > size - c.source_offset)
      status = NtStatus::InvalidViewSize;
    else if (c.target_offset > uint64_t(INT64_MAX) - c.length)
      status = NtStatus::InvalidParameter;
    else
      status = check_locks(req, src, dst, c);
    if (status == NtStatus::Success)
      status = src.stream || dst.stream
                   ? copy_stream_range(src, c.source_offset, dst, c.target_offset, c.length)
                   : copy_range(src.fd.get(), c.source_offset, dst.fd.get(), c.target_offset, c.length);
    if (status != NtStatus::Success) break;
    ++written;
    total += c.length;
    dst.note_end(c.target_offset + c.length);
  }
  restore_frozen_times(dst);
  // Also a failure says how far the copy got (the chunks before it stay
  // copied), as Windows answers; but INVALID_PARAMETER with a body would
  // read as the server's limits (3.3.5.15.6.2).
  write_copychunk_response(out, written, 0, total);
  req.error_keeps_body = status != NtStatus::Success && status != NtStatus::InvalidParameter;
  return status;
}

}  // namespace

std::optional<CopychunkCopy> parse_copychunk_copy(ByteSpan input) {
  ByteReader r(input);
  CopychunkCopy copy;
  ByteSpan key = r.bytes(kResumeKeySize);
  uint32_t count = r.u32();
  r.u32();  // Reserved
  if (!r.ok()) return std::nullopt;
  std::copy(key.begin(), key.end(), copy.source_key.begin());
  copy.chunk_count = count;
  if (count > kMaxChunks || input.size() - r.offset() < size_t(count) * kCopychunkRangeSize) return copy;
  copy.chunks.resize(count);
  for (CopychunkRange& c : copy.chunks) {
    c.source_offset = r.u64();
    c.target_offset = r.u64();
    c.length = r.u32();
    r.u32();  // Reserved
  }
  copy.complete = r.ok();
  return copy;
}

bool copychunk_within_limits(const CopychunkCopy& copy) {
  if (!copy.complete || copy.chunk_count > kMaxChunks) return false;
  uint64_t sum = 0;
  for (const CopychunkRange& c : copy.chunks) {
    if (c.length == 0 || c.length > kMaxChunkSize) return false;
    sum += c.length;
  }
  return sum <= kMaxDataSize;
}

NtStatus fsctl_request_resume_key(FsctlCall& call) {
  if (call.q.max_output_response < kResumeKeyResponseSize) return NtStatus::InvalidParameter;
  ByteWriter w(call.out);
  w.u64(call.open->persistent_id);
  w.u64(call.open->volatile_id);
  w.u64(call.open->session_id);
  w.u32(0);  // ContextLength
  w.u32(0);  // Context: reserved
  return NtStatus::Success;
}

NtStatus fsctl_copychunk(FsctlCall& call) {
  Request& req = call.req;
  auto copy = parse_copychunk_copy(call.q.input);
  if (!copy) return NtStatus::InvalidParameter;
  state::Open* src = open_by_resume_key(req, copy->source_key);
  if (!src) return NtStatus::ObjectNameNotFound;
  if (call.q.max_output_response < kCopychunkResponseSize) return NtStatus::InvalidParameter;
  if (!copychunk_within_limits(*copy)) {
    // 3.3.5.15.6.2: the reply says what the server accepts.
    write_copychunk_response(call.out, kMaxChunks, kMaxChunkSize, kMaxDataSize);
    req.error_keeps_body = true;
    return NtStatus::InvalidParameter;
  }
  state::Open& dst = *call.open;
  bool write_only = call.q.ctl_code == FSCTL_SRV_COPYCHUNK_WRITE;
  if (NtStatus s = check_access(req, *src, dst, write_only); s != NtStatus::Success) return s;
  if (fruit::is_copyfile(req, copy->chunk_count, *src, dst)) return fruit::copyfile(*src, dst, call.out);
  return copy_chunks(req, *src, dst, *copy, call.out);
}

NtStatus fsctl_duplicate_extents(FsctlCall& call) {
  Request& req = call.req;
  ByteReader r(call.q.input);
  FileId src_id{r.u64(), r.u64()};
  uint64_t src_off = r.u64(), dst_off = r.u64(), count = r.u64();
  if (!r.ok() || call.q.input.size() < kDuplicateExtentsDataSize) return NtStatus::InvalidParameter;
  auto it = req.conn.tables->opens.find(src_id.volatile_id);
  if (it == req.conn.tables->opens.end() || it->second->persistent_id != src_id.persistent ||
      it->second->session_id != call.open->session_id)
    return NtStatus::InvalidHandle;
  state::Open& src = *it->second;
  state::Open& dst = *call.open;
  if (NtStatus s = check_access(req, src, dst, true); s != NtStatus::Success) return s;
  if (count == 0) return NtStatus::Success;
  if (src_off > uint64_t(INT64_MAX) - count || dst_off > uint64_t(INT64_MAX) - count)
    return NtStatus::InvalidParameter;
  struct file_clone_range range{};
  range.src_fd = src.fd.get();
  range.src_offset = src_off;
  range.src_length = count;
  range.dest_offset = dst_off;
  if (ioctl(dst.fd.get(), FICLONERANGE, &range) == 0) return NtStatus::Success;
  if (errno == EOPNOTSUPP || errno == ENOTTY || errno == EXDEV || errno == ENOSYS) return NtStatus::NotSupported;
  return nt_status_from_errno(errno);
}

}  // namespace ringsmb::smb2
