// The kernel ⇄ daemon ABI of the in-kernel SMB server ksmbd.ko, as this
// program speaks it: written from the kernel's public description of the
// interface (the comment block and structures of fs/smb/server/
// ksmbd_netlink.h, and the generic-netlink family it registers), not copied
// from it. This is the only place the layouts live; docs/kmod-shim.md
// explains the protocol and what ringsmb maps onto it.
//
// Transport: generic netlink, family "SMBD_GENL", family version 1. Every
// message is one genl command whose number is the event (Event below) and
// carries one attribute of the same number whose payload is the event's
// fixed-layout structure (host byte order, C layout), sometimes followed by
// a variable-length tail. The daemon registers with STARTING_UP; the
// kernel then unicasts requests to the registering socket and matches each
// response to its request by the leading `handle` (response event =
// request event + 1). Requests the daemon does not answer time out in the
// kernel after 2 s.
//
// Compatibility: the structures carry reserved room so that fields can be
// added without changing sizes; the kernel checks each attribute's length
// against the structure size (at least that long) and, for replies with a
// tail, that the declared tail sizes add up to the attribute's length.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringsmb::kmod::abi {

inline constexpr const char* kFamilyName = "SMBD_GENL";
// The genl header version the kernel checks on every message we send, and
// the family version the module reports through the genl controller.
inline constexpr uint8_t kFamilyVersion = 1;
// Events 0..15 are the set this shim was written against (Linux 5.15+).
// A family whose controller reports fewer attributes is too old.
inline constexpr uint32_t kMinMaxAttr = 15;

inline constexpr size_t kAccountNameSize = 48;  // NUL included
inline constexpr size_t kShareNameSize = 64;
inline constexpr size_t kPasswordHashSize = 18;  // room for the 16-byte NT hash

enum Event : uint8_t {
  kUnspec = 0,
  kHeartbeatRequest = 1,      // kernel → daemon: is the daemon's socket alive (no answer)
  kStartingUp = 2,            // daemon → kernel: register and configure (StartupRequest)
  kShuttingDown = 3,          // daemon → kernel (ShutdownRequest); the module ignores it today
  kLoginRequest = 4,          // kernel → daemon: LoginRequest
  kLoginResponse = 5,         // daemon → kernel: LoginResponse
  kShareConfigRequest = 6,    // kernel → daemon: ShareConfigRequest
  kShareConfigResponse = 7,   // daemon → kernel: ShareConfigResponse + tail
  kTreeConnectRequest = 8,    // kernel → daemon: TreeConnectRequest
  kTreeConnectResponse = 9,   // daemon → kernel: TreeConnectResponse
  kTreeDisconnectRequest = 10,  // kernel → daemon, no answer
  kLogoutRequest = 11,          // kernel → daemon, no answer
  kRpcRequest = 12,             // kernel → daemon: RpcCommand + payload
  kRpcResponse = 13,            // daemon → kernel: RpcCommand + payload
  kSpnegoAuthenRequest = 14,    // kernel → daemon: Kerberos token
  kSpnegoAuthenResponse = 15,   // daemon → kernel
};

// HEARTBEAT_REQUEST. Sent when the daemon was silent for ipc_timeout
// seconds; the kernel only needs the unicast to succeed.
struct Heartbeat {
  uint32_t handle;
};
static_assert(sizeof(Heartbeat) == 4);

// StartupRequest::flags
inline constexpr uint32_t kGlobalLeases = 1u << 0;
inline constexpr uint32_t kGlobalEncryption = 1u << 1;     // encrypt every SMB3 session
inline constexpr uint32_t kGlobalMultichannel = 1u << 2;
inline constexpr uint32_t kGlobalEncryptionOff = 1u << 3;  // never encrypt
inline constexpr uint32_t kGlobalDurableHandles = 1u << 4;  // newer modules

// StartupRequest::signing (also used for other tri-state options)
inline constexpr int32_t kOptDisabled = 0;
inline constexpr int32_t kOptEnabled = 1;
inline constexpr int32_t kOptAuto = 2;
inline constexpr int32_t kOptMandatory = 3;

// STARTING_UP. Strings are NUL-terminated within their arrays; a zero
// number keeps the module's default (except file_max). The tail holds ifc_list_size bytes:
// interface names, each NUL-terminated (none: listen on every interface).
// The first daemon's STARTING_UP configures the server; a later one, while
// the registered daemon's socket still exists, is refused with EINVAL.
struct StartupRequest {
  uint32_t flags;
  int32_t signing;
  char min_protocol[16];  // "SMB2_02", "SMB2_10", "SMB3_00", "SMB3_02", "SMB3_11"
  char max_protocol[16];
  char netbios_name[16];
  char workgroup[64];
  char server_string[64];
  uint16_t tcp_port;
  uint16_t ipc_timeout_s;  // heartbeat period; 0: no heartbeats
  uint32_t deadtime_minutes;
  uint32_t file_max;  // open files over the whole server; applied even when 0
  uint32_t smb2_max_write;
  uint32_t smb2_max_read;
  uint32_t smb2_max_trans;
  uint32_t share_fake_fscaps;
  uint32_t domain_sub_auth[3];  // the machine SID S-1-5-21-a-b-c
  uint32_t smb2_max_credits;
  uint32_t smbd_max_io_size;  // SMB Direct (RDMA) only
  uint32_t max_connections;
  uint32_t reserved[126];
  uint32_t ifc_list_size;
  // followed by the interface list
};
static_assert(sizeof(StartupRequest) == 744);

struct ShutdownRequest {
  int32_t reserved[16];
};
static_assert(sizeof(ShutdownRequest) == 64);

// LOGIN_REQUEST: the account a client names in its NTLMSSP AUTHENTICATE.
struct LoginRequest {
  uint32_t handle;
  char account[kAccountNameSize];
  uint32_t reserved[16];
};
static_assert(sizeof(LoginRequest) == 116);

// LoginResponse::status (bits)
inline constexpr uint16_t kUserOk = 1u << 0;
inline constexpr uint16_t kUserBadPassword = 1u << 1;
inline constexpr uint16_t kUserBadUid = 1u << 2;
inline constexpr uint16_t kUserBadUser = 1u << 3;
inline constexpr uint16_t kUserGuestAccount = 1u << 4;
inline constexpr uint16_t kUserDelaySession = 1u << 5;

// LOGIN_RESPONSE: the account's Unix identity and its NT hash, with which
// the kernel verifies the client's NTLMv2 response itself.
struct LoginResponse {
  uint32_t handle;
  uint32_t gid;
  uint32_t uid;
  char account[kAccountNameSize];
  uint16_t status;
  uint16_t hash_size;
  uint8_t hash[kPasswordHashSize];
  uint32_t reserved[16];
};
static_assert(sizeof(LoginResponse) == 148);

struct ShareConfigRequest {
  uint32_t handle;
  char share_name[kShareNameSize];
  uint32_t reserved[16];
};
static_assert(sizeof(ShareConfigRequest) == 132);

// ShareConfigResponse::flags
inline constexpr uint32_t kShareAvailable = 1u << 0;
inline constexpr uint32_t kShareBrowseable = 1u << 1;
inline constexpr uint32_t kShareWriteable = 1u << 2;
inline constexpr uint32_t kShareReadonly = 1u << 3;
inline constexpr uint32_t kShareGuestOk = 1u << 4;
inline constexpr uint32_t kShareGuestOnly = 1u << 5;
inline constexpr uint32_t kShareStoreDosAttrs = 1u << 6;
inline constexpr uint32_t kShareOplocks = 1u << 7;
inline constexpr uint32_t kSharePipe = 1u << 8;
inline constexpr uint32_t kShareHideDotFiles = 1u << 9;
inline constexpr uint32_t kShareInheritOwner = 1u << 10;
inline constexpr uint32_t kShareStreams = 1u << 11;
inline constexpr uint32_t kShareFollowSymlinks = 1u << 12;
inline constexpr uint32_t kShareAclXattr = 1u << 13;
inline constexpr uint32_t kShareUpdate = 1u << 14;

// force_uid / force_gid when the share forces nobody.
inline constexpr uint16_t kNoForcedId = 0xFFFF;

// SHARE_CONFIG_RESPONSE. The tail (payload_size bytes) is the veto list
// (veto_list_size bytes: names separated by NULs), one NUL when the list is
// not empty, then the share's path and its NUL. Modules before the
// payload_size field read it as reserved room and find the path the same
// way; newer ones check payload_size against the attribute length. A share
// that does not exist is answered with flags 0 (no kShareAvailable).
struct ShareConfigResponse {
  uint32_t handle;
  uint32_t flags;
  uint16_t create_mask;
  uint16_t directory_mask;
  uint16_t force_create_mode;
  uint16_t force_directory_mode;
  uint16_t force_uid;
  uint16_t force_gid;
  char share_name[kShareNameSize];
  uint32_t reserved[111];
  uint32_t payload_size;
  uint32_t veto_list_size;
  // followed by the tail
};
static_assert(sizeof(ShareConfigResponse) == 536);

// TreeConnectRequest::flags
inline constexpr uint16_t kTreeRequestIpv6 = 1u << 0;
inline constexpr uint16_t kTreeRequestSmb2 = 1u << 1;

// TREE_CONNECT_REQUEST: after the kernel has the share's configuration.
// account_flags are the LoginResponse::status bits of the session's user.
struct TreeConnectRequest {
  uint32_t handle;
  uint16_t account_flags;
  uint16_t flags;
  uint64_t session_id;
  uint64_t connect_id;
  char account[kAccountNameSize];
  char share[kShareNameSize];
  char peer_address[64];
  uint32_t reserved[16];
};
static_assert(sizeof(TreeConnectRequest) == 264);

enum TreeConnectStatus : uint16_t {
  kTreeOk = 0,
  kTreeNoMemory = 1,
  kTreeNoShare = 2,
  kTreeNoUser = 3,
  kTreeInvalidUser = 4,
  kTreeHostDenied = 5,
  kTreeConnectionExists = 6,
  kTreeTooManyConnections = 7,
  kTreeTooManySessions = 8,
  kTreeError = 9,
};

// TreeConnectResponse::connection_flags
inline constexpr uint16_t kTreeGuest = 1u << 0;
inline constexpr uint16_t kTreeReadOnly = 1u << 1;
inline constexpr uint16_t kTreeWritable = 1u << 2;
inline constexpr uint16_t kTreeAdmin = 1u << 3;
inline constexpr uint16_t kTreeUpdate = 1u << 4;  // re-fetch the share's configuration (newer modules)

struct TreeConnectResponse {
  uint32_t handle;
  uint16_t status;
  uint16_t connection_flags;
  uint32_t reserved[16];
};
static_assert(sizeof(TreeConnectResponse) == 72);

struct TreeDisconnectRequest {
  uint64_t session_id;
  uint64_t connect_id;
  uint32_t reserved[16];
};
static_assert(sizeof(TreeDisconnectRequest) == 80);

struct LogoutRequest {
  char account[kAccountNameSize];
  uint32_t account_flags;
  uint32_t reserved[16];
};
static_assert(sizeof(LogoutRequest) == 116);

// RpcCommand::flags on a request: which pipe (set when the pipe was opened
// by name) and which operation.
inline constexpr uint32_t kRpcReturn = 1u << 0;
inline constexpr uint32_t kRpcSrvsvc = 1u << 1;
inline constexpr uint32_t kRpcWkssvc = 1u << 2;
inline constexpr uint32_t kRpcIoctl = 1u << 3;  // FSCTL_PIPE_TRANSCEIVE (with kRpcReturn)
inline constexpr uint32_t kRpcOpen = 1u << 4;
inline constexpr uint32_t kRpcWrite = 1u << 5;
inline constexpr uint32_t kRpcRead = 1u << 6;  // with kRpcReturn
inline constexpr uint32_t kRpcClose = 1u << 7;
inline constexpr uint32_t kRpcRap = 1u << 8;   // SMB1 LANMAN, with kRpcReturn
inline constexpr uint32_t kRpcRestricted = 1u << 9;  // the session is a guest's
inline constexpr uint32_t kRpcSamr = 1u << 10;
inline constexpr uint32_t kRpcLsarpc = 1u << 11;

// RpcCommand::flags on a response: a status (Windows error numbers).
inline constexpr uint32_t kRpcOk = 0;
inline constexpr uint32_t kRpcBadFunction = 0x01;
inline constexpr uint32_t kRpcAccessDenied = 0x05;
inline constexpr uint32_t kRpcBadFid = 0x06;
inline constexpr uint32_t kRpcNoMemory = 0x08;
inline constexpr uint32_t kRpcBadData = 0x0D;
inline constexpr uint32_t kRpcNotImplemented = 0x40;
inline constexpr uint32_t kRpcMoreData = 0xEA;

// The kernel copies at most this much of a TRANSCEIVE answer.
inline constexpr uint32_t kRpcMaxReply = 4096;

// RPC_REQUEST / RPC_RESPONSE: the handle is the kernel's pipe id; the
// payload (payload_size bytes) is DCE/RPC bytes. The response's attribute
// must be exactly sizeof(RpcCommand) + payload_size long.
struct RpcCommand {
  uint32_t handle;
  uint32_t flags;
  uint32_t payload_size;
  // followed by the payload
};
static_assert(sizeof(RpcCommand) == 12);

// SPNEGO_AUTHEN_REQUEST: handle (u32), blob length (u16), the GSS blob at
// offset 6. The response: handle, a LoginResponse, session key length,
// blob length, then key and blob. Kerberos is not supported: the shim
// answers with a LoginResponse without kUserOk, which fails the session.
inline constexpr size_t kSpnegoBlobOffset = 6;
struct SpnegoAuthenResponse {
  uint32_t handle;
  LoginResponse login;
  uint16_t session_key_length;
  uint16_t blob_length;
  // followed by the key and the blob
};
static_assert(sizeof(SpnegoAuthenResponse) == 156);

}  // namespace ringsmb::kmod::abi
