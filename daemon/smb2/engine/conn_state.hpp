// The SMB2 protocol state of one TCP connection: what NEGOTIATE settled,
// the sessions, and the opens. The transport owns one per connection and
// hands it frames; everything here runs on the connection's worker thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/blocking_pool.hpp"
#include "common/large_buffer.hpp"
#include "common/ntstatus.hpp"
#include "crypto/primitives.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/engine/credits.hpp"
#include "state/session.hpp"
#include "vfs/change_source.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smb2 {

struct ConnState;
struct WorkerMetrics;
struct ServerContext;
struct NotifyTable;
class DirLeaseWatches;

inline constexpr uint64_t kRelatedFileId = 0xFFFFFFFFFFFFFFFFull;
// Unfinished session setups one connection may have open (issue 11: 40,000
// of them cost every later frame 825 us and 60,000 took 37 MB).
inline constexpr uint32_t kMaxSessionsInProgress = 32;

struct FileId {
  uint64_t persistent = 0;
  uint64_t volatile_id = 0;
};

// What a compound chain carries from one element to the next (MS-SMB2 3.3.5.2.7).
struct CompoundState {
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  FileId file_id{kRelatedFileId, kRelatedFileId};
  bool in_chain = false;  // at least one element done
  // The previous element had no valid session / tree: a related element
  // that would inherit it fails with STATUS_INVALID_PARAMETER.
  bool session_failed = false;
  bool tree_failed = false;
};

// An open of an IPC$ named pipe: its state::Open (no fd, no FileNode) is in
// ConnState::opens like any other; this says which control-plane pipe it is.
struct PipeOpen {
  uint32_t handle = 0;  // the control plane's (ipc::PipeOpenRequest::handle)
  std::string name;     // as the client named it
  bool byte_mode = false;  // FilePipeInformation ReadMode: byte stream instead of message
};

// File data that goes out with a response without being copied into the
// output buffer: the transport sends the buffer's bytes before `at`, then
// `length` bytes of the file from `offset` (sendfile, from the page cache),
// then the rest. Only an unsigned, unencrypted, uncompounded READ response
// does this (smb2/commands/read.cpp); its DataLength was fixed from the file size.
// A signed or encrypted one (AES-GCM) instead reads the file into `data`
// first, a buffer of its own that is never zero-filled (the output buffer,
// a Bytes, would be): the signature or cipher covers it in place, and the
// transport sends it from memory. `length` is then what pread returned.
struct FileSegment {
  size_t at = 0;           // position in the output buffer
  state::UniqueFd fd;      // a dup of the open's fd: a CLOSE before the send cannot end it
  uint64_t offset = 0;     // in the file
  uint32_t length = 0;
  state::OpenCharge charge;  // the dup counts against the descriptor budget until the segment is gone
  // When set, the segment's bytes, sent from here (fd unused): a signed or
  // encrypted READ's data (above), or the data as read when a later request
  // of the connection could have changed it (transport::copy_file_data).
  // From the frame buffer cache (common/large_buffer.hpp): an 8 MiB buffer
  // freed to glibc would be given back to the kernel and faulted in again.
  LargeBuffer data;
  size_t data_skip = 0;  // where the bytes begin in `data`
  std::span<uint8_t> bytes() const { return {data.get() + data_skip, data ? length : 0}; }
  // Sets `data` to room for `length` bytes of the file from `offset` and
  // returns where they go: at the same place in a 4 KiB page as `offset`
  // is in the file. pread's copy from the page cache into a buffer a few
  // bytes off that (a fresh allocation starts 16 bytes into a page) ran at
  // a third of its speed (stores and later loads 4 KiB apart alias).
  uint8_t* allocate_data() {
    constexpr size_t kPage = 4096;
    data = LargeBuffer::allocate(length + kPage);
    data_skip = (offset - reinterpret_cast<uintptr_t>(data.get())) % kPage;
    return data.get() + data_skip;
  }
};

// The transport's framing of one message on the wire (MS-SMB2 2.1: a
// 4-byte header in direct TCP). smb2/ writes messages; the transport says
// how they are delimited.
class MessageFraming {
 public:
  virtual ~MessageFraming() = default;
  // Reserves the frame header in OUT; returns where the message starts.
  virtual size_t open(Bytes& out) const = 0;
  // The message from START to the end of OUT, plus FILE_BYTES sent from a
  // file after it (FileSegment), is complete: writes the frame header.
  virtual void close(Bytes& out, size_t start, size_t file_bytes) const = 0;
  // Takes back a reservation that got no message (START as open returned).
  virtual void discard(Bytes& out, size_t start) const = 0;
};

// Whoever holds the memory of the frame being processed (the transport's
// frame buffer, a decrypted message): keep() hands over the buffer that
// holds BYTES, so that they stay valid, at the same address, after the
// frame (a large WRITE whose pwrite runs on the blocking pool); null when
// it cannot (then the caller copies them).
class FrameOwner {
 public:
  virtual ~FrameOwner() = default;
  virtual std::shared_ptr<const void> keep(ByteSpan bytes) = 0;
  // BYTES as memory the frame's processing may write over (an encrypted
  // frame is decrypted where it lies), when they lie in a buffer of this
  // owner's that nothing else reads; empty otherwise.
  virtual std::span<uint8_t> writable(ByteSpan bytes) = 0;
};

// How a response is protected: signed with, or encrypted for, the session
// it answers. The keys are copies for a request that waits: its session may
// log off before it completes (smb2.lock.cancel-logoff expects the answer).
struct ResponseSeal {
  uint64_t session_id = 0;
  bool sign = false;
  bool encrypt = false;
  Bytes signing_key;
  Bytes encryption_key;
};

// What a waiting request waits for. Each kind has its own cancel/cleanup
// hook (WaitingRequest::withdraw). RunAgain: a request behind lease or
// oplock breaks (a CREATE, a rename) or a durable reconnect, whose chain
// runs again from it when woken.
enum class WaitKind : uint8_t { RunAgain, PipeRead, ByteRangeLock, Flush, ChangeNotify, Write };
// Why a waiting request is being withdrawn.
enum class WithdrawReason : uint8_t { Cancel, Close, TreeDisconnect, Logoff, ConnectionLost };

// A request counted in an open's outstanding requests (MS-SMB2 3.3.5.2.10,
// smb2/engine/channel_sequence.hpp): which open, with which ChannelSequence.
struct ChannelCount {
  uint64_t volatile_id = 0;
  uint16_t sequence = 0;
  bool counted = false;
};

struct WaitingRequest;
using WithdrawHook = NtStatus (*)(ServerContext& server, ConnState& conn, WaitingRequest& w, WithdrawReason why);

// A request answered with an interim STATUS_PENDING (MS-SMB2 3.3.4.2)
// whose final response is still owed; or, with interim_deferred, one whose
// interim response is held back in case it completes soon (then its only
// response is an ordinary synchronous one).
struct WaitingRequest {
  uint64_t async_id = 0;
  uint64_t message_id = 0;
  wire::Command command{};
  uint16_t credit_charge = 0;
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  uint64_t volatile_id = 0;  // the open it waits on; 0 for a CREATE
  WaitKind kind{};
  ResponseSeal seal;
  // Cancel and cleanup: undoes the registration elsewhere (file table,
  // lock table) and returns the status the request completes with, or
  // STATUS_PENDING when it was already completed elsewhere (a lock granted
  // on another worker, whose posted completion is on its way).
  WithdrawHook withdraw = nullptr;
  // RunAgain: the rest of the chain from the waiting element (a CREATE, a
  // rename), run again when the breaks end (as received, decrypted), and
  // the chain state before it.
  Bytes pdu;
  bool encrypted = false;
  uint64_t transform_session = 0;
  CompoundState compound;
  NtStatus create_error = NtStatus::Success;
  std::shared_ptr<state::FileNode> node;  // RunAgain, ByteRangeLock: the file
  uint32_t read_length = 0;               // PipeRead: READ Length
  const void* lock_owner = nullptr;       // ByteRangeLock: the state::Open
  uint64_t durable_id = 0;                // RunAgain of a durable reconnect: the open's persistent id
  // Set by the handler to ask for a deferred interim; the processor keeps
  // it only for a request alone in its frame, with the credits the
  // response will grant (whichever goes first: interim or final).
  bool interim_deferred = false;
  uint16_t deferred_credits = 0;
  // A deferred interim's timed task (defer_interim) runs only while this
  // is true; false once the request has left the table (it completed): a
  // WRITE or FLUSH done before its deadline then costs no wake-up of the
  // worker at the deadline (the worker drops the task before its wait).
  std::shared_ptr<std::atomic<bool>> interim_wanted;
  // RunAgain of a CREATE with DH2Q: its CreateGuid. A replay of it
  // meanwhile is refused (smb2/durable/durable.hpp, find_replayed_open).
  bool has_create_guid = false;
  state::Guid create_guid{};
  ChannelCount channel;  // given back when the request leaves the table
};

// A final response ready to go out after the current frame's.
struct ReadyMessage {
  Bytes message;  // header + body, unsealed (a rerun chain: its elements signed)
  ResponseSeal seal;
};

// Every request of one connection that waits (smb2/engine/async_engine.hpp).
struct AsyncTable {
  std::map<uint64_t, WaitingRequest> waiting;  // by AsyncId, which grows: arrival order
  std::unordered_map<uint64_t, uint64_t> by_message_id;  // MessageId -> AsyncId (CANCEL of a sync header)
  uint64_t next_id = 1;
  std::unordered_map<uint64_t, uint32_t> per_session;  // waiting requests by SessionId
  std::vector<ReadyMessage> ready;  // final responses for after the current frame
  std::vector<std::pair<uint64_t, bool>> reruns;  // RunAgain chains to run again (async id, cancelled)
  // Requests handed over from a channel of their session that ended
  // (hand_over_waiting): they run to their end here, and their responses,
  // owed to a connection that is gone, are dropped. By AsyncId.
  std::unordered_set<uint64_t> detached;
};

// The sessions (with their tree connects) and opens of a connection
// (MS-SMB2 3.3.1.5 Connection.SessionTable; the opens of Session.OpenTable
// by volatile id). A connection has its own until session binding makes
// it a channel of another connection's session: the two then share one
// (smb2/commands/session_bind.hpp), on one worker, so that a FileId is
// valid on every channel of its session. A session is reachable through
// a connection only when that connection is one of its channels
// (state::Session::channels).
struct SessionTables {
  std::unordered_map<uint64_t, std::unique_ptr<state::Session>> sessions;
  std::unordered_map<uint64_t, std::unique_ptr<state::Open>> opens;  // by volatile id
  std::unordered_map<uint64_t, PipeOpen> pipes;                      // by volatile id, a subset of opens
  // The connections that share these tables (more than one: channels).
  std::vector<ConnState*> members;
  // The last sessions (kKeptEnded) that a failed re-authentication ended
  // (MS-SMB2 3.3.5.5.3), with each channel's signing key: a signed request
  // that still names one gets its USER_SESSION_DELETED signed with its
  // channel's key, as clients that sign take the status only from a
  // signed response (Samba signs it too; smb2.session.bind_invalid_auth).
  // A LOGOFF's session is not kept: its client asked for the end.
  struct EndedSession {
    uint64_t session_id = 0;
    std::vector<state::Channel> channels;  // every key set
  };
  static constexpr size_t kKeptEnded = 4;
  std::vector<EndedSession> ended;
  // The signing key of CONN_ID's channel of ended session SID; null if none.
  const Bytes* ended_session_key(uint64_t sid, uint64_t conn_id) const {
    for (const EndedSession& e : ended)
      for (const state::Channel& c : e.channels)
        if (e.session_id == sid && c.conn_id == conn_id) return &c.signing_key;
    return nullptr;
  }
};

// The transport's connections of one worker, by connection id.
class LocalConns {
 public:
  virtual ~LocalConns() = default;
  virtual ConnState* find_conn(uint64_t conn_id) = 0;
};

struct ConnState {
  std::string client_address;
  uint16_t client_port = 0;  // the client's TCP port (`ringsmbctl status` lists each channel's)
  // Set by a transport that sends FileSegments (transport::Worker); a READ
  // then may leave its data in the file. Tests and fuzzers leave it off.
  bool transport_sends_files = false;
  // The FileSegments of the responses in the transport's output buffer, in
  // order of `at`; the transport takes them with the buffer.
  std::vector<FileSegment> out_files;
  state::ConnAddress address;  // this connection's worker and id
  // How the transport frames each message (its 4-byte length); set by the
  // transport before the first frame.
  const MessageFraming* framing = nullptr;
  AsyncTable async;  // requests answered STATUS_PENDING (smb2/engine/async_engine.hpp)
  // Where directory changes come from (the worker's inotify source; null:
  // CHANGE_NOTIFY answers STATUS_NOT_SUPPORTED), and this connection's
  // watches, made at its first CHANGE_NOTIFY (smb2/notify/notify_watch.hpp).
  vfs::ChangeSource* changes = nullptr;
  std::shared_ptr<NotifyTable> notify;
  // The directories this connection holds directory leases on, watched
  // for local changes (smb2/leases/directory_lease.hpp); made at the first such lease.
  std::shared_ptr<DirLeaseWatches> dir_lease_watches;
  // The counters of the worker that owns this connection (smb2/engine/metrics.hpp),
  // written only on that worker's thread; null: not counted (unit tests).
  WorkerMetrics* metrics = nullptr;
  // The login throttle (SESSION_SETUP, control/login_throttle.hpp): until
  // this monotonic time the transport sends none of this connection's
  // replies and processes none of its further requests (they wait, in
  // order). 0: not held. The transport clears it when the time has come.
  int64_t hold_replies_until_ms = 0;
  // NEGOTIATE results
  bool negotiated = false;
  bool client_registered = false;  // in ServerContext::clients (SMB 2.1 and later)
  uint16_t dialect = 0;  // 0x02FF after an SMB1 upgrade until the SMB2 NEGOTIATE
  uint32_t client_capabilities = 0;
  uint16_t client_security_mode = 0;
  std::array<uint8_t, 16> client_guid{};
  uint16_t server_security_mode = 0;
  uint32_t server_capabilities = 0;
  std::vector<uint16_t> client_dialects;  // for FSCTL_VALIDATE_NEGOTIATE_INFO
  bool signing_required = false;          // server or client requires signing
  crypto::SigningAlgorithm signing_algorithm = crypto::SigningAlgorithm::HmacSha256;
  std::optional<crypto::Aead> cipher;     // negotiated encryption cipher (3.x)
  std::array<uint8_t, 64> preauth_hash{};  // 3.1.1 connection preauth integrity hash
  bool supports_multi_credit = false;
  CreditWindow credits;
  // Set by the transport while the client leaves many of our replies
  // unread: responses then grant no more credits than their requests
  // charged, so its window does not grow (docs/security.md).
  bool credits_throttled = false;
  // A SESSION_SETUP completed on this connection: the transport then takes
  // full-size frames and stops the login timer.
  bool logged_in = false;
  // The reasons for a refused login or tree connect already logged for
  // this connection (smb2/engine/refusal_log.hpp): each is told once.
  uint8_t refusals_logged = 0;
  // Sessions whose SESSION_SETUP exchange has not ended (bounded by
  // kMaxSessionsInProgress), and whether one expired in the current frame
  // (then the processor erases expired sessions after it, and only then).
  uint32_t sessions_in_progress = 0;
  bool sessions_expired = false;
  // What an AAPL create context turned on for this connection
  // (smb2/fruit/aapl.hpp kAapl*); 0: none, the Windows behaviour.
  uint8_t aapl_flags = 0;

  // Its sessions, tree connects and opens: its own, or, once it is a
  // channel of a session of another connection, shared with that one.
  std::shared_ptr<SessionTables> tables = std::make_shared<SessionTables>();
  // The connections of this worker by id, for session binding (set by the
  // transport; null: none can be bound, as in the unit tests).
  LocalConns* local_conns = nullptr;
  // Set by a binding SESSION_SETUP whose session lives on another worker,
  // or a NEGOTIATE of a client whose other connections live there: the
  // frame is to run again there (FrameResult::Move).
  std::optional<state::ConnAddress> move_to;
  // The transport could not move it: the binding is refused here (a
  // NEGOTIATE runs here).
  bool move_declined = false;
  // Its NEGOTIATE asked to go to the worker of its client's other
  // connections (once: the frame runs again there).
  bool placed_with_client = false;
  // The SESSION_SETUP exchanges of bindings in progress on this connection
  // (their own NTLMSSP state and 3.1.1 preauth hash), by SessionId.
  std::unordered_map<uint64_t, std::unique_ptr<state::Session>> bindings;
  // Large WRITEs whose pwrite runs on the blocking pool (smb2/commands/write.cpp),
  // one after the other on this lane: how many, and their bytes. While any
  // is in flight, every later request of this connection but further such
  // WRITEs waits (process_frame answers FrameResult::Hold, the transport
  // keeps the frame and stops reading), so none can overtake the data.
  uint32_t writes_in_flight = 0;
  uint64_t write_bytes_in_flight = 0;
  std::shared_ptr<BlockingPool::Lane> write_lane;
  // CREATEs whose overwrite's ftruncate runs on the write lane
  // (smb2/commands/create.cpp), also counted in writes_in_flight. While any is
  // unanswered, break notifications for this connection wait in
  // held_breaks: the client must have the CREATE response (its FileId,
  // its lease) before a break of what that CREATE was granted.
  uint32_t overwrites_in_flight = 0;
  std::vector<state::BreakNotice> held_breaks;
  // Break notifications that requests of this connection started on other
  // connections and that have not been handed to those connections'
  // sockets yet (smb2/leases/lease.hpp). While any has not, the transport
  // sends none of this connection's replies (they wait, in order): the
  // client reads a break before the reply to the operation that caused it
  // (MS-SMB2 3.3.4.7; smb2.lease.unlink), on whichever workers the two
  // connections live.
  uint32_t breaks_unsent = 0;
  // Set by the task that wrote such a break here: the transport sends what
  // is ready with a send of its own now, not with its reactor's next wait.
  bool send_at_once = false;
  // The owner of the current frame's memory (set by the transport, and by
  // the processor for a decrypted message); null: none can be kept.
  FrameOwner* frame_owner = nullptr;
  // CREATE's response contexts are built here before they are copied into
  // the response; kept per connection so its capacity is reused.
  Bytes create_contexts_scratch;

  // The session SessionId ID, when this connection is one of its channels.
  state::Session* find_session(uint64_t id) {
    auto it = tables->sessions.find(id);
    if (it == tables->sessions.end() || !it->second->reachable_from(address.conn_id)) return nullptr;
    return it->second.get();
  }
  bool is_smb3() const { return dialect >= 0x0300 && dialect != 0x02FF; }
};

}  // namespace ringsmb::smb2
