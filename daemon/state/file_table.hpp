// Files open anywhere in the server, keyed by (device, inode), so share
// modes and delete-on-close work across connections and worker threads.
// Sharded: a create locks one shard, never a global lock.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "common/ntstatus.hpp"
#include "state/lease_table.hpp"
#include "vfs/file_meta.hpp"

namespace ringsmb::state {

// The access an open of a named stream registers on its file (a reserved
// ACCESS_MASK bit, never granted to a client): share modes are per stream,
// so it conflicts with nothing, except that an open of the file asking for
// DELETE fails while a stream is open without FILE_SHARE_DELETE (MS-FSA
// 2.1.5.1.2; smb2.streams.delete).
inline constexpr uint32_t kStreamHolder = 0x08000000;

struct FileNode {
  uint64_t device = 0;
  uint64_t inode = 0;
  struct OpenRef {
    const void* owner = nullptr;  // the Open
    uint32_t access;
    uint32_t share_access;
    Lease* lease = nullptr;  // the open's lease or oplock, if any
    // The open's connection and session: when the lease's holder closes
    // its last open of the lease, its breaks go to another open's
    // connection (MS-SMB2 3.3.4.7: a connection of Lease.LeaseOpens).
    ConnAddress conn{};
    uint64_t session_id = 0;
  };
  // The file's opens, guarded by the shard's mutex. The first two live in
  // the node itself, which make_shared allocates with its count: a file
  // opened once or twice at a time (most are) costs no allocation for
  // them. A third moves them all into `more_`, where they stay, so they
  // are contiguous either way.
  class OpenRefs {
   public:
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    OpenRef* begin() { return data(); }
    OpenRef* end() { return data() + n_; }
    const OpenRef* begin() const { return data(); }
    const OpenRef* end() const { return data() + n_; }
    OpenRef& back() { return data()[n_ - 1]; }
    void push_back(const OpenRef& r) {
      if (more_.empty() && n_ < kInline) {
        inline_[n_++] = r;
        return;
      }
      if (more_.empty()) {
        more_.reserve(2 * kInline);
        more_.assign(inline_, inline_ + n_);
      }
      more_.push_back(r);
      ++n_;
    }
    // Removes OWNER's entries.
    void erase_owner(const void* owner) {
      OpenRef* kept = std::remove_if(begin(), end(), [&](const OpenRef& r) { return r.owner == owner; });
      n_ = size_t(kept - data());
      if (!more_.empty()) more_.resize(n_);  // when empty, data() is inline_ again (n_ is 0 then)
    }

   private:
    static constexpr size_t kInline = 2;
    // In more_ when it is not empty, else in inline_[0, n_).
    OpenRef* data() { return more_.empty() ? inline_ : more_.data(); }
    const OpenRef* data() const { return more_.empty() ? inline_ : more_.data(); }
    OpenRef inline_[kInline]{};
    std::vector<OpenRef> more_;
    size_t n_ = 0;
  };
  OpenRefs opens;
  // Leases and oplocks held on the file, and CREATEs waiting for their
  // breaks; guarded by the shard's mutex. Empty on the common path.
  std::vector<std::shared_ptr<Lease>> leases;
  std::vector<Waiter> waiters;
  // leases.size(), readable without the lock: WRITE skips the lock when 0.
  std::atomic<uint32_t> lease_count{0};
  bool delete_pending = false;
  // CHANGE_NOTIFY watches of this directory (smb2/notify/notify_watch.cpp), told
  // when it becomes delete pending; guarded by the shard's mutex, counted
  // so that setting delete-on-close looks without the lock when none.
  struct NotifyWatcher {
    ConnAddress conn;
    uint64_t volatile_id = 0;
  };
  std::vector<NotifyWatcher> notify_watchers;
  std::atomic<uint32_t> notify_watcher_count{0};
  // Path (relative to the share root fd) and that fd's identity, for the
  // unlink when the last handle closes with delete pending.
  std::string path;
  int root_fd = -1;
  // Whether the file's server-private metadata (vfs/file_meta.hpp) is
  // known, and then what it holds (meta_value, empty when the file has
  // none): bit 0 of meta_state while it is known, the other bits count the
  // writes of that xattr through this node. Known when a CREATE of this
  // server made the file and stored none (set before any other open can
  // find the node), when a getxattr through one of its opens found none
  // and no write came through the node meanwhile, or when a write of this
  // server through one of its opens was the only one since it began
  // (learn_meta compares the count read before). Every write of the xattr
  // through an open of this node or of one of its named streams ends it
  // (smb2::write_stored_meta, before and after the write), and so does
  // every overwrite's open (it may store the attributes asked for). Only a
  // process with CAP_SYS_ADMIN can write it (trusted.*), so while the node
  // lives its opens skip the getxattr: the Linux client's CLOSE after the
  // SET_INFO of a file's times reads no xattr.
  std::atomic<uint32_t> meta_state{0};
  // The metadata while it is known; false when it is not.
  bool known_meta(vfs::FileMeta& out) const {
    if (!(meta_state.load() & 1u)) return false;
    std::lock_guard lock(meta_mutex);
    if (!(meta_state.load() & 1u)) return false;
    out = meta_value;
    return true;
  }
  bool no_stored_meta() const {
    vfs::FileMeta meta;
    return known_meta(meta) && meta.empty();
  }
  // The count to hand learn_meta, read before the getxattr.
  uint32_t meta_generation() const { return meta_state.load() & ~1u; }
  // META is what the file holds, unless a write began since GENERATION.
  // The value is set under the lock before bit 0, and only while the bit
  // is clear, so a reader that finds the bit under the lock reads it whole.
  void learn_meta(uint32_t generation, const vfs::FileMeta& meta) {
    std::lock_guard lock(meta_mutex);
    if (meta_state.load() != generation) return;
    meta_value = meta;
    uint32_t expected = generation;
    meta_state.compare_exchange_strong(expected, generation | 1u);
  }
  void learn_no_meta(uint32_t generation) { learn_meta(generation, {}); }
  // Ends what is known; the new count.
  uint32_t meta_written() {
    uint32_t v = meta_state.load();
    while (!meta_state.compare_exchange_weak(v, (v + 2u) & ~1u)) {
    }
    return (v + 2u) & ~1u;
  }

 private:
  mutable std::mutex meta_mutex;
  vfs::FileMeta meta_value;
};

// What FileTable::open decided.
struct OpenOutcome {
  NtStatus status = NtStatus::Success;
  std::shared_ptr<FileNode> node;  // set on success and when waiting
  // Breaks that need an acknowledgment are out and the request may wait:
  // the open was NOT registered; the waiter is woken when they end.
  bool wait = false;
  CacheGrant grant;
  std::vector<BreakNotice> breaks;  // to send once the lock is released
};

// What FileTable::close decided.
struct CloseOutcome {
  bool last = false;            // the file's last open: do a pending delete
  std::vector<Waiter> wake;     // CREATEs to retry
};

class FileTable {
 public:
  // Registers an open of (dev, ino) after checking share modes against the
  // existing opens (MS-FSA 2.1.5.1.2 share access check). On success the
  // returned node is shared by every open of that file.
  Result<std::shared_ptr<FileNode>> open(uint64_t dev, uint64_t ino, const void* owner, uint32_t access,
                                         uint32_t share_access);
  // The same, with oplocks and leases: breaks what this open contends
  // (MS-FSA 2.1.5.17, MS-SMB2 3.3.5.9.8/3.3.5.9.11) and grants what does
  // not conflict, downgrading rather than refusing. `cache` may be null (no
  // oplock requested, nothing waits).
  OpenOutcome open_cached(uint64_t dev, uint64_t ino, const void* owner, uint32_t access, uint32_t share_access,
                          const CacheRequest* cache);
  // Removes the open; returns true when it was the last one (the caller then
  // performs a pending delete).
  bool close(const std::shared_ptr<FileNode>& node, const void* owner);
  CloseOutcome close_cached(const std::shared_ptr<FileNode>& node, const void* owner);

  // A WRITE / LOCK / SET_INFO end-of-file on `owner`'s open: other opens' read
  // caching ends (MS-FSA 2.1.5.3, 2.1.4.12). Never waits. Cheap when no
  // lease is held: one relaxed atomic load.
  std::vector<BreakNotice> break_readers(const std::shared_ptr<FileNode>& node, const void* owner,
                                         int64_t now_ms, int64_t timeout_ms);
  // A rename or delete through `owner`'s open: other leases lose H. Returns
  // true when the caller should wait (acks outstanding).
  std::vector<BreakNotice> break_handles(const std::shared_ptr<FileNode>& node, const void* owner,
                                         int64_t now_ms, int64_t timeout_ms);
  // The same for a rename that may wait (MS-FSA 2.1.5.14.11 with 2.1.4.12:
  // the operation waits while another open's handle caching breaks). When
  // WAITER is given and such a break is out, WAITER is registered on the
  // node (woken like a CREATE waiting for its breaks) and WAIT is set.
  std::vector<BreakNotice> break_handles_for_rename(const std::shared_ptr<FileNode>& node, const void* owner,
                                                    int64_t now_ms, int64_t timeout_ms, const Waiter* waiter,
                                                    bool waited, bool& wait);

  // Lease break acknowledgment (MS-SMB2 3.3.5.22.2). A break queued behind
  // the acknowledged one goes out next (BREAKS, to send once the lock is
  // released); the waiters are woken (WAKE) only when no break remains.
  NtStatus ack_lease(const std::shared_ptr<Lease>& lease, uint32_t state, std::vector<Waiter>& wake,
                     std::vector<BreakNotice>& breaks, int64_t now_ms);
  // Oplock break acknowledgment (3.3.5.22.1): the granted level on success.
  Result<uint8_t> ack_oplock(const std::shared_ptr<FileNode>& node, const void* owner, uint8_t level,
                             std::vector<Waiter>& wake, std::vector<BreakNotice>& breaks, int64_t now_ms);
  // Breaks past their deadline count as acknowledged (MS-SMB2 3.3.2.5); a
  // break queued behind one starts then (into BREAKS when given).
  std::vector<Waiter> expire_breaks(const std::shared_ptr<FileNode>& node, int64_t now_ms,
                                    std::vector<BreakNotice>* breaks = nullptr);
  // An entry of directory (DEV, INO) was added, removed, renamed or
  // changed: the directory's leases lose R (MS-SMB2 3.3.1.4), which for RH
  // leaves nothing, except the lease PARENT_KEY of CLIENT names (the
  // change is its own). Nobody waits for these breaks. LEASED (when given)
  // tells whether the directory has a directory lease at all.
  std::vector<BreakNotice> break_directory(uint64_t dev, uint64_t ino, const Guid& client, const Guid* parent_key,
                                           int64_t now_ms, int64_t timeout_ms, bool* leased = nullptr);
  // Is any directory leased anywhere? One relaxed load: the changes of
  // entries look for directory leases only then.
  bool directory_leases_held() const { return directory_leases_.load(std::memory_order_relaxed) != 0; }
  // Forgets a waiter (CANCEL, or its connection ended).
  void drop_waiter(const std::shared_ptr<FileNode>& node, const Waiter& w);
  // The waiter FROM is woken as TO from now on (a waiting CREATE handed to
  // another channel of its session); false when FROM no longer waits (its
  // wake-up is already on its way to FROM).
  bool move_waiter(const std::shared_ptr<FileNode>& node, const Waiter& from, const Waiter& to);
  // Durable opens (smb2/durable/durable.cpp): false when LEASE lacks any of
  // REQUIRED or is breaking; otherwise its breaks go to TO (session
  // SESSION_ID) from now on if they went to EXPECTED (only its worker
  // compared when WORKER_ONLY): a durable open kept without its
  // connection, or reconnected on another.
  bool move_lease_holder(const std::shared_ptr<FileNode>& node, Lease& lease, uint32_t required,
                         const ConnAddress& expected, const ConnAddress& to, uint64_t session_id, bool worker_only);
  // Is LEASE breaking (an acknowledgment awaited) while its breaks go to
  // HOLDER? A durable open kept while a break raced its keeping asks.
  bool breaking_toward(const std::shared_ptr<FileNode>& node, const Lease& lease, const ConnAddress& holder);
  // What LEASE holds now, as a CREATE would answer it (a durable reconnect
  // or a replayed CREATE answers the open it hands back).
  CacheGrant current_grant(const std::shared_ptr<FileNode>& node, const std::shared_ptr<Lease>& lease);
  // Is this (dev, ino) open with delete pending?
  bool delete_pending(uint64_t dev, uint64_t ino);
  void set_delete_pending(const std::shared_ptr<FileNode>& node, bool pending);
  bool is_delete_pending(const std::shared_ptr<FileNode>& node);
  // Count of other opens on the node (rename/delete checks).
  size_t open_count(const std::shared_ptr<FileNode>& node);
  // CHANGE_NOTIFY watches of a directory (FileNode::notify_watchers).
  void add_notify_watcher(const std::shared_ptr<FileNode>& node, const FileNode::NotifyWatcher& w);
  void remove_notify_watcher(const std::shared_ptr<FileNode>& node, const FileNode::NotifyWatcher& w);
  std::vector<FileNode::NotifyWatcher> notify_watchers(const std::shared_ptr<FileNode>& node);
  // The same for the directory (DEV, INO), if it has a node.
  std::vector<FileNode::NotifyWatcher> notify_watchers(uint64_t dev, uint64_t ino);
  // Is any directory watched anywhere? One relaxed load: the SET_INFO path
  // reports its changes to watchers only then (smb2/notify/notify_report.hpp).
  bool notify_watched() const { return notify_watchers_.load(std::memory_order_relaxed) != 0; }
  // Re-checks share modes for delete access on an already-open file: true
  // when every other open shares delete.
  bool others_share_delete(const std::shared_ptr<FileNode>& node, const void* owner);
  // Is one of the file's named streams open (a kStreamHolder registration)?
  bool has_open_streams(const std::shared_ptr<FileNode>& node);
  // Does OWNER's open hold a lease or oplock with handle caching (H), one
  // that a break may still take (a handle only the lease keeps open, such
  // as a client's deferred close)? True while a break of H is out.
  bool handle_cached(const std::shared_ptr<FileNode>& node, const void* owner);

 private:
  static constexpr size_t kShards = 64;
  using Key = std::pair<uint64_t, uint64_t>;
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second); }
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<Key, std::weak_ptr<FileNode>, KeyHash> nodes;
  };
  Shard& shard_for(uint64_t dev, uint64_t ino);
  std::mutex& mutex_for(const FileNode& n) { return shard_for(n.device, n.inode).mu; }
  std::array<Shard, kShards> shards_;
  std::atomic<uint32_t> directory_leases_{0};  // directory leases with an open
  std::atomic<uint32_t> notify_watchers_{0};   // FileNode::notify_watchers, all nodes

};

}  // namespace ringsmb::state
