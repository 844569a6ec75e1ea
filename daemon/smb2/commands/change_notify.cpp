// SMB2 CHANGE_NOTIFY (MS-SMB2 2.2.35, 2.2.36, 3.3.5.19; MS-FSA 2.1.5.11).
//
// The first request on a directory open sets up its watch
// (smb2/notify/notify_watch.hpp: its CompletionFilter and SMB2_WATCH_TREE hold
// for the open's life). A request completes at once with what changed
// since the previous one, if anything did; otherwise it waits in the async
// engine (interim STATUS_PENDING) until a change arrives. Changes that do
// not fit OutputBufferLength complete it with STATUS_NOTIFY_ENUM_DIR.
// CANCEL answers STATUS_CANCELLED, closing the handle (also by
// TREE_DISCONNECT, LOGOFF) STATUS_NOTIFY_CLEANUP.
#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/notify/notify_watch.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint16_t { SMB2_WATCH_TREE = 0x0001 };

NtStatus withdraw_notify(ServerContext&, ConnState& conn, WaitingRequest& w, WithdrawReason why) {
  if (conn.notify) {
    auto it = conn.notify->by_open.find(w.volatile_id);
    if (it != conn.notify->by_open.end()) it->second->dequeue(w.async_id);
  }
  return why == WithdrawReason::Cancel ? NtStatus::Cancelled : NtStatus::NotifyCleanup;
}

// The open's watch, set up by its first request.
std::expected<NotifyWatch*, NtStatus> watch_of(Request& req, state::Open& open, uint16_t flags, uint32_t filter,
                                               uint32_t output_length) {
  if (!req.conn.notify) req.conn.notify = std::make_shared<NotifyTable>();
  auto& by_open = req.conn.notify->by_open;
  auto it = by_open.find(open.volatile_id);
  // Later requests' filter and flags do not count. Bits beyond
  // kValidCompletionFilter are accepted and never match, as on Windows
  // (smb2.notify.mask tries all 32).
  if (it != by_open.end()) return it->second.get();
  auto watch = std::make_unique<NotifyWatch>(req.conn, req.server, open.volatile_id, filter,
                                             (flags & SMB2_WATCH_TREE) != 0, req.tree->identity);
  std::string what = "[" + req.tree->share.name + "]/" + open.path;
  NtStatus st = watch->start(open.fd.get(), what, output_length);
  if (st != NtStatus::Success) return std::unexpected(st);
  watch->attach(open.node);
  return by_open.emplace(open.volatile_id, std::move(watch)).first->second.get();
}

}  // namespace

NtStatus handle_change_notify(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t flags = r.u16();
  uint32_t output_length = r.u32();
  r.skip(16);  // FileId: Request::open
  uint32_t filter = r.u32();
  if (!r.ok()) return NtStatus::InvalidParameter;
  state::Open* open = req.open;
  if (!open->is_directory) return NtStatus::InvalidParameter;
  if (output_length > negotiated_sizes(req.conn, req.server).max_trans) return NtStatus::InvalidParameter;
  if (!(open->granted_access & FILE_READ_DATA)) return NtStatus::AccessDenied;  // FILE_LIST_DIRECTORY
  // A notification waits, and a request that would wait in the middle of a
  // compound chain fails with STATUS_INTERNAL_ERROR, as on Windows
  // (MS-SMB2 3.3.5.2.7 <262>); the elements after it still run.
  if (req.hdr.next_command != 0) return NtStatus::InternalError;
  if (!req.conn.changes || req.server.max_notify_watches == 0 || !req.tree) return NtStatus::NotSupported;
  auto watch = watch_of(req, *open, flags, filter, output_length);
  if (!watch) return watch.error();
  NotifyWatch& nw = **watch;
  // Checked after the watch is registered with the directory's FileNode:
  // delete pending set before is seen here, set after reaches the watch
  // (notify_delete_pending), so a request never waits on a directory that
  // is going away (smb2.notify.rmdir* race the two connections).
  if (open->node && req.server.files.is_delete_pending(open->node)) return NtStatus::DeletePending;
  if (nw.has_news() && !nw.waiting()) {  // what changed since the last request, at once
    Bytes body;
    NtStatus st = nw.take(output_length, body);
    w.bytes(body);
    return st;
  }
  WaitingRequest wr;
  wr.kind = WaitKind::ChangeNotify;
  wr.volatile_id = open->volatile_id;
  wr.withdraw = withdraw_notify;
  NtStatus st = start_waiting(req, std::move(wr));
  if (st == NtStatus::Pending) nw.enqueue(req.async_id, output_length);
  return st;
}

}  // namespace ringsmb::smb2
