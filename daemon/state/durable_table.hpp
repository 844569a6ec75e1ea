// Durable opens whose connection is gone (MS-SMB2 3.3.5.9.6-3.3.5.9.12,
// 3.3.7.1): kept, with everything the open holds in the file, lease and
// lock tables, until the client reconnects them (a CREATE with DHnC or
// DH2C) or their timeout passes (then they are closed as by CLOSE). Also
// the index of the CreateGuids of live v2 durable opens, for replay
// detection.
//
// In memory only: a restart of ringsmbd loses them (docs/durable.md).
// Sharded like the file table; nothing here is touched by a CREATE that
// asks for no durability.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/ntstatus.hpp"
#include "state/resource_budget.hpp"
#include "state/session.hpp"

namespace ringsmb::state {

// The worker of a lease holder that has no connection: a kept durable
// open. Its conn_id is that open's persistent id, so a break that would
// need its acknowledgment can find it (smb2/durable/durable.cpp closes it).
inline constexpr uint32_t kNoConnectionWorker = UINT32_MAX;

// The share root that kept opens need for their delete-on-close: one
// descriptor per directory, shared by all the kept opens beneath it, and
// counted as an open file while it lives (a kept open holds its own
// descriptor, charged by its Open, and this one at most).
struct KeptRoot {
  UniqueFd fd;
  OpenCharge charge;
};

// A durable open kept after its connection ended.
struct KeptOpen {
  std::unique_ptr<Open> open;
  Guid client_guid{};    // of the connection it was opened on (Open.ClientGuid)
  std::string owner;     // the session's user (Open.DurableOwner)
  std::string client_address;  // of the connection it was opened on (for status and logs)
  std::string share;     // a reconnect must come through a tree of the same share
  std::shared_ptr<const KeptRoot> share_root;  // for delete-on-close when it expires
  std::shared_ptr<const config::RecycleConfig> recycle;  // the share's recycle bin then; null: none
  UnixUser identity;  // who deletes it then
  int64_t deadline_ms = 0;  // monotonic
  uint32_t worker = 0;      // the worker that closes it at the deadline
};

// An open made with SMB2_CREATE_APP_INSTANCE_ID (MS-SMB2 3.3.5.9.13).
struct AppInstanceOpen {
  Guid client_guid{};  // of the connection it was opened on
  std::string user;    // the session's user: another user's open is never closed for it
  std::string share;
  std::string path;  // as the CREATE named it (compared without case)
  uint64_t persistent_id = 0;
  uint64_t volatile_id = 0;
};

class DurableTable {
 public:
  // Keeps K until take() or its deadline; returns the reconnects that
  // waited for it (wait_for_live).
  std::vector<Waiter> keep(KeptOpen k);

  // Live durable opens, by persistent id: the connection that holds each.
  // A reconnect that arrives before that connection's end has been seen
  // (the client closed it and reconnected at once; its worker has not run
  // yet) waits for the open to be kept, at most until DEADLINE_MS.
  void set_live(uint64_t persistent_id, const ConnAddress& conn);
  // The open is closed for good: returns the reconnects that waited.
  std::vector<Waiter> clear_live(uint64_t persistent_id);
  // Registers W if the open is live on a connection other than ME.
  bool wait_for_live(uint64_t persistent_id, const ConnAddress& me, const Waiter& w, int64_t deadline_ms);
  void cancel_wait(uint64_t persistent_id, const Waiter& w);
  // The waits of WORKER's connections past their deadline.
  std::vector<Waiter> expire_waits(int64_t now_ms, uint32_t worker);
  // Takes the kept open with this persistent id when CHECK accepts it
  // (returns Success); otherwise CHECK's status, or OBJECT_NAME_NOT_FOUND
  // when none is kept. CHECK runs under the shard lock.
  Result<KeptOpen> take(uint64_t persistent_id, const std::function<NtStatus(const KeptOpen&)>& check);
  // Takes every kept open that holds lease L.
  std::vector<KeptOpen> take_lease(const Lease* l);
  // Takes the kept opens of WORKER whose deadline has passed.
  std::vector<KeptOpen> expire(int64_t now_ms, uint32_t worker);
  // Takes everything (shutdown).
  std::vector<KeptOpen> take_all();
  // Runs VISIT on every kept open, under its shard's lock: VISIT copies
  // what it needs and takes no other lock.
  void for_each_kept(const std::function<void(const KeptOpen&)>& visit);
  size_t kept() const { return kept_.load(std::memory_order_relaxed); }
  // The shared descriptor of the directory TREE_ROOT names (a tree's share
  // root), duplicated the first time, charged to OPEN_FILES; null when
  // it cannot be had (the open is still kept; only its delete-on-close
  // would then not happen).
  std::shared_ptr<const KeptRoot> share_root(int tree_root, std::atomic<uint32_t>* open_files);

  // v2 replay index: CreateGuid -> (ClientGuid, persistent id) of a live
  // durable open, registered when DH2Q is granted, removed when the open
  // is closed for good.
  void index_create_guid(const Guid& client, const Guid& create, uint64_t persistent_id);
  void unindex_create_guid(const Guid& create, uint64_t persistent_id);
  std::optional<uint64_t> find_create_guid(const Guid& client, const Guid& create);

  // AppInstanceId index (3.3.5.9.13): the opens of APP, registered at their
  // CREATE, removed when they are closed for good.
  void index_app_instance(const Guid& app, AppInstanceOpen open);
  void unindex_app_instance(const Guid& app, uint64_t persistent_id);
  // The opens of APP on SHARE, PATH made by USER through a client other
  // than CLIENT.
  std::vector<AppInstanceOpen> find_app_instance(const Guid& app, const Guid& client, std::string_view user,
                                                 std::string_view share, std::string_view path);
  // The connection a live open (set_live) is on.
  std::optional<ConnAddress> live_at(uint64_t persistent_id);

  // OPEN is closed for good: out of the CreateGuid and AppInstanceId
  // indexes, no longer live; returns the reconnects that waited for it.
  std::vector<Waiter> forget(const Open& open);

 private:
  // Takes out every kept open SELECTED picks (defined in the .cpp).
  template <typename Pred>
  std::vector<KeptOpen> take_if(Pred selected);
  static constexpr size_t kShards = 16;
  struct GuidHash {
    size_t operator()(const Guid& g) const;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<uint64_t, KeptOpen> kept;  // by persistent id
    struct Live {
      ConnAddress conn;
      std::vector<std::pair<Waiter, int64_t>> waits;  // reconnects, with their deadlines
    };
    std::unordered_map<uint64_t, Live> live;  // by persistent id
    std::unordered_map<Guid, std::pair<Guid, uint64_t>, GuidHash> by_create_guid;
    std::unordered_multimap<Guid, AppInstanceOpen, GuidHash> by_app_instance;
  };
  Shard& shard_for(uint64_t persistent_id) { return shards_[persistent_id % kShards]; }
  Shard& shard_for(const Guid& g) { return shards_[GuidHash()(g) % kShards]; }
  // Forgets where `persistent_id` is live and hands back the reconnects
  // waiting for that to end (s.mu held).
  std::vector<Waiter> end_live_locked(Shard& s, uint64_t persistent_id);
  std::array<Shard, kShards> shards_;
  struct RootId {
    uint64_t dev = 0, ino = 0, mount = 0;
    bool operator==(const RootId&) const = default;
  };
  struct RootIdHash {
    size_t operator()(const RootId& r) const {
      return size_t((r.ino * 0x9E3779B97F4A7C15ull) ^ r.dev ^ (r.mount << 32));
    }
  };
  std::mutex roots_mu_;
  std::unordered_map<RootId, std::weak_ptr<const KeptRoot>, RootIdHash> roots_;  // guarded by roots_mu_
  std::atomic<size_t> kept_{0};
  std::atomic<size_t> waits_{0};
};

}  // namespace ringsmb::state
