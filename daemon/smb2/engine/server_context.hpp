// State shared by every connection and worker of one ringsmbd.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "common/blocking_pool.hpp"
#include "common/bytes.hpp"
#include "config/config.hpp"
#include "ipc/control_plane.hpp"
#include "state/client_connections.hpp"
#include "state/durable_table.hpp"
#include "state/file_table.hpp"
#include "state/lease_table.hpp"
#include "state/resource_budget.hpp"
#include "state/lock_table.hpp"
#include "state/session_registry.hpp"
#include "vfs/name_index.hpp"
#include "vfs/ntacl_store.hpp"
#include "vfs/short_names.hpp"

namespace ringsmb::smb2 {

struct ConnState;

// Work for a connection, run on the worker thread that owns it with that
// connection's state and its output buffer (flushed afterwards). The task is
// dropped when the connection is gone.
using ConnTask = std::function<void(ConnState&, Bytes& out)>;
// Whether a timed ConnTask is still wanted when its time comes (null:
// always). Set false by the connection's worker, read by the worker that
// keeps the task (another one if the connection moved meanwhile).
using Wanted = std::shared_ptr<const std::atomic<bool>>;

// Thread-safe hand-off of a ConnTask to the connection's worker (the
// transport implements it: a queue and a reactor wake-up).
class ConnPoster {
 public:
  virtual ~ConnPoster() = default;
  virtual void post(const state::ConnAddress& to, ConnTask task) = 0;
  // The same at DUE_MS (monotonic_ms()), unless WANTED (when given) is
  // false by then: a task that has become moot wakes nobody. A poster
  // without timers runs it at once, which only makes a deferred interim
  // response go out early.
  virtual void post_at(const state::ConnAddress& to, int64_t /*due_ms*/, ConnTask task, Wanted /*wanted*/) {
    post(to, std::move(task));
  }
};

struct ServerContext {
  config::Config config;
  ipc::ControlPlane* control = nullptr;
  state::FileTable files;
  state::LockTable locks;  // byte-range locks (SMB2 LOCK), checked by READ and WRITE
  vfs::NameIndexCache names;
  // Long names behind the short names clients were told (vfs/short_names.hpp).
  vfs::ShortNameMemory short_names;
  // Stored NT security descriptors and their cache (vfs/ntacl_store.hpp).
  vfs::NtAclStore ntacls;
  std::array<uint8_t, 16> server_guid{};
  uint64_t start_time = 0;  // FILETIME
  Bytes negotiate_hint;     // SPNEGO NegTokenInit for NEGOTIATE responses
  std::atomic<uint64_t> next_session_id{1};
  std::atomic<uint64_t> next_file_id{1};
  // Sizes advertised in NEGOTIATE (the config's smb2 max read/write/trans).
  uint32_t max_read = 0, max_write = 0, max_trans = 0;
  // READs of at least this many bytes are sent with sendfile() instead of
  // pread into the reply when nothing signs or encrypts the reply (below
  // it, one copy costs less than the extra fstat, dup and syscalls; the
  // measurements are in docs/PERFORMANCE.md).
  uint32_t sendfile_min_read = 64 * 1024;
  // A WRITE alone in its frame of at least this many bytes runs its pwrite
  // on the blocking pool (smb2/commands/write.cpp): a large pwrite may sleep in the
  // kernel's dirty-page throttling for milliseconds, which on the worker
  // stalls every connection it serves. Smaller writes stay inline (a hand-
  // off costs more than their pwrite). Per connection, at most
  // max_write_bytes_in_flight bytes of them are in flight (one at least);
  // a WRITE past that waits for them like any other request.
  uint32_t async_write_min = 64 * 1024;
  uint64_t max_write_bytes_in_flight = 16 * 1024 * 1024;
  // Oplocks and leases: the (ClientGuid, LeaseKey) index, how long a break
  // waits for its acknowledgment (MS-SMB2 3.3.2.5; Windows: 35 s), and the
  // way to reach another worker's connection.
  state::LeaseTable leases;
  int64_t lease_break_timeout_ms = 35000;
  ConnPoster* poster = nullptr;
  // Threads for system calls that may block for long (FLUSH's fsync, large
  // WRITEs' pwrite), so that they stall no worker; null (tests): such
  // calls run inline.
  std::unique_ptr<BlockingPool> blocking;
  // Requests answered STATUS_PENDING that may wait at once (smb2/engine/async_engine.hpp):
  // past either limit a request that would wait gets STATUS_INSUFFICIENT_RESOURCES
  // (MS-SMB2 3.3.4.2 lets a server refuse to go async). docs/configuration.md.
  uint32_t max_async_per_connection = 512;
  uint32_t max_async_per_session = 256;
  // Directories one connection may watch for CHANGE_NOTIFY (a WATCH_TREE
  // counts each beneath); 0 turns change notification off ("max notify
  // watches", docs/configuration.md).
  uint32_t max_notify_watches = 8192;
  // Open TCP connections over all workers, for "max connections".
  std::atomic<uint32_t> connections{0};
  // Descriptors, open files per user, connections per address.
  state::ResourceBudget budget;
  // Durable opens kept after their connection ended, and where each
  // session lives, for reconnects (smb2/durable/durable.hpp). Declared last: kept
  // opens release what they hold in the tables above when destroyed.
  state::DurableTable durables;
  state::SessionRegistry sessions;
  // Each client's connections, oldest first: where its lease breaks go.
  state::ClientConnections clients;
  // Durable timeouts (MS-SMB2 3.3.5.9.6, 3.3.5.9.10): DHnQ opens, and DH2Q
  // opens that ask for 0, get the default; a DH2Q timeout is capped.
  uint32_t durable_timeout_ms = 60000;
  uint32_t durable_max_timeout_ms = 300000;
};

}  // namespace ringsmb::smb2
