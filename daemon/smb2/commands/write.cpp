// SMB2 WRITE (MS-SMB2 2.2.21, 2.2.22, 3.3.5.13). Large WRITEs run their
// pwrite on the blocking pool (smb2/engine/async_write.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/async_write.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/files/frozen_times.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/engine/metrics.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/streams/stream_io.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "state/lock_table.hpp"
#include "vfs/fd_io.hpp"

namespace ringsmb::smb2 {
namespace {
enum : uint32_t { SMB2_WRITEFLAG_WRITE_THROUGH = 0x1 };

// As for FLUSH: most large pwrites take well under this, and then the
// WRITE gets one ordinary response, no interim.
constexpr int64_t kInterimDelayMs = 5;

// A handle that may append but not write data writes at the end of the
// file, wherever the request points. An Offset of 0xFFFFFFFFFFFFFFFF
// (MS-FSA's FILE_WRITE_TO_END_OF_FILE) means nothing special over SMB2:
// Windows answers it INVALID_PARAMETER, as any offset past INT64_MAX
// (smb2.rw.invalid).
bool appends(const state::Open& open) {
  return !(open.granted_access & FILE_WRITE_DATA) && (open.granted_access & FILE_APPEND_DATA);
}

// The WRITE response body (2.2.22).
void write_response(ByteWriter& w, uint32_t count) {
  w.u16(17);
  w.u16(0);
  w.u32(count);
  w.u32(0);
  w.u16(0);
  w.u16(0);
}

// What the open learns of a write that is done: its position, that its
// entry changed, and a frozen LastWriteTime put back.
void after_write(state::Open& open, uint64_t end) {
  restore_frozen_times(open);  // a branch, unless LastWriteTime was frozen (-1)
  open.position = end;
  open.entry_changed = true;
  open.note_end(end);
}

// A system call on the pool cannot be stopped: CANCEL, CLOSE, tree
// disconnect and logoff leave it to complete (behind a WRITE they are held
// anyway), and a lost connection drops the posted answer.
NtStatus keep_running(ServerContext&, ConnState&, WaitingRequest&, WithdrawReason) { return NtStatus::Pending; }

// The bytes of DATA kept alive past the frame: the frame's own buffer when
// its owner hands it over (no copy), else a copy. DATA is pointed at them.
std::shared_ptr<const void> keep_payload(ConnState& conn, ByteSpan& data) {
  if (conn.frame_owner)
    if (auto kept = conn.frame_owner->keep(data)) return kept;
  auto copy = std::make_unique_for_overwrite<uint8_t[]>(data.size());
  std::memcpy(copy.get(), data.data(), data.size());
  data = ByteSpan(copy.get(), data.size());
  return std::shared_ptr<const void>(std::move(copy));
}

// The worker's side of a pwrite that is done (posted by the pool thread).
struct WriteDone {
  uint64_t async_id = 0;
  uint64_t volatile_id = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
  size_t done = 0;
  NtStatus status = NtStatus::Success;
};

// Counts BYTES written through OPEN in its share's and user's counters.
// The slots are looked up now, not when the pwrite started: they are the
// worker's, and the connection may have moved to a bulk worker meanwhile.
void record_written(ConnState& conn, const state::Open& open, size_t bytes) {
  if (!conn.metrics) return;
  uint32_t share = kNoScope, user = kNoScope;
  if (state::Session* s = conn.find_session(open.session_id)) {
    user = s->metrics_slot;
    auto t = s->trees.find(open.tree_id);
    if (t != s->trees.end()) share = t->second->metrics_slot;
  }
  conn.metrics->record_data(false, bytes, share, user);
}

void finish_write(ConnState& conn, const WriteDone& d) {
  --conn.writes_in_flight;
  conn.write_bytes_in_flight -= d.length;
  if (d.status == NtStatus::Success) {
    auto it = conn.tables->opens.find(d.volatile_id);
    if (it != conn.tables->opens.end()) {
      if (it->second->frozen_write_time) become_owner_of(conn, *it->second);
      after_write(*it->second, d.offset + d.done);
      record_written(conn, *it->second, d.done);
    }
  }
  Bytes body;
  ByteWriter w(body);
  write_response(w, uint32_t(d.done));
  complete(conn, d.async_id, d.status, body);
}

// Starts the pwrite of DATA at OFFSET through OPEN on the connection's
// write lane; STATUS_PENDING, or a status when it could not be started
// (then nothing was submitted).
NtStatus write_async(Request& req, state::Open& open, uint64_t offset, ByteSpan data, bool write_through) {
  // Nothing reads the frame after its only request (a lone WRITE), so the
  // buffer may go with KEPT if the WRITE cannot start after all.
  std::shared_ptr<const void> kept = keep_payload(req.conn, data);
  NtStatus st;
  int fd = start_pool_wait(req, open, WaitKind::Write, kInterimDelayMs, st);
  if (fd < 0) return st;
  ConnState& conn = req.conn;
  if (!conn.write_lane) conn.write_lane = std::make_shared<BlockingPool::Lane>();
  WriteDone d;
  d.async_id = req.async_id;
  d.volatile_id = open.volatile_id;
  d.offset = offset;
  d.length = uint32_t(data.size());
  ServerContext& server = req.server;
  server.blocking->submit(conn.write_lane, [&server, to = conn.address, d, fd, data, kept = std::move(kept),
                                            write_through]() mutable {
    d.status = vfs::pwrite_all(fd, d.offset, data, &d.done);
    if (d.status == NtStatus::Success && write_through) fdatasync(fd);
    close(fd);
    kept.reset();  // the frame's buffer goes now, not with the posted task
    post_to_conn(server, to, [d](ConnState& c, Bytes&) { finish_write(c, d); });
  });
  // Counted once submitted; the completion comes through this thread's
  // posted tasks, so never before this.
  ++conn.writes_in_flight;
  conn.write_bytes_in_flight += d.length;
  return NtStatus::Pending;
}

// Where a write may land, as Windows answers (smb2.rw.invalid): past
// INT64_MAX nothing; NTFS's largest file is MAXFILESIZE (16 TiB - 64 KiB),
// so data at or beyond it is INVALID_PARAMETER and data that would reach
// it DISK_FULL, whatever the local filesystem could hold. An empty write
// succeeds anywhere up to INT64_MAX.
NtStatus write_range_status(uint64_t offset, uint32_t length) {
  constexpr uint64_t kMaxFileSize = 0xFFFFFFF0000ull;
  if (offset > uint64_t(INT64_MAX) - length) return NtStatus::InvalidParameter;
  if (length == 0) return NtStatus::Success;
  if (offset >= kMaxFileSize) return NtStatus::InvalidParameter;
  if (offset + length >= kMaxFileSize) return NtStatus::DiskFull;
  return NtStatus::Success;
}

}  // namespace

void become_owner_of(ConnState& conn, const state::Open& open) {
  state::Session* s = conn.find_session(open.session_id);
  if (!s) return;
  auto t = s->trees.find(open.tree_id);
  if (t != s->trees.end()) become_user(t->second->identity);
}

int start_pool_wait(Request& req, const state::Open& open, WaitKind kind, int64_t delay_ms, NtStatus& status) {
  int fd = dup(open.fd.get());
  if (fd < 0) {
    status = nt_status_from_errno(errno);
    return -1;
  }
  WaitingRequest w;
  w.kind = kind;
  w.volatile_id = open.volatile_id;
  w.withdraw = keep_running;
  status = start_waiting(req, std::move(w));
  if (status != NtStatus::Pending) {
    close(fd);
    return -1;
  }
  defer_interim(req, delay_ms);
  return fd;
}

bool write_goes_async(const ConnState& conn, const ServerContext& server, const state::Open& open,
                      uint32_t length, uint64_t session_id) {
  if (!server.blocking || length < server.async_write_min) return false;
  if (open.fd.get() < 0 || open.stream || open.is_directory || appends(open)) return false;
  if (conn.writes_in_flight && conn.write_bytes_in_flight + length > server.max_write_bytes_in_flight) return false;
  return has_room_to_wait(conn, server, session_id);
}

// A WRITE request's body up to its Buffer (MS-SMB2 2.2.21: StructureSize 49
// counts the Buffer's first byte).
constexpr size_t kWriteBodyBeforeData = 48;

bool runs_beside_writes(const ConnState& conn, const ServerContext& server, ByteSpan chain) {
  wire::Header h;
  if (!wire::parse_header(chain, h) || h.command != wire::Command::Write || h.next_command != 0 || h.is_related())
    return false;
  ByteSpan body = chain.subspan(wire::kHeaderSize);
  if (body.size() < kWriteBodyBeforeData) return false;
  uint32_t length = load_le32(body.data() + 4);
  uint64_t persistent = load_le64(body.data() + 16);
  auto it = conn.tables->opens.find(load_le64(body.data() + 24));
  if (it == conn.tables->opens.end()) return false;
  const state::Open& open = *it->second;
  if (open.persistent_id != persistent || open.session_id != h.session_id || open.tree_id != h.tree_id) return false;
  return write_goes_async(conn, server, open, length, h.session_id);
}

bool may_run_beside_writes(const ConnState& conn, const ServerContext& server, size_t size) {
  constexpr size_t kWriteHead = wire::kHeaderSize + kWriteBodyBeforeData;
  if (size < kWriteHead + server.async_write_min) return false;
  return conn.write_bytes_in_flight + (size - kWriteHead) <= server.max_write_bytes_in_flight;
}

NtStatus handle_write(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t data_offset = r.u16();
  uint32_t length = r.u32();
  uint64_t offset = r.u64();
  r.skip(16);  // FileId: Request::open
  r.skip(12);  // Channel, RemainingBytes, WriteChannelInfoOffset/Length
  uint32_t flags = r.u32();
  ByteSpan data;
  if (!r.ok() || !buffer_at(req, data_offset, length, data)) return NtStatus::InvalidParameter;
  state::Open* open = req.open;
  if (length > negotiated_sizes(req.conn, req.server).max_write) return NtStatus::InvalidParameter;
  if (open->is_directory) return NtStatus::InvalidDeviceRequest;
  if (NtStatus s = check_change(*req.tree, *open, Change::WriteData); s != NtStatus::Success) return s;
  if (find_pipe(req.conn, *open)) return write_pipe(req, *open, data, w);  // Offset means nothing on a pipe
  const bool append = appends(*open);
  if (!append)
    if (NtStatus st = write_range_status(offset, length); st != NtStatus::Success) return st;
  if (open->stream) {
    break_read_caching(req.server, open->node, open, req.conn);
    return write_stream(req, *open, offset, data, append, w);
  }
  // Decided before an append's offset is known: an append stays inline (on
  // a connection with WRITEs in flight it waited for them: it is not one
  // that runs_beside_writes lets past).
  bool async = req.hdr.next_command == 0 && !req.compound.in_chain &&
               write_goes_async(req.conn, req.server, *open, length, req.session->session_id);
  if (append) {  // where the data lands is known only now
    struct stat st;
    if (fstat(open->fd.get(), &st) != 0) return nt_status_from_errno(errno);
    offset = uint64_t(st.st_size);
    if (NtStatus s = write_range_status(offset, length); s != NtStatus::Success) return s;
  }
  if (open->node) {
    NtStatus st = req.server.locks.check_io(open->node->device, open->node->inode, open, offset, length, true);
    if (st != NtStatus::Success) return st;
  }
  break_read_caching(req.server, open->node, open, req.conn);  // MS-FSA 2.1.5.3
  note_write(*open);  // one clock read, for a handle's first writes
  if (async) return write_async(req, *open, offset, data, flags & SMB2_WRITEFLAG_WRITE_THROUGH);
  size_t done = 0;
  if (NtStatus st = vfs::pwrite_all(open->fd.get(), offset, data, &done); st != NtStatus::Success) return st;
  if (flags & SMB2_WRITEFLAG_WRITE_THROUGH) fdatasync(open->fd.get());
  after_write(*open, offset + done);
  write_response(w, uint32_t(done));
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
