// Per-connection protocol state: sessions, tree connects, opens.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/bytes.hpp"
#include "common/unix_user.hpp"
#include "config/share_info.hpp"
#include "crypto/smb2_keys.hpp"
#include "state/file_table.hpp"
#include "state/resource_budget.hpp"
#include "vfs/dir_entries.hpp"
#include "vfs/ntacl.hpp"

namespace ringsmb::state {

// An fd that closes itself.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

struct Tree {
  uint32_t tree_id = 0;
  config::ShareInfo share;
  bool writable = false;
  bool encrypt = false;  // SMB2_SHAREFLAG_ENCRYPT_DATA
  UniqueFd root;         // O_PATH|O_DIRECTORY fd of the share root
  bool streams = false;  // named streams: wanted by the share and storable (vfs/stream_store.hpp)
  bool eas = false;      // extended attributes: storable (trusted.* xattrs: vfs/ea_store.hpp)
  // The root's device when its filesystem keeps files in memory only
  // (vfs::memory_filesystem_device; 0: another): a FLUSH of a file there
  // makes no fsync, which would do nothing.
  uint64_t memory_fs_device = 0;
  uint32_t maximal_access = 0;
  // Who file operations on this tree run as: the session's Unix user, or
  // what the share's force user / force group make of it.
  UnixUser identity;
  // The domain SIDs (a PAC's: user, then groups) that count in NT ACL
  // checks on this tree beside the Unix identity's; none under force user.
  std::vector<vfs::ntacl::Sid> windows_sids;
  // This share's slot in the worker's per-share counters (smb2/engine/metrics.hpp;
  // UINT32_MAX: none), looked up once at TREE_CONNECT.
  uint32_t metrics_slot = UINT32_MAX;
};

// Directory enumeration state of an open directory (QUERY_DIRECTORY).
struct DirCursor {
  std::vector<vfs::DirEntry> entries;  // snapshot taken at the first query / restart
  size_t next = 0;
  bool loaded = false;
  std::string pattern;
};

// Open.LockSequenceArray (MS-SMB2 3.3.1.10, 3.3.5.14): the last
// LockSequenceNumber seen for each of the 64 indexes, and whether any was.
struct LockSequences {
  std::array<uint8_t, 64> number{};
  std::array<bool, 64> valid{};
};

// What an open of a named stream ("file:name") adds: the stream, and the
// hold on the file itself that keeps a pending delete of the file waiting
// for the stream's close and lets the file's DELETE opens see the stream's
// share mode (state::kStreamHolder).
struct StreamRef {
  std::string name;  // as the client spelled it
  std::string key;   // vfs::stream_xattr_name(name)
  std::shared_ptr<FileNode> base;
  bool base_is_directory = false;
  // On a share with Apple's extensions: which of macOS's metadata streams
  // this is (smb2/fruit/afp_streams.hpp kAfp*), 0 for any other.
  uint8_t afp = 0;
  // A delete of it is ignored (a resource fork with fruit:resource = file:
  // smb2/fruit/afp_streams.hpp); its file's delete removes it.
  bool ignore_delete = false;
  // AFP_AfpInfo on a share with fruit:metadata = netatalk: a write or a
  // delete of it reaches Netatalk's attribute too (smb2/fruit/netatalk.hpp).
  bool netatalk_metadata = false;
};

// The delayed LastWriteTime update of the writes through one open
// (smb2/files/delayed_write_time.hpp).
struct DelayedWriteTime {
  enum class Phase : uint8_t {
    Idle,     // no write through this open yet: the file's own time shows
    Pending,  // written: `shown` (the time before) shows until due_ms
    Due,      // the update came (due_ms passed, FLUSH, SET_INFO): the file's time shows
    Updated,  // as Due, after a query checked that the file's time moved
    Dirty,    // written again after the update: `shown` shows until CLOSE sets the time
  };
  Phase phase = Phase::Idle;
  int64_t due_ms = 0;      // Pending: smb2::monotonic_ms() of the update
  uint64_t shown = 0;      // Pending, Due, Dirty: the FILETIME shown before the update
  uint64_t last_seen = 0;  // the file's LastWriteTime last seen through this open (0: not known)
};

// A file whose data takes this much room may take milliseconds to give its
// blocks back (ext4 mounted with `discard`: ~87 ms for 100 MiB), in the
// close of its last descriptor once unlinked or in an ftruncate that
// shrinks it; those run on the blocking pool (smb2/engine/async_write.hpp).
inline constexpr uint64_t kLargeFileBytes = 16ull << 20;

struct Open {
  uint64_t persistent_id = 0;
  uint64_t volatile_id = 0;
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  UniqueFd fd;           // O_RDONLY/O_RDWR for files, O_RDONLY|O_DIRECTORY for directories
  std::string path;      // relative Unix path under the share root ("" = root)
  bool is_directory = false;
  uint32_t granted_access = 0;
  uint32_t share_access = 0;
  uint32_t create_options = 0;
  uint8_t oplock_level = 0;    // granted (kOplockLease when a lease was answered)
  std::shared_ptr<Lease> lease;  // the lease, or the private lease modelling the oplock
  uint64_t position = 0;  // FilePositionInformation
  // Written to, or its size, times or attributes set: its directory's
  // leases break when it closes (smb2/leases/directory_lease.hpp; Windows breaks
  // them at that close, not at each WRITE: smb2.lease.v2_request).
  bool entry_changed = false;
  std::shared_ptr<FileNode> node;  // share modes / delete-on-close, shared by all opens of the file
  DirCursor dir;
  // An open in a snapshot (Previous Versions, smb2/snapshots/): the
  // snapshot's copy of the share root, which `path` is relative to. Read-only.
  std::shared_ptr<UniqueFd> snapshot_root;
  std::unique_ptr<StreamRef> stream;  // set for a named stream; fd, path and node are then the file's fd and
                                      // path and the stream's node
  OpenCharge charge;  // counted against the process's and the user's open files while it lives
  // Durable (MS-SMB2 3.3.5.9.6, 3.3.5.9.10; smb2/durable/durable.hpp): 1 for a
  // granted DHnQ, 2 for a DH2Q, 0 otherwise. A durable open outlives its
  // connection for durable_timeout_ms (state/durable_table.hpp).
  uint8_t durable_version = 0;
  // FSCTL_LMR_REQUEST_RESILIENCY (3.3.5.15.9): Open.IsResilient. Kept
  // after its connection ends whatever it caches, for durable_timeout_ms
  // (Open.ResiliencyTimeout), and reconnected by DHnC like a durable open.
  bool resilient = false;
  // Open.IsReplayEligible (3.3.5.9.10): a replayed CREATE with its
  // CreateGuid gets this open back, until a request uses the open.
  bool replay_eligible = false;
  bool create_guid_indexed = false;  // a DH2Q open: its CreateGuid is in the DurableTable's index
  bool app_instance_indexed = false;  // SMB2_CREATE_APP_INSTANCE_ID given: in the DurableTable's index
  uint8_t create_action = 0;  // a DH2Q open's CreateAction: a replayed CREATE answers it again
  uint32_t durable_timeout_ms = 0;
  Guid create_guid{};  // DH2Q's CreateGuid
  Guid app_instance_id{};  // SMB2_CREATE_APP_INSTANCE_ID's AppInstanceId (3.3.5.9.13)
  // Open.ChannelSequence, Open.OutstandingRequestCount and
  // Open.OutstandingPreRequestCount (3.3.5.2.10, smb2/engine/channel_sequence.hpp).
  uint16_t channel_sequence = 0;
  uint32_t outstanding_requests = 0;
  uint32_t outstanding_pre_requests = 0;
  // Open.LockSequenceArray (3.3.5.14): allocated with durability, so an
  // ordinary open carries only the pointer.
  std::unique_ptr<LockSequences> lock_sequences;
  // MS-FSA 2.1.5.14.2: LastWriteTime set to -1 through this handle: the
  // FILETIME that writes through it keep, until -2 (smb2/files/frozen_times.hpp).
  std::optional<uint64_t> frozen_write_time;
  // Durable or resilient: outlives its connection (smb2/durable/durable.hpp).
  bool outlives_connection() const { return durable_version || resilient; }
  // Open.UserSetChangeTime (MS-FSA 2.1.5.14.2): a ChangeTime was set
  // through this handle; later SET_INFO changes through it keep it.
  bool user_set_change_time = false;
  DelayedWriteTime write_time;
  // QUERY_INFO FileFullEaInformation without a name list: the index of the
  // next EA to return (Open.NextEaEntry of MS-FSA; SL_RESTART_SCAN resets it).
  uint32_t ea_index = 0;
  // The quota file ($Extend\$Quota:$Q:$INDEX_ALLOCATION, smb2/quota/):
  // no file, no descriptor, no node; only QUERY_INFO, SET_INFO and CLOSE
  // reach it (CommandSpec::serves_quota_file). quota_scan_uid: where a
  // listing of the quota entries goes on (RestartScan starts it over).
  bool quota_file = false;
  uint32_t quota_scan_uid = 0;
  // The file may hold kLargeFileBytes or more: from the CREATE's statx and
  // the ends of writes through this open, never a system call of its own.
  // Its descriptor is then closed on the blocking pool (release_open).
  bool large = false;
  void note_end(uint64_t end) {
    if (end >= kLargeFileBytes) large = true;
  }
};

// A channel of a session (MS-SMB2 3.3.1.14): the connection, by id
// (unique across workers), and Channel.SigningKey (3.x).
struct Channel {
  uint64_t conn_id = 0;
  Bytes signing_key;
};

// Windows' limit of channels per session (smb2.multichannel.generic.num_channels).
inline constexpr size_t kMaxChannelsPerSession = 32;

struct Session {
  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Its keys' OpenSSL contexts go from this thread's table (the worker
  // that served it; crypto::forget_key), not only when other keys push them out.
  ~Session() { forget_keys_here(); }
  void forget_keys_here() const {
    crypto::forget_keys(keys);
    for (const Channel& c : channels) crypto::forget_key(c.signing_key);
  }

  uint64_t session_id = 0;
  enum class State { InProgress, Valid, Expired } state = State::InProgress;
  // NTLMSSP exchange in progress
  Bytes ntlm_negotiate;
  Bytes ntlm_challenge;
  std::array<uint8_t, 8> server_challenge{};
  bool spnego = true;      // false when the client sent raw NTLMSSP
  Bytes mech_types_der;    // the client's MechTypeList, for the SPNEGO mechListMIC
  // 3.1.1 preauth integrity hash of this session's SESSION_SETUP exchange
  std::array<uint8_t, 64> preauth_hash{};
  // identity
  std::string user;
  bool is_guest = false;
  bool is_anonymous = false;
  UnixUser unix_user;
  // A domain account's SIDs as the login gave them (ipc::LoginReply::sids).
  std::vector<std::string> sids;
  // This user's slot in the worker's per-user counters (smb2/engine/metrics.hpp;
  // UINT32_MAX: none), looked up once when the login completes.
  uint32_t metrics_slot = UINT32_MAX;
  std::atomic<uint32_t>* user_open_count = nullptr;  // ResourceBudget's, for "max open files per user"
  // security
  crypto::SessionKeys keys;
  bool signing_required = false;
  bool encrypt_data = false;
  // What the client did even where not required, for `ringsmbctl status`.
  bool seen_signed = false;
  bool seen_encrypted = false;
  std::unordered_map<uint32_t, std::unique_ptr<Tree>> trees;
  uint32_t next_tree_id = 1;
  // Session.ChannelList: the connections the session is reachable through,
  // the one that set it up first (its key is keys.signing_key). Empty
  // until the login completes (and in unit tests that make sessions by
  // hand): then only its own connection has it.
  std::vector<Channel> channels;
  const Channel* channel(uint64_t conn_id) const {
    for (const Channel& c : channels)
      if (c.conn_id == conn_id) return &c;
    return nullptr;
  }
  bool reachable_from(uint64_t conn_id) const { return channels.empty() || channel(conn_id); }
  // Channel.SigningKey of the channel CONN_ID, or Session.SigningKey.
  const Bytes& signing_key_for(uint64_t conn_id) const {
    const Channel* c = channel(conn_id);
    return c && !c->signing_key.empty() ? c->signing_key : keys.signing_key;
  }
};

}  // namespace ringsmb::state
