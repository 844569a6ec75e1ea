// Oplocks and leases (MS-SMB2 3.3.1.4 lease table, 3.3.1.12 per lease;
// MS-FSA 2.1.5.17 oplock semantics).
//
// One model for both: an oplock is a private lease of one open, its level
// mapped to lease bits (level II = R, exclusive = RW, batch = RWH), so grant
// and break rules are written once. The caching state of a file lives on its
// FileNode (file_table.hpp) and is guarded by that node's shard mutex; the
// LeaseTable here only maps (ClientGuid, LeaseKey) to the lease, so a lease
// break acknowledgment, which names only the key, finds its file.
//
// Nothing here touches sockets: granting or breaking yields BreakNotices and
// Waiters that the SMB2 layer posts to the owning worker threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ringsmb::state {

struct FileNode;

// MS-SMB2 2.2.13.2.8 LeaseState bits.
enum : uint32_t { kLeaseNone = 0, kLeaseRead = 0x1, kLeaseHandle = 0x2, kLeaseWrite = 0x4 };
// MS-SMB2 2.2.13 RequestedOplockLevel / OplockLevel.
enum : uint8_t {
  kOplockNone = 0x00,
  kOplockLevelII = 0x01,
  kOplockExclusive = 0x08,
  kOplockBatch = 0x09,
  kOplockLease = 0xFF,
};

using Guid = std::array<uint8_t, 16>;

// Where a connection lives: its worker thread and its id there. Messages
// for it are posted to that worker, never written from another thread.
struct ConnAddress {
  uint32_t worker = 0;
  uint64_t conn_id = 0;
};

// A CREATE waiting for breaks to be acknowledged (MS-SMB2 3.3.4.2 async).
struct Waiter {
  ConnAddress conn;
  uint64_t async_id = 0;
};

struct Lease {
  // Identity, fixed at creation.
  bool is_oplock = false;
  Guid client_guid{};
  Guid key{};
  Guid parent_key{};
  bool has_parent = false;
  uint8_t version = 1;  // 2: SMB2_CREATE_REQUEST_LEASE_V2 (epoch, parent key)
  bool directory = false;  // leases a directory: broken when its entries change (directory_lease.cpp)

  // Guarded by the file node's shard mutex.
  std::weak_ptr<FileNode> node;  // the one file this key leases
  uint32_t state = kLeaseNone;
  uint32_t breaking_to = kLeaseNone;
  bool breaking = false;  // a break that needs an acknowledgment is out
  int64_t break_deadline_ms = 0;
  // While breaking: the lowest state the contention seen since the break
  // went out requires (lease_break_queue.hpp), and the timeout of its steps.
  uint32_t break_required = kLeaseNone;
  int64_t break_timeout_ms = 35000;
  uint16_t epoch = 0;
  int opens = 0;          // opens of the node holding this lease
  // The connection the lease was last opened on (kNoConnectionWorker: a
  // durable open kept without one). Oplock breaks go there; lease breaks
  // go to the client's oldest connection (state/client_connections.hpp).
  ConnAddress holder;
  uint64_t session_id = 0;
  uint64_t persistent_id = 0, volatile_id = 0;  // oplocks: the open's FileId
};

// A break to tell a client about (MS-SMB2 2.2.23.1 / 2.2.23.2).
struct BreakNotice {
  ConnAddress to;
  Guid client{};  // a lease's ClientGuid: its break goes to the client's oldest connection
  uint64_t session_id = 0;
  bool is_oplock = false;
  Guid key{};
  uint8_t version = 1;
  uint16_t epoch = 0;
  uint32_t from = 0, to_state = 0;
  bool ack_required = false;
  uint64_t persistent_id = 0, volatile_id = 0;
};

// What a CREATE asks for, beside access and share modes.
struct CacheRequest {
  uint8_t oplock_level = kOplockNone;  // kOplockLease: `lease` is set
  std::shared_ptr<Lease> lease;        // the request's lease (new or found by key)
  uint32_t lease_state = kLeaseNone;   // requested lease bits
  uint8_t lease_version = 1;           // of a new lease: 2 for RqLs v2
  uint16_t lease_epoch = 0;            // v2: the client's epoch
  Guid parent_key{};
  bool has_parent = false;
  bool overwrite = false;              // FILE_OVERWRITE(_IF) / FILE_SUPERSEDE
  bool new_file_no_meta = false;       // the CREATE made the file and stored no metadata: see FileNode::no_stored_meta
  bool delete_on_close = false;        // FILE_DELETE_ON_CLOSE: the other leases lose H too
  bool directory = false;              // the open is a directory's
  bool directory_leases = false;       // ... and may get a lease (SMB 3.x, RqLs v2); else the key is checked, nothing granted
  bool can_wait = false;               // the CREATE may go async
  bool waited = false;                 // it waited already: it waits until no break is out (smb2.lease.breaking3)
  Waiter waiter;                       // who to wake when it must wait
  ConnAddress holder;
  uint64_t session_id = 0;
  uint64_t persistent_id = 0, volatile_id = 0;
  int64_t now_ms = 0;
  int64_t break_timeout_ms = 35000;
};

// What the caching part of an open decided.
struct CacheGrant {
  uint8_t oplock_level = kOplockNone;  // kOplockLease when a lease was answered
  std::shared_ptr<Lease> lease;        // the open's lease or private oplock lease
  uint32_t lease_state = kLeaseNone;
  bool lease_breaking = false;         // SMB2_LEASE_FLAG_BREAK_IN_PROGRESS
  uint16_t epoch = 0;
  uint8_t version = 1;                 // of the lease, not of this request
  Guid parent_key{};
  bool has_parent = false;
};

// Level <-> bits for oplocks.
uint32_t oplock_to_lease_bits(uint8_t level);
uint8_t lease_bits_to_oplock(uint32_t bits);
// Drops what cannot be granted alone: H or W without R.
uint32_t normalise_lease(uint32_t bits);
// An open that neither reads, writes, nor deletes (attributes, security):
// it breaks nothing and does not count against a lease's W.
bool is_stat_open(uint32_t access);
// The same for an open that meets an oplock (no READ_CONTROL).
bool is_oplock_stat_open(uint32_t access);

// The global map (ClientGuid, LeaseKey) -> lease. Sharded; entries die with
// their last open.
class LeaseTable {
 public:
  // The lease of this key, created when the client has none.
  std::shared_ptr<Lease> find_or_create(const Guid& client, const Guid& key);
  std::shared_ptr<Lease> find(const Guid& client, const Guid& key);

 private:
  struct Key {
    Guid client, key;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<Key, std::weak_ptr<Lease>, KeyHash> leases;
  };
  static constexpr size_t kShards = 16;
  Shard& shard_for(const Key& k);
  std::array<Shard, kShards> shards_;
};

}  // namespace ringsmb::state
