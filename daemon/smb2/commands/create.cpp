// SMB2 CREATE (MS-SMB2 2.2.13, 2.2.14, 3.3.5.9): open or create a file or
// directory beneath the share root, with share modes, dispositions,
// delete-on-close, and the MxAc / QFid create contexts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "common/log.hpp"
#include "smb2/fsctl/fsctl_reparse.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/async_write.hpp"
#include "smb2/commands/create_contexts.hpp"
#include "smb2/commands/create_open.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "smb2/security/security_info.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/quota/quota.hpp"
#include "smb2/snapshots/snapshots.hpp"
#include "smb2/fruit/afp_streams.hpp"
#include "smb2/fruit/netatalk.hpp"
#include "smb2/streams/stream_io.hpp"
#include "vfs/allocation.hpp"
#include "vfs/dos_xattr.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"
#include "vfs/stream_store.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

using namespace create;

// The fields and buffers of the request, before any is judged: a durable
// reconnect ignores all but the name and the contexts (3.3.5.9.7).
NtStatus read_request(const Request& req, CreateRequest& c) {
  ByteReader r(req.body);
  r.skip(2);
  r.u8();  // SecurityFlags
  c.oplock_level = r.u8();
  c.impersonation = r.u32();
  r.skip(16);  // SmbCreateFlags, Reserved
  c.desired_access = r.u32();
  c.file_attributes = r.u32();
  c.share_access = r.u32();
  c.disposition = r.u32();
  c.options = r.u32();
  uint16_t name_off = r.u16(), name_len = r.u16();
  uint32_t ctx_off = r.u32(), ctx_len = r.u32();
  if (!r.ok() || !buffer_at(req, name_off, name_len, c.name) || !buffer_at(req, ctx_off, ctx_len, c.contexts))
    return NtStatus::InvalidParameter;
  return NtStatus::Success;
}

NtStatus validate(const CreateRequest& c) {
  if (c.impersonation > 3) return NtStatus::BadImpersonationLevel;
  if (c.disposition > FILE_OVERWRITE_IF || (c.options & kReservedCreateOptions) ||
      (c.options & FILE_DIRECTORY_FILE && c.options & FILE_NON_DIRECTORY_FILE) || (c.share_access & ~7u) ||
      (c.file_attributes & ~0x7FFFu))
    return NtStatus::InvalidParameter;
  if (c.name.size() % 2) return NtStatus::InvalidParameter;
  // MS-SMB2 2.2.13: the name is relative to the share and MUST NOT begin
  // with a separator; Windows fails such a request (smb2.create.leading-slash).
  if (c.name.size() >= 2 && c.name[0] == '\\' && c.name[1] == 0) return NtStatus::InvalidParameter;
  if (c.desired_access & ACCESS_SYSTEM_SECURITY) return NtStatus::PrivilegeNotHeld;
  if ((c.options & FILE_DELETE_ON_CLOSE) && !(map_generic(c.desired_access) & (DELETE | MAXIMUM_ALLOWED)))
    return NtStatus::InvalidParameter;
  if (c.options & FILE_OPEN_BY_FILE_ID) return NtStatus::NotSupported;
  return NtStatus::Success;
}

// The delete happens at the last close, where a refusal reaches no one:
// ask now what SET_INFO FileDispositionInformation would (MS-FSA 2.1.5.1.2:
// a read-only file cannot be deleted; the file system's unlink rules). A
// file this request made is ours to remove.
NtStatus check_delete_on_close(Request& req, const CreateRequest& c, const Target& t, const Opened& o) {
  if (!(c.options & FILE_DELETE_ON_CLOSE) || o.created || t.path.empty()) return NtStatus::Success;
  if (NtStatus st = check_unlink_allowed(*req.tree, t.path); st != NtStatus::Success) return st;
  if (vfs::dos_attributes(o.st, {}, false) & vfs::FILE_ATTRIBUTE_READONLY) return NtStatus::CannotDelete;
  return NtStatus::Success;
}

// The NT descriptor's part (smb2/security/security_info.hpp): an existing file's
// descriptor, stored or implied by its mode, narrows the access, and so
// does its READONLY attribute (smb2/security/access_check.hpp); a new one inherits
// its parent's descriptor (when that fails, the CREATE's rollback removes it).
NtStatus apply_security(Request& req, const CreateRequest& c, Target& t, Opened& o, uint32_t& access) {
  if (!o.created) {
    access &= ~o.unopened;
    if (is_readonly_file(o.st)) {
      auto kept = apply_readonly_attribute(access, c.desired_access, overwrites(c));
      if (!kept) return kept.error();
      access = *kept;
    }
    ExistingOpen e;
    e.fd = o.fd.get();
    e.st = &o.st;
    e.parent_fd = t.parent_fd ? t.parent_fd.get() : -1;
    e.path = t.path;
    e.desired_access = c.desired_access;
    e.delete_on_close = c.options & FILE_DELETE_ON_CLOSE;
    e.overwrite = overwrites(c);
    e.path_only = o.path_only;
    return check_open_access(req, e, access);
  }
  return inherit_on_create(req, o.fd.get(), o.st, t.parent_security, c.contexts);
}

// MS-FSA 2.1.5.1.2.1: a new file takes the attributes the client asked
// for, and ARCHIVE. READONLY goes to the mode (the creating open keeps the
// write access it was granted: its descriptor is open already); HIDDEN,
// SYSTEM and ARCHIVE to user.DOSATTRIB under "store dos attributes", else
// to the server-private metadata (vfs/file_meta.hpp), only where the mode
// does not imply them: a plain new file costs no xattr write. A stream's
// CREATE that made its file sets only the stored attributes.
void apply_new_attributes(Request& req, const CreateRequest& c, Opened& o, bool stream) {
  const ipc::ShareInfo& share = req.tree->share;
  if (share.store_dos_attributes) store_new_file_attributes(*req.tree, o.fd.get(), o.st, c.file_attributes);
  if (stream) return;
  if ((c.file_attributes & vfs::FILE_ATTRIBUTE_READONLY) && S_ISREG(o.st.mode) && (o.st.mode & 0222)) {
    const mode_t mode = mode_t(o.st.mode & 07777 & ~0222u);
    if (fchmod(o.fd.get(), mode) == 0) o.st.mode = (o.st.mode & ~07777u) | mode;
  }
  if (share.store_dos_attributes) return;
  const uint32_t want = c.file_attributes | (o.st.is_directory ? 0u : uint32_t(vfs::FILE_ATTRIBUTE_ARCHIVE));
  auto keep = vfs::dos_attributes_to_keep(want, vfs::dos_attributes(o.st, {}, false));
  if (!keep) return;
  vfs::FileMeta meta;
  meta.dos_attributes = keep;
  if (vfs::write_file_meta(o.fd.get(), meta) == 0) o.new_attributes = keep;
}

// MS-FSA 2.1.5.1.2.2: an overwrite or supersede may not drop HIDDEN or
// SYSTEM from the file (ACCESS_DENIED unless the request names them too).
// Only attributes set on the file count: a dot file's HIDDEN ("hide dot
// files") is its name's, and clients overwrite dot files without it.
NtStatus check_overwrite_attributes(Request& req, const CreateRequest& c, const Opened& o) {
  constexpr uint32_t kMustMatch = vfs::FILE_ATTRIBUTE_HIDDEN | vfs::FILE_ATTRIBUTE_SYSTEM;
  vfs::FileStat st = o.st;
  st.attributes = vfs::dos_attributes(st, {}, false);
  if (req.tree->share.store_dos_attributes)
    if (auto stored = vfs::read_dos_xattr(o.fd.get()))
      st.attributes = vfs::merge_dos_attributes(st.attributes, *stored);
  apply_stored_metadata(st, o.fd.get());
  return (st.attributes & kMustMatch & ~c.file_attributes) ? NtStatus::AccessDenied : NtStatus::Success;
}

// ... and gives it the attributes asked for, and ARCHIVE: READONLY to the
// mode, the rest where a new file's go (apply_new_attributes).
void apply_overwrite_attributes(Request& req, const CreateRequest& c, Opened& o, state::FileNode* node) {
  const uint32_t want = (c.file_attributes & ~uint32_t(vfs::FILE_ATTRIBUTE_NORMAL)) | vfs::FILE_ATTRIBUTE_ARCHIVE;
  if ((want & vfs::FILE_ATTRIBUTE_READONLY) && S_ISREG(o.st.mode) && (o.st.mode & 0222)) {
    const mode_t mode = mode_t(o.st.mode & 07777 & ~0222u);
    if (fchmod(o.fd.get(), mode) == 0) o.st.mode = (o.st.mode & ~07777u) | mode;
  }
  if (req.tree->share.store_dos_attributes) {
    store_dos_attributes(*req.tree, o.fd.get(), want);
    return;
  }
  vfs::FileMeta meta = vfs::read_file_meta(o.fd.get());
  auto keep = vfs::dos_attributes_to_keep(want, vfs::dos_attributes(o.st, {}, false));
  if (keep == meta.dos_attributes) return;
  meta.dos_attributes = keep;
  vfs::write_file_meta(o.fd.get(), meta);
  if (node) node->meta_written();  // a reader since the open learns nothing
}

// SMB2_CREATE_ALLOCATION_SIZE (MS-SMB2 3.3.5.9.3): a file made or
// overwritten by this request gets the space reserved; DISK_FULL when it
// cannot be. Only an open with contexts looks.
NtStatus apply_allocation_size(const CreateRequest& c, Opened& o) {
  if (c.contexts.empty() || o.st.is_directory) return NtStatus::Success;
  uint64_t size = 0;
  if (NtStatus st = find_allocation_size(c.contexts, size); st != NtStatus::Success || size == 0) return st;
  if (size > uint64_t(INT64_MAX)) return NtStatus::InvalidParameter;
  if (NtStatus st = vfs::reserve_allocation(o.fd.get(), size); st != NtStatus::Success) return st;
  // The reservation can move the times too (ext4 sets mtime and ctime):
  // the response says what QUERY_INFO will.
  auto stat = vfs::stat_fd(o.fd.get());
  if (!stat) return stat.error();
  o.st = *stat;
  return NtStatus::Success;
}

// Drops an open registered in the file table that will not be used.
void release(Request& req, const std::shared_ptr<state::FileNode>& node, const state::Open* owner) {
  post_wakeups(req.server, req.server.files.close_cached(node, owner).wake);
}

// What the open asks of oplocks and leases (MS-SMB2 3.3.5.9, 3.3.5.9.8,
// 3.3.5.9.11). Shares with oplocks or leases off, directories and SMB 2.0.2
// leases get none; the request still breaks what it contends.
void describe_caching(Request& req, const CreateRequest& c, const Opened& o, const LeaseRequest& lease,
                      const state::Open& open, state::CacheRequest& cache) {
  const auto& share = req.tree->share;
  bool lease_ok = share.leases && req.conn.dialect >= 0x0210 && req.conn.dialect != 0x02FF;
  cache.directory = o.st.is_directory;
  constexpr uint32_t SMB2_GLOBAL_CAP_DIRECTORY_LEASING = 0x20;  // negotiated only with a client that offered it
  cache.directory_leases = (req.conn.server_capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING) && lease.version == 2;
  if (c.oplock_level == state::kOplockLease) {
    if (lease.present && lease_ok) {
      cache.oplock_level = state::kOplockLease;
      cache.lease = req.server.leases.find_or_create(req.conn.client_guid, lease.key);
      cache.lease_state = lease.state;
      cache.lease_version = lease.version;
      cache.lease_epoch = lease.epoch;
      cache.parent_key = lease.parent_key;
      cache.has_parent = lease.has_parent;
    }
  } else if (share.oplocks && (c.oplock_level == state::kOplockLevelII || c.oplock_level == state::kOplockExclusive ||
                               c.oplock_level == state::kOplockBatch)) {
    cache.oplock_level = c.oplock_level;
  }
  cache.overwrite = overwrites(c);
  cache.new_file_no_meta = o.created && !o.new_attributes;
  cache.delete_on_close = c.options & FILE_DELETE_ON_CLOSE;
  // Past the async engine's limits the open does not wait for the breaks
  // it starts (as in the middle of nothing that could wait).
  cache.can_wait = req.async_id || has_room_to_wait(req);
  cache.waited = req.async_id != 0;
  cache.waiter = {req.conn.address, req.async_id ? req.async_id : next_async_id(req.conn)};
  cache.holder = req.conn.address;
  cache.session_id = req.session->session_id;
  cache.persistent_id = open.persistent_id;
  cache.volatile_id = open.volatile_id;
  cache.now_ms = monotonic_ms();
  cache.break_timeout_ms = req.server.lease_break_timeout_ms;
}

// A waiting CREATE withdrawn (CANCEL, TREE_DISCONNECT, LOGOFF, the
// connection's end) stops waiting for the breaks; the breaks go on.
NtStatus withdraw_create(ServerContext& server, ConnState& conn, WaitingRequest& w, WithdrawReason) {
  server.files.drop_waiter(w.node, {conn.address, w.async_id});
  return NtStatus::Cancelled;
}

// 3.3.4.2: answered PENDING; the chain from this CREATE runs again when
// the breaks it waits for end (rerun_waiting_chain).
NtStatus wait_for_breaks(Request& req, std::shared_ptr<state::FileNode> node, const DurableRequest& durable) {
  uint64_t expected = req.async_id ? req.async_id : next_async_id(req.conn);
  WaitingRequest w;
  w.kind = WaitKind::RunAgain;
  w.node = node;
  w.has_create_guid = durable.v2_request;  // a replay of this CREATE meanwhile is refused
  w.create_guid = durable.create_guid;
  w.withdraw = withdraw_create;
  NtStatus st = start_waiting(req, std::move(w));
  if (st != NtStatus::Pending) req.server.files.drop_waiter(node, {req.conn.address, expected});
  return st;
}

// One more open file must fit the connection's, the user's and the
// process's limits (docs/security.md). A user may take at most half of
// the descriptors the budget has for clients, whatever the setting.
NtStatus open_files_fit(const Request& req) {
  const config::GlobalConfig& g = req.server.config.global;
  if (req.conn.tables->opens.size() >= g.max_open_files) return NtStatus::TooManyOpenedFiles;
  const state::ResourceBudget& budget = req.server.budget;
  if (const auto* user = req.session->user_open_count) {
    uint32_t cap = std::min(g.max_open_files_per_user, budget.usable_descriptors() / 2);
    if (user->load(std::memory_order_relaxed) >= cap) return NtStatus::TooManyOpenedFiles;
  }
  if (!budget.open_file_fits(req.server.connections.load(std::memory_order_relaxed)))
    return NtStatus::InsufficientResources;
  return NtStatus::Success;
}

// One CREATE's state, filled in by the steps of handle_create. Members are
// destroyed in reverse order: the stream hold lets go of its file before
// the unused Open and the descriptor in `o` go.
struct CreateJob {
  explicit CreateJob(Request& req) : open(std::make_unique<state::Open>()), hold(req.server.files, open.get()) {}
  CreateRequest c;
  DurableRequest durable;
  std::vector<vfs::Ea> eas;  // SMB2_CREATE_EA_BUFFER, for a file made or overwritten
  vfs::SmbPath path;
  SnapshotTarget snapshot;   // MS-SMB2 3.3.5.9.4: an open in a snapshot
  std::string stream_key;    // a named stream's xattr name; empty: the file itself
  uint32_t access = 0;       // granted, narrowed by each check
  Target t;
  Opened o;
  std::unique_ptr<state::Open> open;  // registered with the file table from open_cached() on
  LeaseRequest lease;
  StreamHold hold;  // a stream open's registration on its file
  state::OpenOutcome outcome;
  bool truncate_on_pool = false;  // the overwrite's truncation runs on the blocking pool
};

// What a CREATE that fails part-way takes back on its way out: first the
// open's place in the file table (from open_cached() on), then the entry
// or stream it made (undo_create). commit() keeps both.
class CreateRollback {
 public:
  explicit CreateRollback(Request& req, const CreateJob& job) : req_(req), job_(job) {}
  ~CreateRollback() {
    if (node_) release(req_, node_, job_.open.get());
    if (remove_created_) undo_create(req_, job_.t, job_.o, job_.stream_key);
  }
  CreateRollback(const CreateRollback&) = delete;
  CreateRollback& operator=(const CreateRollback&) = delete;
  // The open holds its place in NODE: a failure from here on gives it back.
  void release_on_failure(std::shared_ptr<state::FileNode> node) { node_ = std::move(node); }
  // A failure from here on leaves what was made.
  void keep_created() { remove_created_ = false; }
  void commit() {
    node_.reset();
    remove_created_ = false;
  }

 private:
  Request& req_;
  const CreateJob& job_;
  std::shared_ptr<state::FileNode> node_;
  bool remove_created_ = true;
};

// The request as a whole: its fields, a durable reconnect or a replay
// (ANSWERED: from an open that exists), a pipe on IPC$ (answered too).
NtStatus read_create(Request& req, CreateJob& job, ByteWriter& w, bool& answered) {
  CreateRequest& c = job.c;
  NtStatus st = read_request(req, c);
  if (st != NtStatus::Success) return st;
  if ((st = read_durable(req, c, job.durable, w, answered)) != NtStatus::Success || answered) return st;
  if ((st = validate(c)) != NtStatus::Success) return st;
  if (req.tree->share.is_ipc) {
    answered = true;
    return create_pipe(req, {c.name, c.desired_access, c.share_access, c.options}, w);
  }
  if ((answered = names_quota_file(c.name)))  // the quota index: no file behind it
    return create_quota_file(req, {c.desired_access, c.share_access, c.disposition, c.options}, w);
  if (job.durable.v2_request) return check_replay(req, c, job.durable, w, answered);
  return NtStatus::Success;
}

// What the name names (a file, a stream, in a snapshot), before anything
// is opened: the EAs to give it, the vetoes, the limits on open files, and
// the access the share grants.
NtStatus resolve_name(Request& req, CreateJob& job) {
  CreateRequest& c = job.c;
  NtStatus st;
  if (!c.contexts.empty() && (st = find_create_eas(*req.tree, c.contexts, job.eas)) != NtStatus::Success) return st;
  auto path = vfs::parse_smb_path(c.name);
  if (!path) return path.error();
  job.path = std::move(*path);
  if ((st = find_snapshot(req, c.contexts, job.path.path, job.snapshot)) != NtStatus::Success) return st;
  c.root_fd = job.snapshot.root ? job.snapshot.root->get() : req.tree->root.get();
  c.in_snapshot = bool(job.snapshot.root);
  if (c.in_snapshot && (st = check_snapshot_create(c.disposition, c.options)) != NtStatus::Success) return st;
  // MS-FSA 2.1.5.1: a stream, named or the explicit $DATA one, is never a
  // directory; that check precedes any lookup.
  c.data_stream = job.path.data_stream_type || !job.path.stream.empty();
  if (c.data_stream && (c.options & FILE_DIRECTORY_FILE)) return NtStatus::NotADirectory;
  if (!job.path.stream.empty()) {
    if (!req.tree->streams) return NtStatus::ObjectNameInvalid;  // "streams = no", or nowhere to keep them
    auto key = vfs::stream_xattr_name(job.path.stream);
    if (!key) return key.error();
    job.stream_key = std::move(*key);
  }
  if (vetoes_anything(req.tree->share) && (st = veto_status(req.tree->share, job.path.path)) != NtStatus::Success)
    return st;
  if ((st = open_files_fit(req)) != NtStatus::Success) return st;
  auto granted = grant_create_access(*req.tree, c.desired_access, c.options & FILE_DELETE_ON_CLOSE);
  if (!granted) return granted.error();
  job.access = *granted;
  return NtStatus::Success;
}

// Opens or makes the file (or the stream) and judges it: its security
// descriptor, delete-on-close, an overwrite's attributes; then closes the
// application's earlier open (SMB2_CREATE_APP_INSTANCE_ID: only a CREATE
// that passed its access checks, and before the share modes are judged,
// where that open would conflict) and gives a new file its attributes.
NtStatus open_file(Request& req, CreateJob& job) {
  const CreateRequest& c = job.c;
  Opened& o = job.o;
  NtStatus st;
  if (job.stream_key.empty()) {
    if ((st = open_target(req, c, job.access, job.path, job.t, o)) != NtStatus::Success) return st;
    if ((st = apply_security(req, c, job.t, o, job.access)) != NtStatus::Success) return st;
    if ((st = check_delete_on_close(req, c, job.t, o)) != NtStatus::Success) return st;
    if (o.truncate && (st = check_overwrite_attributes(req, c, o)) != NtStatus::Success) return st;
    if (!o.created &&
        (st = fruit::check_netatalk_locks(req, o.fd.get(), o.st, job.access, c.share_access)) != NtStatus::Success)
      return st;
  } else {
    st = open_stream_target(req, c, job.access, job.path, job.stream_key, job.t, o);
    // a stream is checked against its file's descriptor
    if (st != NtStatus::Success || (st = apply_security(req, c, job.t, o, job.access)) != NtStatus::Success)
      return st;
  }
  if (job.durable.app_instance &&
      (st = close_previous_app_instance(req, job.durable, job.path.path)) != NtStatus::Success)
    return st;  // made again when the CREATE runs again
  if (o.created) apply_new_attributes(req, c, o, !job.stream_key.empty());
  return NtStatus::Success;
}

// Registers the open with the file table: share modes, the oplock or
// lease it gets, the breaks it starts. Answered PENDING when it must wait
// for them (the CREATE runs again then, on what it made).
NtStatus register_open(Request& req, CreateJob& job, CreateRollback& rollback) {
  const CreateRequest& c = job.c;
  state::Open& open = *job.open;
  open.persistent_id = open.volatile_id = req.server.next_file_id.fetch_add(1);
  NtStatus st;
  if ((st = find_lease_request(req, c.contexts, job.lease)) != NtStatus::Success) {
    rollback.keep_created();
    return st;
  }
  state::CacheRequest cache;
  describe_caching(req, c, job.o, job.lease, open, cache);
  uint64_t node_device = job.o.st.device;
  if (!job.stream_key.empty()) {
    if ((st = job.hold.take(job.o.st.device, job.o.st.file_id, c.share_access)) != NtStatus::Success) return st;
    node_device = stream_node_device(job.o.st.device, job.stream_key);
  }
  state::OpenOutcome& outcome = job.outcome;
  outcome = req.server.files.open_cached(node_device, job.o.st.file_id, &open, job.access, c.share_access, &cache);
  post_breaks(req.server, outcome.breaks, req.conn);
  LOG_DEBUG("create %s: oplock %u lease %u access %x share %x -> %s wait %d breaks %zu granted %u",
            job.t.path.c_str(), c.oplock_level, job.lease.state, job.access, c.share_access,
            nt_status_name(outcome.status), outcome.wait, outcome.breaks.size(), outcome.grant.oplock_level);
  if (outcome.wait) {
    rollback.commit();  // nothing to take back: the CREATE runs again
    return wait_for_breaks(req, std::move(outcome.node), job.durable);
  }
  if (outcome.status != NtStatus::Success) return outcome.status;  // the open is refused after all
  rollback.release_on_failure(outcome.node);
  return NtStatus::Success;
}

// An overwrite empties the file (here or on the blocking pool) and gives
// it the attributes asked for; a file made or overwritten gets its
// allocation size and EAs.
NtStatus write_data(Request& req, CreateJob& job) {
  const CreateRequest& c = job.c;
  Opened& o = job.o;
  const bool of_file = job.stream_key.empty();
  job.truncate_on_pool = o.truncate && of_file && overwrite_goes_async(req, c, o);
  if (o.truncate) {
    auto truncated = job.truncate_on_pool ? prepare_pool_truncate(o, req.tree->streams)
                     : of_file            ? truncate_opened(o, req.tree->streams)
                                          : truncate_stream(o, job.stream_key);
    if (!truncated) return truncated.error();
  }
  if (o.truncate && !o.created && of_file) apply_overwrite_attributes(req, c, o, job.outcome.node.get());
  NtStatus st = NtStatus::Success;
  if ((o.created || o.truncate) && of_file)
    if ((st = apply_allocation_size(c, o)) == NtStatus::Success && !job.eas.empty())
      st = vfs::write_eas(o.fd.get(), job.eas);
  return st;
}

// The open as the connection keeps it.
void fill_open(Request& req, CreateJob& job) {
  state::Open& open = *job.open;
  Opened& o = job.o;
  open.node = job.outcome.node;
  open.oplock_level = job.outcome.grant.oplock_level;
  open.lease = job.outcome.grant.lease;
  open.session_id = req.session->session_id;
  open.tree_id = req.tree->tree_id;
  // Open.ChannelSequence starts at the channel the CREATE came on
  // (smb2/engine/channel_sequence.hpp): its first WRITE from that channel is current.
  if (req.conn.is_smb3()) open.channel_sequence = uint16_t(req.hdr.status);
  open.fd = std::move(o.fd);
  vfs::split_parent(open.path = std::move(job.t.path), job.t.parent, job.t.leaf);  // moved: the target's views follow
  open.is_directory = o.st.is_directory;
  open.granted_access = job.access;
  open.share_access = job.c.share_access;
  open.create_options = job.c.options;
  open.note_end(o.st.allocation_size);  // what its last close may free
  write_time_seen(open, o.st.last_write_time);  // shown for a while after its first WRITE (stat after any truncation)
  if (!job.stream_key.empty()) {
    open.stream = std::make_unique<state::StreamRef>(
        state::StreamRef{o.stream_name.empty() ? job.path.stream : std::move(o.stream_name),
                         std::move(job.stream_key), job.hold.keep(), o.st.is_directory});
    open.stream->afp = fruit::afp_stream_of(req, open.stream->name);
    open.stream->ignore_delete =
        open.stream->afp == fruit::kAfpResource && fruit::keeps_resource_fork(req, open.stream->name);
    open.stream->netatalk_metadata = open.stream->afp == fruit::kAfpInfo && fruit::netatalk_metadata(req);
    open.is_directory = false;
  }
}

// The response contexts: the lease as granted (it keeps the version it was
// created with, smb2.lease.v2_epoch2/3), MxAc, QFid and the rest, durability.
NtStatus answer_contexts(Request& req, CreateJob& job, Bytes& contexts) {
  const state::CacheGrant& grant = job.outcome.grant;
  state::Open& open = *job.open;
  LeaseAnswer answer{job.lease, grant.lease_state, grant.lease_breaking, grant.epoch};
  if (grant.lease) {
    answer.request.version = grant.version;
    answer.request.parent_key = grant.parent_key;
    answer.request.has_parent = grant.has_parent;
  }
  bool lease_answered = grant.oplock_level == state::kOplockLease;
  contexts.clear();
  NtStatus st = answer_create_contexts(req, job.c.contexts, open, job.o.st, lease_answered ? &answer : nullptr,
                                       contexts);
  if (st != NtStatus::Success) return st;
  open.snapshot_root = std::move(job.snapshot.root);
  if (job.durable.request() && !open.snapshot_root) grant_durable(req, job.durable, open, job.o.action, contexts);
  if (job.durable.app_instance) remember_app_instance(req, job.durable, open, job.path.path);
  return NtStatus::Success;
}

// The attributes the response reports.
uint32_t reported_create_attributes(Request& req, CreateJob& job) {
  Opened& o = job.o;
  uint32_t attrs = reported_attributes(req.tree->share, o.st, job.t.leaf, job.open->fd.get());
  if (o.new_attributes) attrs = vfs::merge_dos_attributes(attrs, *o.new_attributes);
  if (!o.created) {  // a new file has only what statx says: no getxattr
    o.st.attributes = attrs;
    apply_stored_metadata(o.st, *job.open);
    attrs = o.st.attributes;
  }
  return job.open->stream ? stream_attributes(attrs) : attrs;
}

// The response, and what the new open changes for others: the directory's
// leases, a watch for a leased directory. The open joins the connection
// (or, for an overwrite on the pool, once its truncation is done).
NtStatus answer_create(Request& req, CreateJob& job, const Bytes& contexts, ByteWriter& w) {
  state::Open& open = *job.open;
  Opened& o = job.o;
  uint32_t attrs = reported_create_attributes(req, job);
  Bytes pool_response;  // an overwrite on the pool: its response, answered when the truncation is done
  if (job.truncate_on_pool) {
    pool_response.resize(wire::kHeaderSize);  // write_response() aligns the contexts from the header
    ByteWriter rw(pool_response);
    write_response(rw, open, o, attrs, contexts, open.oplock_level);
    pool_response.erase(pool_response.begin(), pool_response.begin() + wire::kHeaderSize);
  } else {
    write_response(w, open, o, attrs, contexts, open.oplock_level);
  }
  if ((o.created || o.truncate) && !job.truncate_on_pool)  // a new entry, or an entry's data replaced: the directory's leases break
    break_directory_leases(req.server, job.t.parent_fd.get(), job.t.leaf, req.conn.client_guid,
                           job.lease.has_parent ? &job.lease.parent_key : nullptr);
  if (job.outcome.grant.lease && job.outcome.grant.lease->directory)  // local changes break it too
    watch_leased_directory(req.conn, req.server, open, o.st.device, o.st.file_id);
  req.compound.file_id = {open.persistent_id, open.volatile_id};
  open.charge = state::OpenCharge(&req.server.budget.open_files, req.session->user_open_count);
  if (job.truncate_on_pool) return overwrite_on_pool(req, w, std::move(job.open), std::move(pool_response));
  req.conn.tables->opens.emplace(open.volatile_id, std::move(job.open));
  return NtStatus::Success;
}

// STATUS_STOPPED_ON_SYMLINK carries the Symbolic Link Error Response
// (MS-SMB2 2.2.2.2.1) for the client to resolve the link with.
void write_symlink_error(Request& req, const Opened& o, ByteWriter& w) {
  w.bytes(symlink_error_body(o.symlink_target, o.symlink_unparsed_bytes, req.conn.dialect));
  req.error_keeps_body = true;
}

}  // namespace

// The steps in order; a failure after the file was opened or made is undone by the rollback.
NtStatus handle_create(Request& req, ByteWriter& w) {
  CreateJob job(req);
  bool answered = false;
  NtStatus st = read_create(req, job, w, answered);
  if (st != NtStatus::Success || answered) return st;
  if ((st = resolve_name(req, job)) != NtStatus::Success) return st;
  CreateRollback rollback(req, job);
  if ((st = open_file(req, job)) != NtStatus::Success) {
    if (st == NtStatus::StoppedOnSymlink) write_symlink_error(req, job.o, w);
    return st;
  }
  if ((st = register_open(req, job, rollback)) != NtStatus::Success || job.outcome.wait) return st;
  if ((st = write_data(req, job)) != NtStatus::Success) return st;
  fill_open(req, job);
  Bytes& contexts = req.conn.create_contexts_scratch;
  if ((st = answer_contexts(req, job, contexts)) != NtStatus::Success) {
    rollback.keep_created();
    return st;
  }
  rollback.commit();
  return answer_create(req, job, contexts, w);
}

}  // namespace ringsmb::smb2
