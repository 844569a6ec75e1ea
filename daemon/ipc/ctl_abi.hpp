// The ABI between ringsmbd (data plane), ringsmb-ctld (control plane) and
// ringsmbctl (admin CLI). Every message and attribute is defined here and
// nowhere else; docs/ctl-abi.md explains each one at more length.
//
// TRANSPORT
//   socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK), unicast only. Any local
//   user may bind any free port id and send to any port on this protocol, so
//   the channel is built to be neither pre-empted nor drowned (threat model
//   in docs/ctl-abi.md):
//   * Every socket binds port 0: the kernel picks a free port id, so no
//     port can be taken before a daemon starts. ringsmb-ctld's REQUEST PORT
//     is handed to a spawned ctld as an inherited socket (--netlink-fd), and
//     published by ctld in "<state directory>/ringsmb-ctld.port"
//     (kCtldPortFileName, mode 0600, owner root or the service user) for
//     ringsmbctl and an external ringsmbd. ringsmbd's admin port likewise in
//     "ringsmbd.port" (kDataPlanePortFileName). The pid files stay, for
//     people and scripts; they name no port.
//   * Every socket that sends requests is connect()ed to its one peer; the
//     kernel then refuses (ECONNREFUSED) datagrams from any other port, so
//     nobody else can fill its receive queue and its replies cannot be lost.
//   * ringsmbd does not send LOGIN and the rest to the request port: each
//     of its sockets first sends STARTING_UP there, and ctld answers with
//     CHANNEL_PORT, a new ctld socket connected to that one sender. Both
//     ends then talk only to each other. Only the request port (and
//     ringsmbd's admin port) accept datagrams from anyone; a flood there
//     can delay a STARTING_UP or an admin request, never a login on an open
//     channel, and senders wait for queue space (kSendWaitMs) instead of
//     failing at once.
//
// CREDENTIALS
//   Every receiver sets SO_PASSCRED and reads SCM_CREDENTIALS (stamped by the
//   kernel) on every datagram. Only uid 0 and the receiver's own effective
//   uid are accepted; anything else, or a datagram without credentials, is
//   dropped and logged. The sender's port is taken from the kernel-filled
//   sockaddr, never from nlmsghdr.nlmsg_pid.
//
// FRAMING
//   One message per datagram: nlmsghdr + genlmsghdr + attributes, built with
//   libnl (genlmsg_put, nla_put_*) and parsed with genlmsg_parse against
//   kPolicy. nlmsg_type is kFamilyId (there is no genl controller on
//   USERSOCK, so the family id is fixed). genlmsghdr.cmd is a Cmd,
//   genlmsghdr.version must equal kGenlVersion or the message is rejected.
//   nlmsg_seq is the HANDLE: a reply carries the handle of its request.
//   Requests carry NLM_F_REQUEST; replies carry no NLM_F_REQUEST flag. A reply
//   always has ATTR_STATUS (an NTSTATUS). Messages above kMaxMessage bytes
//   are dropped. Unknown attribute types are ignored (room to grow);
//   a known attribute of the wrong size, a string without its NUL, a missing
//   required attribute (kRequired) reject the whole message.
//
// MESSAGES (dir: D = ringsmbd, C = ringsmb-ctld, A = ringsmbctl)
//   HEARTBEAT        D->C req {}                       reply {STATUS}
//   STARTING_UP      D->C req {ABI_VERSION, PID, ROLE}
//                    reply {STATUS, ABI_VERSION, PID, CHANNEL_PORT?}
//                    The handshake and channel opening, sent to the request
//                    port. C opens a socket connected to the sender and
//                    replies (from the request port) with its port id in
//                    CHANNEL_PORT; everything after goes over that channel.
//                    ROLE_DATA_PLANE (ringsmbd's supervisor): C also sends
//                    its events (SHUTDOWN, SHUTTING_DOWN) on this channel.
//                    ROLE_CHANNEL: a request channel of a ringsmbd thread.
//                    A different ABI_VERSION gets STATUS=NotSupported and D
//                    refuses to use that C; no room for another channel
//                    gets InsufficientResources.
//   SHUTTING_DOWN    either way, one-way {PID}: the sender is going away.
//   LOGIN            D->C req {SERVER_CHALLENGE, NTLM_NEGOTIATE?, NTLM_CHALLENGE,
//                    NTLM_AUTHENTICATE, CLIENT_ADDRESS?}
//                    reply {STATUS, ACCOUNT?, LOGIN_FLAGS, SESSION_KEY?, UID, GID,
//                    DELAY_MS?}
//                    C verifies NTLMv2 itself; D never sees an NT hash.
//                    DELAY_MS (login throttle): D holds its SESSION_SETUP
//                    answer that long, without blocking a worker; with a
//                    failure too. STATUS may be AccountLockedOut.
//   LOGIN_EXT        same request; the reply adds GROUPS (supplementary gids).
//                    ringsmbd uses LOGIN_EXT; LOGIN exists for a ksmbd shim.
//   SHARE_CONFIG     D->C req {SHARE_NAME} reply {STATUS, SHARE_*, ENCRYPTION}
//   TREE_CONNECT     D->C req {SHARE_NAME, ACCOUNT, LOGIN_FLAGS, CLIENT_ADDRESS?, SIDS?}
//                    reply {STATUS, SHARE_NAME, SHARE_PATH, SHARE_COMMENT,
//                    SHARE_FLAGS, ENCRYPTION}
//   TREE_DISCONNECT  D->C one-way {SHARE_NAME, ACCOUNT}
//   LOGOUT           D->C one-way {ACCOUNT}
//   RPC_OPEN         D->C req {RPC_HANDLE, RPC_PIPE, ACCOUNT, LOGIN_FLAGS?} reply {STATUS}
//   RPC_WRITE        D->C req {RPC_HANDLE, RPC_DATA}         reply {STATUS}
//   RPC_READ         D->C req {RPC_HANDLE, RPC_MAX}          reply {STATUS, RPC_DATA, RPC_MORE}
//   RPC_IOCTL        D->C req {RPC_HANDLE, RPC_DATA, RPC_MAX} reply {STATUS, RPC_DATA, RPC_MORE}
//                    (a transact: write then read)
//   RPC_CLOSE        D->C req {RPC_HANDLE}                   reply {STATUS}
//   SPNEGO_AUTHEN    D->C req {SPNEGO_BLOB, CLIENT_ADDRESS?}
//                    reply {STATUS, ACCOUNT?, LOGIN_FLAGS, SESSION_KEY?, UID, GID,
//                    GROUPS, SPNEGO_BLOB?, DELAY_MS?, SIDS?}
//                    A Kerberos login: the request's SPNEGO_BLOB is the krb5
//                    mechanism token from the client's SPNEGO (the GSS-framed
//                    AP-REQ), the reply's the GSS token with the AP-REP. C
//                    checks the ticket with its keytab; D sees only the
//                    session key and the identity. Without a keytab
//                    configured: STATUS=LogonFailure. SIDS: a domain
//                    account's SIDs from the ticket's PAC (user first).
//   LIST_CONNECTIONS / LIST_SESSIONS / LIST_TREE_CONNECTS / LIST_OPEN_FILES
//                    A->D req {} reply {STATUS, MORE_ENTRIES?, ENTRY*}. ringsmbd
//                    holds this state, so A asks it directly: ringsmbd binds an
//                    admin socket on a kernel-chosen port and writes it to
//                    "<state directory>/ringsmbd.port" (kDataPlanePortFileName).
//                    The reply may span several datagrams with the request's
//                    handle; all but the last carry MORE_ENTRIES=1. Each ENTRY
//                    is nested (attributes parsed with kPolicy):
//                      connection {CONNECTION_ID, CLIENT_ADDRESS, DIALECT}
//                      session    {SESSION_ID, CONNECTION_ID, ACCOUNT,
//                                  CLIENT_ADDRESS, DIALECT, SESSION_FLAGS,
//                                  CHANNELS?}
//                      tree       {SESSION_ID, TREE_ID, SHARE_NAME, ACCOUNT,
//                                  CLIENT_ADDRESS}
//                      open file  {SESSION_ID, TREE_ID, SHARE_NAME, PATH,
//                                  ACCOUNT, CLIENT_ADDRESS, FILE_ID?,
//                                  OPEN_FLAGS?, OPLOCK_LEVEL?, LEASE_STATE?,
//                                  LEASE_KEY?, LOCK_COUNT?, LOCKS?,
//                                  KEPT_FOR_MS?}
//                    FILE_ID is what CLOSE_FILE takes. The open files
//                    include the durable opens kept for their client's
//                    reconnect (OPEN_DISCONNECTED): the session, tree,
//                    account and client address they had, and KEPT_FOR_MS,
//                    the time left before they are closed. LEASE_STATE is the
//                    caching the open's lease or oplock holds at the
//                    snapshot; LOCKS the open's first kMaxLocksPerEntry
//                    byte-range locks, LOCK_COUNT all of them. CHANNELS: the
//                    session's channels (MS-SMB2 Session.ChannelList, the
//                    first one first), one kChannelRecordSize record each,
//                    at most kMaxChannelsPerEntry; the session's entry is
//                    listed under its first channel's connection.
//                    A LIST_* other than LIST_CONNECTIONS from the port that
//                    sent LIST_CONNECTIONS less than 2 s before is answered
//                    from the same snapshot (one consistent `status`).
//                    ctld answers these with NotSupported.
//   GET_METRICS      A->D req {} reply {STATUS, MORE_ENTRIES?, TEXT}: ringsmbd's
//                    counters (docs/monitoring.md) in the Prometheus text
//                    format, cut at line ends into TEXTs of at most 4 KiB,
//                    one per datagram; all but the last carry MORE_ENTRIES=1.
//                    ctld answers NotSupported.
//   RELOAD           A->C req {} reply {STATUS, TEXT?}: re-read config + users.
//                    A->D the same (ringsmbd reloads its in-process control
//                    plane, or forwards to its ctld as on SIGHUP).
//   SHUTDOWN         A->C req {} reply {STATUS}; C forwards SHUTDOWN one-way to
//                    the registered ringsmbd, then exits. A->D: ringsmbd
//                    replies and stops (and stops the ctld it spawned).
//   CLOSE_SESSION    A->D req {SESSION_ID} reply {STATUS}: ringsmbd closes the
//                    session's open files, logs it off and drops its
//                    connection when no other session uses it.
//                    NotFound when no such session; ctld answers NotSupported.
//   CLOSE_FILE       A->D req {FILE_ID} reply {STATUS}: ringsmbd closes that
//                    open as a CLOSE would (its locks and lease go; a durable
//                    open can no longer be reconnected); the client's next
//                    request on the handle gets FILE_CLOSED. A disconnected
//                    durable open is closed at once (no reconnect finds it).
//                    NotFound when no open has that id.
//   CLOSE_SHARE      A->D req {SHARE_NAME} reply {STATUS, CLOSED_COUNT}:
//                    ringsmbd disconnects every tree connect to the share
//                    (case-insensitive name) and closes their opens, as a
//                    TREE_DISCONNECT would; the clients' next request on
//                    such a tree gets NETWORK_NAME_DELETED. CLOSED_COUNT 0
//                    (Success) when none was connected.
//   DEBUG            A->D and A->C req {LOG_LEVEL?, LOG_LEVEL_SOURCE?}
//                    reply {STATUS, LOG_LEVEL, TEXT?}: sets the receiver's log
//                    level (the `log level` key's scale, 0..10) at once, until
//                    the next reload or another DEBUG; without LOG_LEVEL only
//                    reports it. LOG_LEVEL_SOURCE LOG_SOURCE_CONFIG: the level
//                    of the configuration file (ringsmbctl reload, after ctld
//                    reloaded, tells ringsmbd), not applied when the daemon
//                    was started with -d; TEXT then says so. A level above 10
//                    gets InvalidParameter. The reply's LOG_LEVEL is the level
//                    in effect afterwards.
#pragma once

#include <linux/netlink.h>
#include <netlink/attr.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ringsmb::ipc::abi {

inline constexpr int kNetlinkProtocol = NETLINK_USERSOCK;
inline constexpr uint16_t kFamilyId = 0x7273;  // nlmsg_type of every message; > NLMSG_MIN_TYPE
inline constexpr uint8_t kGenlVersion = 1;     // genlmsghdr.version
inline constexpr uint32_t kAbiVersion = 2;     // STARTING_UP's ATTR_ABI_VERSION; 2: request channels
inline constexpr size_t kMaxMessage = 64 * 1024;
inline constexpr size_t kMaxRpcData = 60 * 1024;  // leaves room for headers in kMaxMessage
// ATTR_SIDS' longest text: about 900 domain SIDs; a login with more is
// refused by the control plane (Windows' own token holds at most 1024).
inline constexpr size_t kMaxSidsText = 40 * 1024;
inline constexpr const char* kPidFileName = "ringsmb-ctld.pid";
// ringsmbd's admin socket (LIST_*, CLOSE_SESSION, RELOAD, SHUTDOWN from A).
inline constexpr const char* kDataPlanePidFileName = "ringsmbd.pid";
// The port ids, for peers that did not spawn the process (0600 files).
inline constexpr const char* kCtldPortFileName = "ringsmb-ctld.port";
inline constexpr const char* kDataPlanePortFileName = "ringsmbd.port";
// A sender waits this long for room in a full receive queue (SO_SNDTIMEO)
// before the send fails with EAGAIN.
inline constexpr int kSendWaitMs = 1000;
// How long ringsmbd waits for a reply before failing the request cleanly.
inline constexpr int kRequestTimeoutMs = 3000;

enum Cmd : uint8_t {
  CMD_UNSPEC = 0,
  CMD_HEARTBEAT,
  CMD_STARTING_UP,
  CMD_SHUTTING_DOWN,
  CMD_LOGIN,
  CMD_LOGIN_EXT,
  CMD_SHARE_CONFIG,
  CMD_TREE_CONNECT,
  CMD_TREE_DISCONNECT,
  CMD_LOGOUT,
  CMD_RPC_OPEN,
  CMD_RPC_READ,
  CMD_RPC_WRITE,
  CMD_RPC_CLOSE,
  CMD_RPC_IOCTL,
  CMD_SPNEGO_AUTHEN,
  CMD_LIST_CONNECTIONS,
  CMD_LIST_SESSIONS,
  CMD_LIST_OPEN_FILES,
  CMD_RELOAD,
  CMD_SHUTDOWN,
  CMD_CLOSE_SESSION,
  CMD_LIST_TREE_CONNECTS,
  CMD_GET_METRICS,
  CMD_DEBUG,
  CMD_CLOSE_FILE,
  CMD_CLOSE_SHARE,
  CMD_COUNT,  // one past the last command
};

enum Attr : uint16_t {
  ATTR_UNSPEC = 0,
  ATTR_STATUS,             // u32 NTSTATUS
  ATTR_ABI_VERSION,        // u32
  ATTR_PID,                // u32
  ATTR_ROLE,               // u32 Role
  ATTR_CLIENT_ADDRESS,     // string
  ATTR_SERVER_CHALLENGE,   // 8 bytes
  ATTR_NTLM_NEGOTIATE,     // bytes
  ATTR_NTLM_CHALLENGE,     // bytes
  ATTR_NTLM_AUTHENTICATE,  // bytes
  ATTR_ACCOUNT,            // string
  ATTR_LOGIN_FLAGS,        // u32 LoginFlag bits
  ATTR_SESSION_KEY,        // 16 bytes
  ATTR_UID,                // u32
  ATTR_GID,                // u32
  ATTR_GROUPS,             // bytes: host-order u32 gids, a multiple of 4
  ATTR_SHARE_NAME,         // string
  ATTR_SHARE_PATH,         // string
  ATTR_SHARE_COMMENT,      // string
  ATTR_SHARE_FLAGS,        // u32 ShareFlag bits
  ATTR_ENCRYPTION,         // u32 config::EncryptionPolicy
  ATTR_SESSION_ID,         // u64
  ATTR_RPC_HANDLE,         // u32, chosen by ringsmbd per open pipe
  ATTR_RPC_PIPE,           // string, e.g. "srvsvc"
  ATTR_RPC_DATA,           // bytes
  ATTR_RPC_MAX,            // u32, the most bytes the reader takes
  ATTR_RPC_MORE,           // u32 0/1: more data is waiting
  ATTR_SPNEGO_BLOB,        // bytes, a GSS token (SPNEGO_AUTHEN)
  ATTR_ENTRY,              // nested, in LIST_* replies
  ATTR_TEXT,               // string, human-readable detail for the admin
  ATTR_PATH,               // string, an open file's path in LIST_OPEN_FILES
  ATTR_CREATE_MASK,        // u32 permission bits (SHARE_CONFIG, TREE_CONNECT replies)
  ATTR_DIRECTORY_MASK,     // u32 permission bits
  ATTR_VETO_FILES,         // string, "/pattern/pattern/"
  ATTR_FORCE_UID,          // u32; with ATTR_GID and ATTR_GROUPS: the forced user (TREE_CONNECT reply)
  ATTR_FORCE_GID,          // u32, the forced primary group (TREE_CONNECT reply)
  ATTR_DIALECT,            // u32, the negotiated SMB dialect (0x0311...); 0 before NEGOTIATE
  ATTR_SESSION_FLAGS,      // u32 SessionFlag bits
  ATTR_CONNECTION_ID,      // u64, ringsmbd's id of a TCP connection
  ATTR_TREE_ID,            // u32, the SMB2 TreeId
  ATTR_MORE_ENTRIES,       // u32 0/1: another datagram of this LIST_* reply follows
  ATTR_CHANNEL_PORT,       // u32, STARTING_UP reply: ctld's socket connected to the sender
  ATTR_DELAY_MS,           // u32, LOGIN reply: hold the answer to the client this long (throttle)
  ATTR_LOG_LEVEL,          // u32, DEBUG: the `log level` scale, 0..10
  ATTR_LOG_LEVEL_SOURCE,   // u32, DEBUG: LOG_SOURCE_ADMIN (default) or LOG_SOURCE_CONFIG
  ATTR_RECYCLE_REPOSITORY,   // string, relative to the share root; present: the recycle bin is on
  ATTR_RECYCLE_FLAGS,        // u32 RECYCLE_* bits
  ATTR_RECYCLE_DIR_MODES,    // u32: directory_mode | subdir_mode << 16
  ATTR_RECYCLE_MINSIZE,      // u64 bytes, 0: no bound
  ATTR_RECYCLE_MAXSIZE,      // u64 bytes, 0: no bound
  ATTR_RECYCLE_EXCLUDE,      // string, "/pattern/pattern/"
  ATTR_RECYCLE_EXCLUDE_DIR,  // string, "/pattern/pattern/"
  ATTR_RECYCLE_NOVERSIONS,   // string, "/pattern/pattern/"
  ATTR_FILE_ID,            // u64, an open's id (its SMB2 FileId.Persistent, unique in the server)
  ATTR_OPEN_FLAGS,         // u32 OPEN_* bits of a LIST_OPEN_FILES entry
  ATTR_OPLOCK_LEVEL,       // u32, the SMB2 OplockLevel granted (0xFF: a lease)
  ATTR_LEASE_STATE,        // u32, SMB2_LEASE_* caching bits the open's lease or oplock holds now
  ATTR_LEASE_KEY,          // 16 bytes, the lease's LeaseKey (leases only)
  ATTR_LOCKS,              // bytes: kLockRecordSize-byte records, host order {u64 offset, u64 length, u32 LOCK_* bits}
  ATTR_LOCK_COUNT,         // u32, the open's byte-range locks (ATTR_LOCKS may carry fewer)
  ATTR_CLOSED_COUNT,       // u32, CLOSE_SHARE reply: tree connects disconnected
  ATTR_SHADOW_COPY,        // string, "key=value" lines: the share's shadow_copy2 settings (absent: off)
  ATTR_FRUIT_FLAGS,        // u32 FruitFlag bits: Apple's extensions of a share (SHARE_CONFIG, TREE_CONNECT replies)
  ATTR_FRUIT_TM_MAX_SIZE,  // u64 bytes, fruit:time machine max size; absent: none
  ATTR_FRUIT_MODEL,        // string, fruit:model
  ATTR_KEPT_FOR_MS,        // u32, a disconnected durable open (OPEN_DISCONNECTED): ms until it is closed
  ATTR_SIDS,               // string, Windows SIDs as text separated by one space, user first (kMaxSidsText)
  ATTR_CHANNELS,           // bytes: kChannelRecordSize-byte records, a session's channels (LIST_SESSIONS)
  ATTR_COUNT,              // one past the last attribute
};
inline constexpr int kAttrMax = ATTR_COUNT - 1;

// Values of ATTR_ROLE, and bits of ATTR_LOGIN_FLAGS and ATTR_SHARE_FLAGS
// (plain constants: they are OR-ed together on the wire).
inline constexpr uint32_t ROLE_DATA_PLANE = 1;
inline constexpr uint32_t ROLE_ADMIN = 2;
inline constexpr uint32_t ROLE_CHANNEL = 3;
inline constexpr uint32_t LOGIN_GUEST = 1u << 0;
inline constexpr uint32_t LOGIN_ANONYMOUS = 1u << 1;
inline constexpr uint32_t SHARE_IPC = 1u << 0;
inline constexpr uint32_t SHARE_READ_ONLY = 1u << 1;
inline constexpr uint32_t SHARE_BROWSEABLE = 1u << 2;
inline constexpr uint32_t SHARE_CASE_SENSITIVE = 1u << 3;
inline constexpr uint32_t SHARE_WRITABLE = 1u << 4;  // this user may write (TREE_CONNECT only)
inline constexpr uint32_t SHARE_GUEST_OK = 1u << 5;
inline constexpr uint32_t SHARE_HIDE_DOT_FILES = 1u << 6;
inline constexpr uint32_t SHARE_OPLOCKS = 1u << 7;
inline constexpr uint32_t SHARE_LEASES = 1u << 8;
inline constexpr uint32_t SHARE_STORE_DOS_ATTRIBUTES = 1u << 9;
inline constexpr uint32_t SHARE_STREAMS = 1u << 11;
inline constexpr uint32_t SHARE_NT_ACL_SUPPORT = 1u << 12;
inline constexpr uint32_t SHARE_ACL_FLAG_CANONICALIZATION = 1u << 13;
inline constexpr uint32_t SHARE_CLIENT_SYMLINKS = 1u << 14;
inline constexpr uint32_t RECYCLE_KEEPTREE = 1u << 0;
inline constexpr uint32_t RECYCLE_VERSIONS = 1u << 1;
inline constexpr uint32_t RECYCLE_TOUCH = 1u << 2;
inline constexpr uint32_t RECYCLE_TOUCH_MTIME = 1u << 3;
// Bits of ATTR_FRUIT_FLAGS (config::FruitOptions); absent: fruit is off.
inline constexpr uint32_t FRUIT_ENABLED = 1u << 0;
inline constexpr uint32_t FRUIT_AAPL = 1u << 1;
inline constexpr uint32_t FRUIT_COPYFILE = 1u << 2;
inline constexpr uint32_t FRUIT_NFS_ACES = 1u << 3;
inline constexpr uint32_t FRUIT_TIME_MACHINE = 1u << 4;
inline constexpr uint32_t FRUIT_POSIX_RENAME = 1u << 5;
inline constexpr uint32_t FRUIT_VETO_APPLEDOUBLE = 1u << 6;
inline constexpr uint32_t FRUIT_WIPE_BLANK_RFORK = 1u << 7;
inline constexpr uint32_t FRUIT_DELETE_EMPTY_ADFILES = 1u << 8;
inline constexpr uint32_t FRUIT_ZERO_FILE_ID = 1u << 9;
inline constexpr uint32_t FRUIT_METADATA_NETATALK = 1u << 10;  // else stream
inline constexpr uint32_t FRUIT_RESOURCE_STREAM = 1u << 11;    // else file (xattr: neither)
inline constexpr uint32_t FRUIT_RESOURCE_XATTR = 1u << 12;
inline constexpr uint32_t FRUIT_LOCKING_NETATALK = 1u << 13;
inline constexpr uint32_t LOG_SOURCE_ADMIN = 0;
inline constexpr uint32_t LOG_SOURCE_CONFIG = 1;
inline constexpr uint32_t SESSION_SIGNED = 1u << 0;     // requests must be signed
inline constexpr uint32_t SESSION_ENCRYPTED = 1u << 1;  // the session encrypts all its traffic
inline constexpr uint32_t SESSION_GUEST = 1u << 2;
inline constexpr uint32_t SESSION_ANONYMOUS = 1u << 3;
inline constexpr uint32_t OPEN_DIRECTORY = 1u << 0;
inline constexpr uint32_t OPEN_DURABLE = 1u << 1;    // DHnQ or DH2Q granted: it may outlive its connection
inline constexpr uint32_t OPEN_RESILIENT = 1u << 2;  // FSCTL_LMR_REQUEST_RESILIENCY
inline constexpr uint32_t OPEN_LEASE_BREAKING = 1u << 3;  // a break of its lease or oplock awaits the client's ack
inline constexpr uint32_t OPEN_DISCONNECTED = 1u << 4;  // a durable open kept after its connection ended
inline constexpr uint32_t LOCK_EXCLUSIVE = 1u << 0;
inline constexpr size_t kLockRecordSize = 20;
inline constexpr size_t kMaxLocksPerEntry = 64;  // ATTR_LOCKS of one open; ATTR_LOCK_COUNT has them all
// One channel of ATTR_CHANNELS, host order: {u64 CONNECTION_ID (as in the
// connection entries), u16 client port, u16 reserved, u32 reserved,
// char client address[kChannelAddressSize]: text, NUL-terminated}.
inline constexpr size_t kChannelAddressSize = 48;  // INET6_ADDRSTRLEN (46) and the NUL, rounded up
inline constexpr size_t kChannelRecordSize = 16 + kChannelAddressSize;
inline constexpr size_t kMaxChannelsPerEntry = 32;  // a session's most (state::kMaxChannelsPerSession)

// genlmsg_parse policy for every attribute; defined in ctl_codec.cpp.
extern const std::array<struct nla_policy, ATTR_COUNT> kPolicy;

// Attributes a message must carry, by command and direction.
std::span<const Attr> required_attrs(Cmd cmd, bool is_request);
// True for commands whose request gets no reply.
bool is_one_way(Cmd cmd);
const char* cmd_name(uint8_t cmd);

}  // namespace ringsmb::ipc::abi
