// SMB2 on IPC$ named pipes. ringsmbd keeps only the SMB2 side of a pipe (a
// state::Open without fd plus a PipeOpen naming the control plane's
// handle); the DCE/RPC endpoint itself lives in the control plane.
//
// Pipes here are message-mode (MS-FSCC 2.4.37: ReadMode
// FILE_PIPE_MESSAGE_MODE): a READ or TRANSCEIVE returns at most one message
// (one response PDU); a message longer than the read returns its first part
// with STATUS_BUFFER_OVERFLOW and the rest on the next read (MS-SMB2
// 3.3.5.12, 3.3.5.15.3). A READ when no message is waiting blocks until one
// is (MS-SMB2 3.3.5.12, as a blocking pipe read): it goes async with an
// interim STATUS_PENDING, and the client's next WRITE on the pipe (the only
// way a message appears: an RPC server answers nothing unasked) completes
// it; CANCEL or closing the pipe completes it with STATUS_CANCELLED. Clients
// that pipeline RPC calls (Samba's async ones) post their READs first. In
// the middle of a compound chain, where nothing may wait, an empty pipe
// answers STATUS_PIPE_EMPTY, as a non-blocking pipe does; past the async
// engine's limits, STATUS_INSUFFICIENT_RESOURCES. The waiting itself is
// the async engine's (async_engine.hpp).
#include "smb2/pipes/pipe_io.hpp"

#include <algorithm>
#include <atomic>

#include "common/log.hpp"
#include "smb2/engine/async_engine.hpp"
#include "rpc/pipe.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "vfs/paths.hpp"
#include "wire/fscc.hpp"
#include "wire/create_response.hpp"
#include "wire/smb2_body.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint32_t { FILE_ATTRIBUTE_NORMAL = 0x80 };
// What a pipe reports as its size (FileStandardInformation AllocationSize,
// the CREATE response): the buffer quota, as Windows reports its default.
constexpr uint64_t kPipeQuota = 4096;
using wire::FileInfoClass;
// MS-FSCC 2.4.37 / 2.4.38 values.
enum : uint32_t {
  FILE_PIPE_BYTE_STREAM_MODE = 0,
  FILE_PIPE_MESSAGE_MODE = 1,
  FILE_PIPE_QUEUE_OPERATION = 0,
  FILE_PIPE_COMPLETE_OPERATION = 1,
  FILE_PIPE_MESSAGE_TYPE = 1,
  FILE_PIPE_FULL_DUPLEX = 2,
  FILE_PIPE_CONNECTED_STATE = 3,
  FILE_PIPE_CLIENT_END = 0,
  kUnlimitedInstances = 0xFFFFFFFF,
};

// Open pipes per connection: the control plane's table is shared by every
// client (ringsmb-ctld keeps at most 16 384), so one client cannot fill it.
constexpr size_t kMaxPipesPerConnection = 256;

// Handles are unique across every connection of this ringsmbd: the control
// plane keeps one table for all of them. 0 is never used.
uint32_t next_pipe_handle() {
  static std::atomic<uint32_t> next{1};
  uint32_t h = next.fetch_add(1);
  return h ? h : next.fetch_add(1);
}

// A pipe whose control-plane side is gone: the client sees it broken, and
// may close it and open a new one.
NtStatus relay_status(NtStatus s) {
  if (s == NtStatus::InvalidHandle || s == NtStatus::PipeNotAvailable) return NtStatus::PipeBroken;
  return s;
}

// The READ response body (MS-SMB2 2.2.20) around DATA.
void write_read_body(ByteWriter& w, ByteSpan data) {
  constexpr size_t kDataOffset = wire::kHeaderSize + 16;
  w.u16(17);
  w.u8(uint8_t(kDataOffset));
  w.u8(0);  // Reserved
  w.u32(uint32_t(data.size()));
  w.u32(0);  // DataRemaining
  w.u32(0);  // Reserved2
  w.bytes(data);
  if (data.empty()) w.u8(0);  // the one-byte Buffer
}

// Completes waiting READ ASYNC_ID with STATUS and DATA (async_engine.hpp).
void complete_read(ConnState& conn, uint64_t async_id, NtStatus status, ByteSpan data) {
  Bytes body;
  ByteWriter w(body);
  write_read_body(w, data);
  complete(conn, async_id, status, body);
}

bool waits_on_pipe(const WaitingRequest& w, uint64_t volatile_id) {
  return w.kind == WaitKind::PipeRead && w.volatile_id == volatile_id;
}

// After bytes reached the pipe: the READs waiting on it take the messages
// now queued, oldest READ first.
void complete_waiting_reads(ConnState& conn, ServerContext& server, const state::Open& open, uint32_t handle) {
  std::vector<std::pair<uint64_t, uint32_t>> reads;  // AsyncId, Length
  for (const auto& [id, w] : conn.async.waiting)
    if (waits_on_pipe(w, open.volatile_id)) reads.emplace_back(id, w.read_length);
  for (auto [id, length] : reads) {
    ipc::PipeReply reply = server.control->pipe_read(handle, length);
    if (reply.status == NtStatus::Success && reply.data.empty() && !reply.more) return;  // nothing more yet
    NtStatus st = reply.status != NtStatus::Success ? relay_status(reply.status)
                  : reply.more && !conn.tables->pipes.at(open.volatile_id).byte_mode ? NtStatus::BufferOverflow
                                                                              : NtStatus::Success;
    complete_read(conn, id, st, reply.data);
  }
}

// A waiting READ ends with its handle, its tree or session, or CANCEL
// (its IRP is cancelled): nothing to undo elsewhere.
NtStatus withdraw_read(ServerContext&, ConnState&, WaitingRequest&, WithdrawReason) { return NtStatus::Cancelled; }

// A READ on an empty pipe waits (the top of this file).
NtStatus wait_for_message(Request& req, const state::Open& open, uint32_t length) {
  if (req.hdr.next_command != 0) return NtStatus::PipeEmpty;
  WaitingRequest w;
  w.kind = WaitKind::PipeRead;
  w.volatile_id = open.volatile_id;
  w.read_length = length;
  w.withdraw = withdraw_read;
  return start_waiting(req, std::move(w));
}

void write_create_response(ByteWriter& w, const state::Open& open) {
  wire::write_plain_create_response(w, open.persistent_id, open.volatile_id, kPipeQuota, FILE_ATTRIBUTE_NORMAL);
}

}  // namespace

const PipeOpen* find_pipe(const ConnState& conn, const state::Open& open) {
  auto it = conn.tables->pipes.find(open.volatile_id);
  return it == conn.tables->pipes.end() ? nullptr : &it->second;
}

NtStatus create_pipe(Request& req, const PipeCreate& c, ByteWriter& w) {
  std::string name;
  if (c.name.empty() || !vfs::utf16le_to_utf8(c.name, name)) return NtStatus::ObjectNameInvalid;
  if (!req.server.control) return NtStatus::ObjectNameNotFound;
  if (req.conn.tables->pipes.size() >= kMaxPipesPerConnection) return NtStatus::InsufficientResources;
  state::Session& s = *req.session;
  ipc::PipeOpenRequest open_req{next_pipe_handle(), name, s.user, s.is_guest || s.is_anonymous};
  ipc::PipeReply reply;
  {
    // The in-process control plane (--no-ctld) reads the users database,
    // root's alone, for LSA and SAMR lookups when the pipe opens: open it
    // with the server's identity, not the session user's.
    RestoreIdentity keep;
    become_root();
    reply = req.server.control->pipe_open(open_req);
  }
  if (reply.status != NtStatus::Success) {
    // No control plane: the pipe exists but cannot be served now.
    LOG_DEBUG("pipe '%s': %s", name.c_str(), nt_status_name(reply.status));
    return reply.status;
  }
  auto open = std::make_unique<state::Open>();
  open->persistent_id = open->volatile_id = req.server.next_file_id.fetch_add(1);
  open->session_id = s.session_id;
  open->tree_id = req.tree->tree_id;
  open->path = name;
  uint32_t access = map_generic(c.desired_access);
  if (access & MAXIMUM_ALLOWED) access = (access & ~MAXIMUM_ALLOWED) | req.tree->maximal_access;
  open->granted_access = access;
  open->share_access = c.share_access;
  open->create_options = c.create_options;
  write_create_response(w, *open);
  req.compound.file_id = {open->persistent_id, open->volatile_id};
  req.conn.tables->pipes.emplace(open->volatile_id, PipeOpen{open_req.handle, name});
  req.conn.tables->opens.emplace(open->volatile_id, std::move(open));
  return NtStatus::Success;
}

NtStatus read_pipe(Request& req, const state::Open& open, uint32_t length, ByteWriter& w) {
  const PipeOpen* pipe = find_pipe(req.conn, open);
  if (!pipe || !req.server.control) return NtStatus::InvalidHandle;
  // A READ already waiting gets the next message first.
  bool others_waiting = std::any_of(req.conn.async.waiting.begin(), req.conn.async.waiting.end(),
                                    [&](const auto& kv) { return waits_on_pipe(kv.second, open.volatile_id); });
  if (others_waiting) return wait_for_message(req, open, length);
  ipc::PipeReply reply = req.server.control->pipe_read(pipe->handle, length);
  if (reply.status != NtStatus::Success) return relay_status(reply.status);
  if (reply.data.empty() && !reply.more) return wait_for_message(req, open, length);
  write_read_body(w, reply.data);
  // In byte-stream read mode a short read is just short; the rest follows.
  return reply.more && !pipe->byte_mode ? NtStatus::BufferOverflow : NtStatus::Success;
}

NtStatus write_pipe(Request& req, const state::Open& open, ByteSpan data, ByteWriter& w) {
  const PipeOpen* pipe = find_pipe(req.conn, open);
  if (!pipe || !req.server.control) return NtStatus::InvalidHandle;
  if (!data.empty()) {
    ipc::PipeReply reply = req.server.control->pipe_write(pipe->handle, data);
    if (reply.status != NtStatus::Success) return relay_status(reply.status);
    complete_waiting_reads(req.conn, req.server, open, pipe->handle);
  }
  w.u16(17);
  w.u16(0);  // Reserved
  w.u32(uint32_t(data.size()));
  w.u32(0);  // Remaining
  w.u16(0);  // WriteChannelInfoOffset
  w.u16(0);  // WriteChannelInfoLength
  return NtStatus::Success;
}

NtStatus transceive_pipe(Request& req, const state::Open& open, ByteSpan in, uint32_t max_out, Bytes& out) {
  const PipeOpen* pipe = find_pipe(req.conn, open);
  if (!pipe) return NtStatus::NotSupported;  // MS-SMB2 3.3.5.15.3: not a named pipe
  if (!req.server.control) return NtStatus::InvalidHandle;
  if (!(open.granted_access & FILE_WRITE_DATA) || !(open.granted_access & FILE_READ_DATA))
    return NtStatus::AccessDenied;
  ipc::PipeReply reply = req.server.control->pipe_transceive(pipe->handle, in, max_out);
  if (reply.status != NtStatus::Success) return relay_status(reply.status);
  if (reply.data.empty() && !reply.more) return NtStatus::PipeEmpty;  // nothing asked, nothing to answer
  out = std::move(reply.data);
  // Messages left after this one (a fragmented response) go to waiting READs.
  complete_waiting_reads(req.conn, req.server, open, pipe->handle);
  return reply.more ? NtStatus::BufferOverflow : NtStatus::Success;
}

NtStatus wait_pipe(Request& req, ByteSpan input) {
  if (!req.tree || !req.tree->share.is_ipc) return NtStatus::NotSupported;
  // MS-FSCC 2.3.49 FSCTL_PIPE_WAIT_REQUEST: Timeout, NameLength,
  // TimeoutSpecified, Padding, Name (without "\pipe\").
  ByteReader r(input);
  r.u64();
  uint32_t name_length = r.u32();
  r.u8();
  r.u8();
  ByteSpan name16 = r.bytes(name_length);
  std::string name;
  if (!r.ok() || name_length == 0 || name_length % 2 || !vfs::utf16le_to_utf8(name16, name))
    return NtStatus::InvalidParameter;
  return rpc::pipe_served(name) ? NtStatus::Success : NtStatus::ObjectNameNotFound;
}

NtStatus set_pipe_info(ConnState& conn, const state::Open& open, uint8_t info_type, uint8_t info_class,
                       ByteSpan buf) {
  auto it = conn.tables->pipes.find(open.volatile_id);
  if (it == conn.tables->pipes.end()) return NtStatus::InvalidHandle;
  if (info_type != wire::SMB2_0_INFO_FILE) return NtStatus::NotSupported;
  if (FileInfoClass(info_class) != FileInfoClass::Pipe) return NtStatus::InvalidParameter;  // as the named-pipe file system
  if (buf.size() < 8) return NtStatus::InfoLengthMismatch;
  uint32_t read_mode = load_le32(buf.data()), completion = load_le32(buf.data() + 4);
  if ((read_mode != FILE_PIPE_BYTE_STREAM_MODE && read_mode != FILE_PIPE_MESSAGE_MODE) ||
      (completion != FILE_PIPE_QUEUE_OPERATION && completion != FILE_PIPE_COMPLETE_OPERATION))
    return NtStatus::InvalidParameter;
  // Completion mode changes nothing: a READ on an empty pipe never blocks
  // here (see the top of this file).
  it->second.byte_mode = read_mode == FILE_PIPE_BYTE_STREAM_MODE;
  return NtStatus::Success;
}

NtStatus query_pipe_info(const ConnState& conn, const state::Open& open, uint8_t info_type, uint8_t info_class, uint32_t output_length,
                         Bytes& data) {
  const PipeOpen* pipe = find_pipe(conn, open);
  if (!pipe) return NtStatus::InvalidHandle;
  if (info_type != wire::SMB2_0_INFO_FILE) return NtStatus::NotSupported;
  ByteWriter w(data);
  size_t need = 0;
  switch (FileInfoClass(info_class)) {
    case FileInfoClass::Basic:  // MS-FSCC 2.4.7
      need = 40;
      w.zeros(32);  // no times
      w.u32(FILE_ATTRIBUTE_NORMAL);
      w.u32(0);
      break;
    case FileInfoClass::Standard:  // MS-FSCC 2.4.47
      need = 24;
      w.u64(kPipeQuota);  // AllocationSize
      w.u64(0);           // EndOfFile
      w.u32(1);           // NumberOfLinks
      w.u8(0);            // DeletePending
      w.u8(0);            // Directory
      w.u16(0);
      break;
    case FileInfoClass::Position:  // MS-FSCC 2.4.40: a pipe has no position
      need = 8;
      w.u64(0);
      break;
    case FileInfoClass::Mode:  // MS-FSCC 2.4.31
      need = 4;
      w.u32(open.create_options & 0x0000103E);
      break;
    case FileInfoClass::Pipe:  // MS-FSCC 2.4.37
      need = 8;
      w.u32(pipe->byte_mode ? FILE_PIPE_BYTE_STREAM_MODE : FILE_PIPE_MESSAGE_MODE);
      w.u32(FILE_PIPE_QUEUE_OPERATION);
      break;
    case FileInfoClass::PipeLocal:  // MS-FSCC 2.4.38
      need = 40;
      w.u32(FILE_PIPE_MESSAGE_TYPE);
      w.u32(FILE_PIPE_FULL_DUPLEX);
      w.u32(kUnlimitedInstances);  // MaximumInstances
      w.u32(1);                    // CurrentInstances (that we know of)
      w.u32(uint32_t(kPipeQuota));  // InboundQuota
      w.u32(0);                     // ReadDataAvailable: unknown without asking the control plane
      w.u32(uint32_t(kPipeQuota));  // OutboundQuota
      w.u32(uint32_t(kPipeQuota));  // WriteQuotaAvailable
      w.u32(FILE_PIPE_CONNECTED_STATE);
      w.u32(FILE_PIPE_CLIENT_END);
      break;
    default:
      // The named-pipe file system answers other classes so.
      return NtStatus::InvalidParameter;
  }
  if (output_length < need) return NtStatus::InfoLengthMismatch;
  return NtStatus::Success;
}

bool close_pipe(ConnState& conn, ServerContext& server, uint64_t volatile_id) {
  auto it = conn.tables->pipes.find(volatile_id);
  if (it == conn.tables->pipes.end()) return false;
  // READs still waiting ended with the handle (close_open withdrew them).
  uint32_t handle = it->second.handle;
  conn.tables->pipes.erase(it);
  conn.tables->opens.erase(volatile_id);
  if (server.control) server.control->pipe_close(handle);
  return true;
}

}  // namespace ringsmb::smb2
