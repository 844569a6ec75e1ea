// The CREATE response body, and the CREATEs answered from an open that
// exists already: a durable reconnect and a replay (MS-SMB2 3.3.5.9.7,
// 3.3.5.9.10, 3.3.5.9.12).
#include "smb2/commands/create_contexts.hpp"
#include "smb2/commands/create_open.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/leases/lease.hpp"
#include "vfs/file_info.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::smb2::create {
namespace {

// A durable reconnect or a replayed CREATE answers with an open that
// exists already, as it stands (MS-SMB2 3.3.5.9.7, 3.3.5.9.10, 3.3.5.9.12).
NtStatus answer_open_again(Request& req, const CreateRequest& c, state::Open& open, const LeaseRequest& lease_req,
                           uint8_t oplock_level, uint32_t action, bool durable_context, ByteWriter& w) {
  auto stat = vfs::stat_fd(open.fd.get());
  if (!stat) return stat.error();
  Opened o;
  o.st = *stat;
  o.action = action;
  state::CacheGrant g = req.server.files.current_grant(open.node, open.lease);
  LeaseAnswer answer{lease_req, g.lease_state, g.lease_breaking, g.epoch};
  answer.request.version = g.version;
  answer.request.parent_key = g.parent_key;
  answer.request.has_parent = g.has_parent;
  bool lease_answered = open.oplock_level == state::kOplockLease && lease_req.present;
  Bytes& contexts = req.conn.create_contexts_scratch;
  contexts.clear();
  NtStatus st = answer_create_contexts(req, c.contexts, open, o.st, lease_answered ? &answer : nullptr, contexts);
  if (st != NtStatus::Success) return st;
  if (durable_context) answer_durable(open, contexts);
  std::string_view parent, leaf;
  vfs::split_parent(open.path, parent, leaf);
  write_response(w, open, o, reported_attributes(req.tree->share, o.st, leaf, open.fd.get()), contexts,
                 oplock_level);
  req.compound.file_id = {open.persistent_id, open.volatile_id};
  return NtStatus::Success;
}

// DHnC / DH2C: no path validation, no open; the kept open comes back.
NtStatus reconnect(Request& req, const CreateRequest& c, const DurableRequest& d, ByteWriter& w) {
  LeaseRequest lease;
  if (NtStatus st = find_lease_request(req, c.contexts, lease); st != NtStatus::Success) return st;
  auto open = reconnect_durable(req, c.name, lease, d);
  if (!open && open.error() == NtStatus::ObjectNameNotFound) return wait_for_reconnect(req, d);
  if (!open) return open.error();
  return answer_open_again(req, c, **open, lease, (*open)->oplock_level, FILE_OPENED, false, w);
}

}  // namespace

void write_response(ByteWriter& w, const state::Open& open, const Opened& o, uint32_t attrs, ByteSpan contexts,
                    uint8_t oplock_level) {
  size_t header_start = w.size() - wire::kHeaderSize;
  w.u16(89);
  w.u8(oplock_level);
  w.u8(0);  // Flags
  w.u32(o.action);
  vfs::put_network_open_times(w, o.st);
  w.u32(attrs);
  w.u32(0);
  w.u64(open.persistent_id);
  w.u64(open.volatile_id);
  size_t ctx_pos = w.size();
  w.u32(0);
  w.u32(0);
  if (!contexts.empty()) {
    w.align(8, header_start);
    w.patch_u32(ctx_pos, uint32_t(w.size() - header_start));
    w.patch_u32(ctx_pos + 4, uint32_t(contexts.size()));
    w.bytes(contexts);
  } else {
    w.u8(0);  // the one-byte Buffer
  }
}

// The durable contexts, read only when there are contexts (nothing for the
// common open); a reconnect is answered here, before the request's other
// fields are judged (ANSWERED).
NtStatus read_durable(Request& req, const CreateRequest& c, DurableRequest& d, ByteWriter& w, bool& answered) {
  answered = false;
  if (c.contexts.empty() || req.tree->share.is_ipc) return NtStatus::Success;
  if (NtStatus st = find_durable_request(req, c.contexts, d); st != NtStatus::Success || !d.reconnect()) return st;
  answered = true;
  return reconnect(req, c, d, w);
}

// DH2Q: a replay of a CREATE whose open lives gets that open again.
NtStatus check_replay(Request& req, const CreateRequest& c, const DurableRequest& d, ByteWriter& w, bool& answered) {
  answered = false;
  state::Open* replayed = nullptr;
  if (NtStatus st = find_replayed_open(req, d, replayed); st != NtStatus::Success || !replayed) return st;
  LeaseRequest lease;
  if (NtStatus st = find_lease_request(req, c.contexts, lease); st != NtStatus::Success) return st;
  // The replay may not change the caching of the open (smb2.replay.*):
  // a lease where it has an oplock, or another lease key, is refused; an
  // oplock open answers the level the replay asks for (and durability
  // only with batch), as Windows does, and keeps its own.
  bool leased = replayed->oplock_level == state::kOplockLease;
  if (!leased && c.oplock_level == state::kOplockLease) return NtStatus::AccessDenied;
  if (leased && lease.present && replayed->lease && lease.key != replayed->lease->key) return NtStatus::AccessDenied;
  uint8_t level = leased ? uint8_t(state::kOplockLease) : c.oplock_level;
  answered = true;
  // The replay answers what the CREATE did (FILE_CREATED stays so).
  return answer_open_again(req, c, *replayed, lease, level, replayed->create_action,
                           leased || level == state::kOplockBatch, w);
}

}  // namespace ringsmb::smb2::create
