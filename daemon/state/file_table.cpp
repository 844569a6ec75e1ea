#include "state/file_table.hpp"

#include <algorithm>

#include "state/lease_break_queue.hpp"

namespace ringsmb::state {
namespace {

// MS-SMB2 2.2.13.1 access mask bits that matter for sharing.
constexpr uint32_t FILE_READ_DATA = 0x1, FILE_WRITE_DATA = 0x2, FILE_APPEND_DATA = 0x4, FILE_EXECUTE = 0x20,
                   DELETE = 0x10000;
constexpr uint32_t FILE_SHARE_READ = 1, FILE_SHARE_WRITE = 2, FILE_SHARE_DELETE = 4;

bool reads(uint32_t a) { return a & (FILE_READ_DATA | FILE_EXECUTE); }
bool writes(uint32_t a) { return a & (FILE_WRITE_DATA | FILE_APPEND_DATA); }
bool deletes(uint32_t a) { return a & DELETE; }

// Only opens that read, write or delete take part in sharing: an open for
// attributes or the security descriptor alone neither checks nor records a
// share mode (MS-FSA 2.1.5.1.2.1; what Windows' IoCheckShareAccess does).
// Word opens the parent directory that way, with no sharing, and still
// renames files inside it (smb2.rename.msword).
bool participates(uint32_t a) { return reads(a) || writes(a) || deletes(a); }

// MS-FSA 2.1.5.1.2.1: does an existing open conflict with a new one?
bool conflicts(uint32_t held_access, uint32_t held_share, uint32_t new_access, uint32_t new_share) {
  if (held_access & kStreamHolder) return deletes(new_access) && !(held_share & FILE_SHARE_DELETE);
  if (new_access & kStreamHolder) return false;
  if (!participates(held_access) || !participates(new_access)) return false;
  if (reads(held_access) && !(new_share & FILE_SHARE_READ)) return true;
  if (writes(held_access) && !(new_share & FILE_SHARE_WRITE)) return true;
  if (deletes(held_access) && !(new_share & FILE_SHARE_DELETE)) return true;
  if (reads(new_access) && !(held_share & FILE_SHARE_READ)) return true;
  if (writes(new_access) && !(held_share & FILE_SHARE_WRITE)) return true;
  if (deletes(new_access) && !(held_share & FILE_SHARE_DELETE)) return true;
  return false;
}

}  // namespace

FileTable::Shard& FileTable::shard_for(uint64_t dev, uint64_t ino) {
  return shards_[(ino ^ (dev * 31)) % kShards];
}

namespace {

// The lease or oplock held by the open `owner`, if any.
const Lease* lease_of(const FileNode& n, const void* owner) {
  for (const auto& r : n.opens)
    if (r.owner == owner) return r.lease;
  return nullptr;
}

// Another open of the file outside `mine` that reads, writes or deletes,
// or holds an oplock or lease of its own (a stat open that created the file).
bool others_open(const FileNode& n, const Lease* mine, const void* self) {
  for (const auto& o : n.opens) {
    if (o.owner == self || (mine && o.lease == mine)) continue;
    if (!is_stat_open(o.access) || (o.lease && (o.lease->state || o.lease->breaking))) return true;
  }
  return false;
}

// MS-FSA 2.1.4.12 / 2.1.5.17: what a lease of another key keeps when this
// open arrives. W goes (another opener may read or write); overwriting the
// data ends all caching; a share-mode conflict takes only H so the holder
// can close its cached handles, and breaks nothing when the holder has no H
// (the open fails at once). Oplocks fall to level II.
// An open that will delete the file on close takes H as well: the
// holder's cached handles would keep the name alive (smb2.lease.unlink:
// RH falls to R; what Samba does too).
uint32_t contend_target(const Lease& l, bool overwrite, bool share_conflict, bool delete_on_close) {
  if (overwrite) return kLeaseNone;
  if (share_conflict && !(l.state & kLeaseHandle)) return l.state;
  // The conflicting open fails, so only H goes (RWH -> RW); W goes when an
  // open actually joins (smb2.lease.break_twice).
  uint32_t t = share_conflict ? l.state & ~kLeaseHandle : l.state & ~kLeaseWrite;
  if (delete_on_close) t &= ~kLeaseHandle;
  if (l.is_oplock) t = t ? kLeaseRead : kLeaseNone;
  return normalise_lease(t);
}

// Starts breaking `l` to `target`. Breaks away from W or H (exclusive or
// batch for oplocks) need an acknowledgment; the others take effect now.
// A lease already breaking sends nothing more now: the contention is
// queued and the next step follows its acknowledgment (lease_break_queue.hpp).
void start_break(Lease& l, uint32_t target, int64_t now_ms, int64_t timeout_ms, std::vector<BreakNotice>& out) {
  if (l.breaking) return queue_break(l, target);
  if (target == l.state) return;
  if (l.version == 2) ++l.epoch;
  BreakNotice b = lease_break_notice(l, l.state, target, break_needs_ack(l, l.state));
  if (b.ack_required) {
    l.breaking = true;
    l.breaking_to = target;
    l.break_required = target;
    l.break_timeout_ms = timeout_ms;
    l.break_deadline_ms = now_ms + timeout_ms;
  } else {
    l.state = target;
  }
  out.push_back(b);
}

// Must an open wait for the breaks out on the file's other leases? One
// that waited already waits for every step of them (a further break queued
// behind the one it waited for comes first).
bool must_wait(const FileNode& n, const Lease* mine, bool share_conflict, bool waited) {
  return std::any_of(n.leases.begin(), n.leases.end(), [&](const auto& l) {
    return l.get() != mine && (waited ? l->breaking : break_blocks_open(*l, share_conflict));
  });
}

bool breaks_out(const FileNode& n) {
  return std::any_of(n.leases.begin(), n.leases.end(), [](const auto& l) { return l->breaking; });
}

void attach(FileNode& n, const std::shared_ptr<FileNode>& self, FileNode::OpenRef& ref,
            const std::shared_ptr<Lease>& l, const CacheRequest& c) {
  if (l->opens++ == 0) n.leases.push_back(l);
  l->node = self;
  l->holder = c.holder;
  l->session_id = c.session_id;
  ref.lease = l.get();
  n.lease_count.store(uint32_t(n.leases.size()), std::memory_order_relaxed);
}

// MS-SMB2 3.3.5.9.8 / 3.3.5.9.11 with MS-FSA 2.1.5.17: grant what does not
// conflict with the other opens, downgrading rather than refusing.
CacheGrant grant(FileNode& n, const std::shared_ptr<FileNode>& self, FileNode::OpenRef& ref, const CacheRequest& c) {
  CacheGrant g;
  bool has_other_handle_lease = false, has_other_oplock = false;
  for (const auto& l : n.leases) {
    if (l == c.lease) continue;
    if (l->is_oplock && l->state) has_other_oplock = true;
    if (!l->is_oplock && (l->state & kLeaseHandle)) has_other_handle_lease = true;
  }
  if (c.oplock_level == kOplockLease && c.lease && (!c.directory || c.directory_leases)) {
    Lease& l = *c.lease;
    // A directory lease caches the listing and the handle, never writes:
    // RH at most (MS-SMB2 3.3.5.9.11).
    uint32_t asked = normalise_lease(c.directory ? c.lease_state & ~kLeaseWrite : c.lease_state);
    uint32_t want = asked;
    bool others = others_open(n, &l, ref.owner);
    if (others) want &= ~kLeaseWrite;
    if (has_other_oplock) want &= ~kLeaseHandle;  // level II and H do not mix (Windows)
    want = normalise_lease(want);
    if (l.opens == 0) {  // a new lease
      l.version = c.lease_version;
      l.parent_key = c.parent_key;
      l.has_parent = c.has_parent;
      l.epoch = c.lease_version == 2 ? uint16_t(c.lease_epoch + 1) : 0;
      l.state = want;
      l.directory = c.directory;
    } else if (!l.breaking && want == asked && (want & l.state) == l.state &&
               want != l.state) {
      // An upgrade, only when all of it can be granted (what Windows does:
      // R asking for RWH beside another lease keeps R); a request for less
      // keeps what is held.
      l.state = want;
      if (l.version == 2) ++l.epoch;
    }
    attach(n, self, ref, c.lease, c);
    g.oplock_level = kOplockLease;
    g.lease = c.lease;
    g.lease_state = l.state;
    g.lease_breaking = l.breaking;
    g.epoch = l.epoch;
    g.version = l.version;
    g.parent_key = l.parent_key;
    g.has_parent = l.has_parent;
    return g;
  }
  uint32_t want = c.directory ? kLeaseNone : oplock_to_lease_bits(c.oplock_level);
  if (!want) return g;
  if (others_open(n, nullptr, ref.owner)) want = kLeaseRead;
  if (has_other_handle_lease) want = kLeaseNone;
  for (const auto& l : n.leases)  // an exclusive or batch oplock still breaking
    if (l->is_oplock && l->breaking && (l->state & kLeaseWrite)) want = kLeaseNone;
  if (!want) return g;
  auto l = std::make_shared<Lease>();
  l->is_oplock = true;
  l->state = want;
  l->persistent_id = c.persistent_id;
  l->volatile_id = c.volatile_id;
  attach(n, self, ref, l, c);
  g.lease = l;
  g.oplock_level = lease_bits_to_oplock(want);
  return g;
}

// MS-SMB2 3.3.4.7: a break goes to a connection of one of the lease's
// opens. When the holder's connection closed its last open of the lease
// (the same client, two connections: smb2.lease.v2_complex1), the breaks go
// to the connection of the newest open that still holds it.
void hand_over_holder(FileNode& n, Lease& l, const ConnAddress& closing) {
  if (l.holder.worker != closing.worker || l.holder.conn_id != closing.conn_id) return;
  const FileNode::OpenRef* newest = nullptr;
  for (const auto& r : n.opens)
    if (r.lease == &l) {
      if (r.conn.worker == closing.worker && r.conn.conn_id == closing.conn_id) return;  // still open there
      newest = &r;
    }
  if (!newest) return;
  l.holder = newest->conn;
  l.session_id = newest->session_id;
}

void detach(FileNode& n, Lease* l) {
  if (!l || --l->opens > 0) return;
  l->state = kLeaseNone;
  l->breaking = false;
  std::erase_if(n.leases, [&](const auto& p) { return p.get() == l; });
  n.lease_count.store(uint32_t(n.leases.size()), std::memory_order_relaxed);
}

}  // namespace

Result<std::shared_ptr<FileNode>> FileTable::open(uint64_t dev, uint64_t ino, const void* owner, uint32_t access,
                                                  uint32_t share_access) {
  OpenOutcome o = open_cached(dev, ino, owner, access, share_access, nullptr);
  if (o.status != NtStatus::Success) return Unexpected(o.status);
  return o.node;
}

OpenOutcome FileTable::open_cached(uint64_t dev, uint64_t ino, const void* owner, uint32_t access,
                                   uint32_t share_access, const CacheRequest* c) {
  OpenOutcome out;
  Shard& s = shard_for(dev, ino);
  std::lock_guard lock(s.mu);
  auto& slot = s.nodes[{dev, ino}];
  std::shared_ptr<FileNode> node = slot.lock();
  if (!node) {
    node = std::make_shared<FileNode>();
    node->device = dev;
    node->inode = ino;
    // Set before any other open can find the node, so no write of the
    // metadata can come before it.
    if (c && c->new_file_no_meta) node->learn_no_meta(0);
    slot = node;
  } else if (c && c->overwrite) {
    node->meta_written();  // it may store the attributes asked for
  }
  if (node->delete_pending) {
    out.status = NtStatus::DeletePending;
    return out;
  }
  const Lease* mine = c && c->oplock_level == kOplockLease ? c->lease.get() : nullptr;
  if (mine) {  // 3.3.5.9.8: a lease key names one file
    auto leased = mine->node.lock();
    if (leased && leased != node && mine->opens > 0) {
      out.status = NtStatus::InvalidParameter;
      return out;
    }
  }
  bool conflict = false;
  for (const auto& o : node->opens)
    if (conflicts(o.access, o.share_access, access, share_access)) conflict = true;
  // An open for attributes only breaks nothing, unless it overwrites.
  bool stat = is_stat_open(access) && !(c && c->overwrite);
  // An oplock is broken by opens a lease would let pass (READ_CONTROL).
  auto passes = [&](const Lease& l) { return stat && (!l.is_oplock || is_oplock_stat_open(access)); };
  bool all_pass = std::all_of(node->leases.begin(), node->leases.end(),
                              [&](const auto& l) { return l.get() == mine || passes(*l); });
  if (c && !node->leases.empty() && (!stat || !all_pass)) {
    for (auto& l : node->leases)
      if (l.get() != mine && !passes(*l))
        start_break(*l, contend_target(*l, c->overwrite, conflict, c->delete_on_close), c->now_ms,
                    c->break_timeout_ms, out.breaks);
    if (c->can_wait && must_wait(*node, mine, conflict, c->waited)) {
      node->waiters.push_back(c->waiter);
      out.wait = true;
      out.node = node;
      return out;
    }
  }
  if (conflict) {
    out.status = NtStatus::SharingViolation;
    return out;
  }
  node->opens.push_back({owner, access, share_access, nullptr, c ? c->holder : ConnAddress{}, c ? c->session_id : 0});
  // ... and gets an oplock only when it is the file's one open (what
  // Windows does: smb2.oplock.batch9a, exclusive4).
  bool alone = node->opens.size() == 1;
  if (c && !(stat && !alone && c->oplock_level != kOplockLease))
    out.grant = grant(*node, node, node->opens.back(), *c);
  if (out.grant.lease && out.grant.lease->directory && out.grant.lease->opens == 1)
    directory_leases_.fetch_add(1, std::memory_order_relaxed);
  out.node = node;
  return out;
}

bool FileTable::move_lease_holder(const std::shared_ptr<FileNode>& node, Lease& lease, uint32_t required,
                                  const ConnAddress& expected, const ConnAddress& to, uint64_t session_id,
                                  bool worker_only) {
  std::lock_guard lock(mutex_for(*node));
  if ((lease.state & required) != required || lease.breaking) return false;
  auto moves = [&](const ConnAddress& a) {
    return a.worker == expected.worker && (worker_only || a.conn_id == expected.conn_id);
  };
  if (moves(lease.holder)) {
    lease.holder = to;
    lease.session_id = session_id;
  }
  for (auto& r : node->opens)  // so that a close elsewhere never hands the breaks back to the old connection
    if (r.lease == &lease && moves(r.conn)) {
      r.conn = to;
      r.session_id = session_id;
    }
  return true;
}

bool FileTable::breaking_toward(const std::shared_ptr<FileNode>& node, const Lease& lease, const ConnAddress& holder) {
  std::lock_guard lock(mutex_for(*node));
  return lease.breaking && lease.holder.worker == holder.worker && lease.holder.conn_id == holder.conn_id;
}

CacheGrant FileTable::current_grant(const std::shared_ptr<FileNode>& node, const std::shared_ptr<Lease>& lease) {
  CacheGrant g;
  if (!lease) return g;
  std::lock_guard lock(mutex_for(*node));
  g.oplock_level = lease->is_oplock ? lease_bits_to_oplock(lease->state) : uint8_t(kOplockLease);
  g.lease = lease;
  g.lease_state = lease->state;
  g.lease_breaking = lease->breaking;
  g.epoch = lease->epoch;
  g.version = lease->version;
  g.parent_key = lease->parent_key;
  g.has_parent = lease->has_parent;
  return g;
}

bool FileTable::close(const std::shared_ptr<FileNode>& node, const void* owner) {
  return close_cached(node, owner).last;
}

CloseOutcome FileTable::close_cached(const std::shared_ptr<FileNode>& node, const void* owner) {
  CloseOutcome out;
  Shard& s = shard_for(node->device, node->inode);
  std::lock_guard lock(s.mu);
  auto& v = node->opens;
  Lease* kept = nullptr;  // the closing open's lease, when other opens still hold it
  ConnAddress closing{};
  for (const auto& r : v) {
    if (r.owner != owner) continue;
    if (r.lease && r.lease->directory && r.lease->opens == 1)
      directory_leases_.fetch_sub(1, std::memory_order_relaxed);
    if (r.lease && r.lease->opens > 1) {
      kept = r.lease;
      closing = r.conn;
    }
    detach(*node, r.lease);
  }
  v.erase_owner(owner);
  if (kept) hand_over_holder(*node, *kept, closing);
  out.wake.swap(node->waiters);  // a close may end a break or a sharing conflict
  if (!v.empty()) return out;
  s.nodes.erase({node->device, node->inode});
  out.last = true;
  return out;
}

std::vector<BreakNotice> FileTable::break_readers(const std::shared_ptr<FileNode>& node, const void* owner,
                                                  int64_t now_ms, int64_t timeout_ms) {
  std::vector<BreakNotice> out;
  if (node->lease_count.load(std::memory_order_relaxed) == 0) return out;
  std::lock_guard lock(mutex_for(*node));
  const Lease* mine = lease_of(*node, owner);
  // A level II oplock breaks even on its own open's write or lock (MS-FSA
  // 2.1.5.3, 2.1.5.7); an exclusive or batch one, or a lease, does not
  // break for its own opens.
  for (auto& l : node->leases)
    if ((l.get() != mine || (l->is_oplock && !(l->state & kLeaseWrite))) && (l->state & kLeaseRead))
      start_break(*l, kLeaseNone, now_ms, timeout_ms, out);
  return out;
}

std::vector<BreakNotice> FileTable::break_handles(const std::shared_ptr<FileNode>& node, const void* owner,
                                                  int64_t now_ms, int64_t timeout_ms) {
  bool wait = false;
  return break_handles_for_rename(node, owner, now_ms, timeout_ms, nullptr, false, wait);
}

std::vector<BreakNotice> FileTable::break_handles_for_rename(const std::shared_ptr<FileNode>& node, const void* owner,
                                                             int64_t now_ms, int64_t timeout_ms, const Waiter* waiter,
                                                             bool waited, bool& wait) {
  std::vector<BreakNotice> out;
  wait = false;
  if (node->lease_count.load(std::memory_order_relaxed) == 0) return out;
  std::lock_guard lock(mutex_for(*node));
  const Lease* mine = lease_of(*node, owner);
  for (auto& l : node->leases)
    if (l.get() != mine && (l->state & kLeaseHandle))
      start_break(*l, normalise_lease(l->state & ~kLeaseHandle), now_ms, timeout_ms, out);
  if (!waiter) return out;
  // The other opens' cached handles must close (or the holder answer)
  // before the name changes; one that waited already waits for every step.
  wait = std::any_of(node->leases.begin(), node->leases.end(), [&](const auto& l) {
    return l.get() != mine && l->breaking && (waited || (l->state & kLeaseHandle));
  });
  if (wait) node->waiters.push_back(*waiter);
  return out;
}

NtStatus FileTable::ack_lease(const std::shared_ptr<Lease>& lease, uint32_t state, std::vector<Waiter>& wake,
                              std::vector<BreakNotice>& breaks, int64_t now_ms) {
  auto node = lease->node.lock();
  if (!node) return NtStatus::Unsuccessful;
  std::lock_guard lock(mutex_for(*node));
  if (!lease->breaking) return NtStatus::Unsuccessful;
  if (state & ~lease->breaking_to) return NtStatus::RequestNotAccepted;
  lease->state = state;
  lease->breaking = false;
  // A contention queued meanwhile breaks further at once; the opens
  // waiting go on waiting until the whole break is over.
  if (!continue_break(*lease, now_ms, breaks)) wake.swap(node->waiters);
  return NtStatus::Success;
}

Result<uint8_t> FileTable::ack_oplock(const std::shared_ptr<FileNode>& node, const void* owner, uint8_t level,
                                      std::vector<Waiter>& wake, std::vector<BreakNotice>& breaks, int64_t now_ms) {
  std::lock_guard lock(mutex_for(*node));
  Lease* l = nullptr;
  for (const auto& r : node->opens)
    if (r.owner == owner) l = r.lease;
  if (!l || !l->is_oplock || !l->breaking) return Unexpected(NtStatus::InvalidOplockProtocol);  // no break out (what Samba answers)
  uint32_t acked = oplock_to_lease_bits(level);
  l->breaking = false;
  // 3.3.5.22.1: an acknowledgment above the level broken to is a protocol
  // error; the oplock is gone either way.
  if ((acked & ~l->breaking_to) || level == kOplockLease) {
    l->state = kLeaseNone;
    wake.swap(node->waiters);
    return Unexpected(NtStatus::InvalidOplockProtocol);
  }
  l->state = acked;
  if (!continue_break(*l, now_ms, breaks)) wake.swap(node->waiters);
  return lease_bits_to_oplock(acked);
}

std::vector<Waiter> FileTable::expire_breaks(const std::shared_ptr<FileNode>& node, int64_t now_ms,
                                             std::vector<BreakNotice>* breaks) {
  std::vector<Waiter> wake;
  std::vector<BreakNotice> further;
  std::lock_guard lock(mutex_for(*node));
  for (auto& l : node->leases) {
    if (l->breaking && l->break_deadline_ms <= now_ms) {
      // MS-SMB2 3.3.2.5: the break counts as acknowledged; what was
      // queued behind it is broken next (with a deadline of its own). A
      // lease whose holder never answered keeps nothing (Windows; Samba
      // 4.17 the same: smb2.lease.timeout reads it back as NONE); an
      // oplock falls to the level it was broken to.
      l->state = l->is_oplock ? l->breaking_to : kLeaseNone;
      l->breaking = false;
      continue_break(*l, now_ms, further);
    }
  }
  if (breaks) breaks->insert(breaks->end(), further.begin(), further.end());
  if (!breaks_out(*node)) wake.swap(node->waiters);
  return wake;
}

namespace {

bool same_waiter(const Waiter& a, const Waiter& b) {
  return a.async_id == b.async_id && a.conn.conn_id == b.conn.conn_id && a.conn.worker == b.conn.worker;
}

}  // namespace

void FileTable::drop_waiter(const std::shared_ptr<FileNode>& node, const Waiter& w) {
  std::lock_guard lock(mutex_for(*node));
  std::erase_if(node->waiters, [&](const Waiter& x) { return same_waiter(x, w); });
}

bool FileTable::move_waiter(const std::shared_ptr<FileNode>& node, const Waiter& from, const Waiter& to) {
  std::lock_guard lock(mutex_for(*node));
  auto it = std::ranges::find_if(node->waiters, [&](const Waiter& x) { return same_waiter(x, from); });
  if (it == node->waiters.end()) return false;
  *it = to;
  return true;
}

std::vector<BreakNotice> FileTable::break_directory(uint64_t dev, uint64_t ino, const Guid& client,
                                                   const Guid* parent_key, int64_t now_ms, int64_t timeout_ms,
                                                   bool* leased) {
  std::vector<BreakNotice> out;
  if (leased) *leased = false;
  Shard& s = shard_for(dev, ino);
  std::lock_guard lock(s.mu);
  auto it = s.nodes.find({dev, ino});
  if (it == s.nodes.end()) return out;
  auto node = it->second.lock();
  if (!node) return out;
  for (auto& l : node->leases) {
    if (l->directory && leased) *leased = true;
    if (!l->directory || !(l->state & kLeaseRead)) continue;
    // MS-FSA 2.1.4.12.2: the change comes from the holder itself (its
    // ParentLeaseKey names this lease): its cached listing stays right.
    if (parent_key && l->client_guid == client && l->key == *parent_key) continue;
    start_break(*l, kLeaseNone, now_ms, timeout_ms, out);
  }
  return out;
}

bool FileTable::delete_pending(uint64_t dev, uint64_t ino) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard lock(s.mu);
  auto it = s.nodes.find({dev, ino});
  if (it == s.nodes.end()) return false;
  auto node = it->second.lock();
  return node && node->delete_pending;
}

void FileTable::set_delete_pending(const std::shared_ptr<FileNode>& node, bool pending) {
  std::lock_guard lock(mutex_for(*node));
  node->delete_pending = pending;
}

bool FileTable::is_delete_pending(const std::shared_ptr<FileNode>& node) {
  std::lock_guard lock(mutex_for(*node));
  return node->delete_pending;
}

void FileTable::add_notify_watcher(const std::shared_ptr<FileNode>& node, const FileNode::NotifyWatcher& w) {
  std::lock_guard lock(mutex_for(*node));
  node->notify_watchers.push_back(w);
  node->notify_watcher_count.store(uint32_t(node->notify_watchers.size()), std::memory_order_relaxed);
  notify_watchers_.fetch_add(1, std::memory_order_relaxed);
}

void FileTable::remove_notify_watcher(const std::shared_ptr<FileNode>& node, const FileNode::NotifyWatcher& w) {
  std::lock_guard lock(mutex_for(*node));
  auto& v = node->notify_watchers;
  size_t removed = std::erase_if(v, [&](const FileNode::NotifyWatcher& x) {
    return x.volatile_id == w.volatile_id && x.conn.worker == w.conn.worker && x.conn.conn_id == w.conn.conn_id;
  });
  node->notify_watcher_count.store(uint32_t(v.size()), std::memory_order_relaxed);
  notify_watchers_.fetch_sub(uint32_t(removed), std::memory_order_relaxed);
}

std::vector<FileNode::NotifyWatcher> FileTable::notify_watchers(uint64_t dev, uint64_t ino) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard lock(s.mu);
  auto it = s.nodes.find({dev, ino});
  if (it == s.nodes.end()) return {};
  auto node = it->second.lock();
  if (!node) return {};
  return node->notify_watchers;  // guarded by this shard's mutex, held
}

std::vector<FileNode::NotifyWatcher> FileTable::notify_watchers(const std::shared_ptr<FileNode>& node) {
  if (node->notify_watcher_count.load(std::memory_order_relaxed) == 0) return {};
  std::lock_guard lock(mutex_for(*node));
  return node->notify_watchers;
}

size_t FileTable::open_count(const std::shared_ptr<FileNode>& node) {
  std::lock_guard lock(mutex_for(*node));
  return node->opens.size();
}

bool FileTable::has_open_streams(const std::shared_ptr<FileNode>& node) {
  std::lock_guard lock(mutex_for(*node));
  for (const auto& o : node->opens)
    if (o.access & kStreamHolder) return true;
  return false;
}

bool FileTable::handle_cached(const std::shared_ptr<FileNode>& node, const void* owner) {
  std::lock_guard lock(mutex_for(*node));
  const Lease* l = lease_of(*node, owner);
  return l && (l->state & kLeaseHandle);
}

bool FileTable::others_share_delete(const std::shared_ptr<FileNode>& node, const void* owner) {
  std::lock_guard lock(mutex_for(*node));
  for (const auto& o : node->opens)
    if (o.owner != owner && !(o.share_access & FILE_SHARE_DELETE)) return false;
  return true;
}

}  // namespace ringsmb::state
