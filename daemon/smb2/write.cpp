// SMB2 WRITE (MS-SMB2 2.2.21, 2.2.22, 3.3.5.13).
#include <sys/stat.h>
#include <unistd.h>

#include "smb2/access.hpp"
#include "smb2/access_check.hpp"
#include "smb2/delayed_write_time.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/frozen_times.hpp"
#include "smb2/negotiated_sizes.hpp"
#include "smb2/lease.hpp"
#include "smb2/pipe_io.hpp"
#include "smb2/stream_io.hpp"
#include "state/lock_table.hpp"

namespace ringsmb::smb2 {
namespace {
enum : uint32_t { SMB2_WRITEFLAG_WRITE_THROUGH = 0x1 };
constexpr uint64_t kAppendOffset = 0xFFFFFFFFFFFFFFFFull;
}  // namespace

NtStatus handle_write(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t data_offset = r.u16();
  uint32_t length = r.u32();
  uint64_t offset = r.u64();
  r.skip(16);  // FileId: Request::open_file()
  r.skip(12);  // Channel, RemainingBytes, WriteChannelInfoOffset/Length
  uint32_t flags = r.u32();
  ByteSpan data;
  if (!r.ok() || !buffer_at(req, data_offset, length, data)) return NtStatus::InvalidParameter;
  state::Open* open = req.open_file();
  if (!open) return NtStatus::FileClosed;
  if (length > negotiated_sizes(req.conn, req.server).max_write) return NtStatus::InvalidParameter;
  if (open->is_directory) return NtStatus::InvalidDeviceRequest;
  bool append_only = !(open->granted_access & FILE_WRITE_DATA) && (open->granted_access & FILE_APPEND_DATA);
  if (NtStatus s = check_change(*req.tree, *open, Change::WriteData); s != NtStatus::Success) return s;
  if (find_pipe(req.conn, *open)) return write_pipe(req, *open, data, w);  // Offset means nothing on a pipe
  if (open->stream) {
    if (open->node && open->node->lease_count.load(std::memory_order_relaxed))
      post_breaks(req.server, req.server.files.break_readers(open->node, open, monotonic_ms(),
                                                             req.server.lease_break_timeout_ms));
    return write_stream(req, *open, offset, data, offset == kAppendOffset || append_only, w);
  }
  if (offset == kAppendOffset || append_only) {
    struct stat st;
    if (fstat(open->fd.get(), &st) != 0) return nt_status_from_errno(errno);
    offset = uint64_t(st.st_size);
  }
  if (offset > uint64_t(INT64_MAX) - length) return NtStatus::InvalidParameter;
  if (open->node) {
    NtStatus st = req.server.locks.check_io(open->node->device, open->node->inode, open, offset, length, true);
    if (st != NtStatus::Success) return st;
  }
  // MS-FSA 2.1.5.3: a write ends the read caching of the file's other
  // opens (level II oplocks, R leases). One atomic load when none is held.
  if (open->node && open->node->lease_count.load(std::memory_order_relaxed))
    post_breaks(req.server, req.server.files.break_readers(open->node, open, monotonic_ms(),
                                                           req.server.lease_break_timeout_ms));
  note_write(*open);  // one clock read, for a handle's first writes
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = pwrite(open->fd.get(), data.data() + done, data.size() - done, off_t(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return nt_status_from_errno(errno);
    }
    done += size_t(n);
  }
  restore_frozen_times(*open);  // a branch, unless LastWriteTime was frozen (-1)
  if (flags & SMB2_WRITEFLAG_WRITE_THROUGH) fdatasync(open->fd.get());
  open->position = offset + done;
  open->entry_changed = true;
  w.u16(17);
  w.u16(0);
  w.u32(uint32_t(done));
  w.u32(0);
  w.u16(0);
  w.u16(0);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
