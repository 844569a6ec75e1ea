// What the data plane asks the control plane: logins, share configuration and
// tree-connect decisions. ringsmbd's handlers only see this interface, so the
// control plane can live in-process (control/local_control_plane.hpp) or
// behind netlink in ringsmb-ctld (ipc/netlink_control_plane.hpp) without
// touching them. The event set mirrors ksmbd's
// (login, share-config, tree-connect, tree-disconnect, logout).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "common/unix_user.hpp"
#include "config/config.hpp"
#include "config/share_info.hpp"

namespace ringsmb::ipc {

// The value types shared with state/ (who a session is, what a tree
// connect reached), defined below ipc/ so that state/ need not see it.
using UnixUser = ringsmb::UnixUser;
using ShareInfo = config::ShareInfo;

struct LoginRequest {
  std::string client_address;
  std::array<uint8_t, 8> server_challenge{};
  ByteSpan negotiate_msg;     // NTLMSSP NEGOTIATE as the client sent it
  ByteSpan challenge_msg;     // our CHALLENGE
  ByteSpan authenticate_msg;  // the client's AUTHENTICATE
};

struct LoginReply {
  NtStatus status = NtStatus::LogonFailure;
  std::string user;  // the account name as stored
  bool is_guest = false;
  bool is_anonymous = false;
  std::array<uint8_t, 16> session_key{};  // zero for guest / anonymous
  UnixUser unix_user;
  // A domain account's Windows SIDs from its PAC (MS-PAC LOGON_INFO), as
  // text: the user's first, then its groups'. They count in NT ACL checks
  // and in "valid users"-style lists; empty for local and MIT accounts.
  std::vector<std::string> sids;
  // How long the data plane holds the answer back (the login throttle,
  // control/login_throttle.hpp), success or failure; 0: answer now.
  uint32_t delay_ms = 0;
};

// A Kerberos login (SPNEGO with the krb5 mechanism): the GSS token the
// client sent (an AP-REQ in RFC 4121 framing), checked where the keytab is.
struct KerberosLoginRequest {
  std::string client_address;
  ByteSpan mech_token;
};

struct KerberosLoginReply {
  LoginReply login;      // user (the mapped Unix account), session key, identity
  Bytes response_token;  // the AP-REP for the client (mutual authentication)
};

struct TreeConnectRequest {
  std::string share;  // the share name part of \\server\share
  std::string user;
  bool is_guest = false;
  std::string client_address;
  std::vector<std::string> sids;  // the session's (LoginReply::sids)
};

struct TreeConnectReply {
  NtStatus status = NtStatus::BadNetworkName;
  ShareInfo share;
  bool writable = false;
};

// IPC$ named pipes (DCE/RPC runs in the control plane, daemon/rpc). The
// data plane picks HANDLE, unique among its open pipes, and relays bytes.
struct PipeOpenRequest {
  uint32_t handle = 0;
  std::string pipe;  // as the client named it: "srvsvc", "\\PIPE\\srvsvc"
  std::string user;  // the session's account
  bool is_guest = false;
};

struct PipeReply {
  // Success, or: ObjectNameNotFound (no such pipe), InvalidHandle (the
  // control plane forgot it, e.g. ringsmb-ctld restarted), PipeBroken (the
  // client broke the DCE/RPC stream), PipeNotAvailable (no control plane).
  NtStatus status = NtStatus::PipeNotAvailable;
  Bytes data;         // READ / TRANSCEIVE: one message, or its first part
  bool more = false;  // the message has more bytes than were asked for
};

class ControlPlane {
 public:
  virtual ~ControlPlane() = default;
  virtual LoginReply login(const LoginRequest& req) = 0;
  // LOGON_FAILURE unless the control plane accepts Kerberos (a keytab is
  // configured: config::kerberos_keytab).
  virtual KerberosLoginReply kerberos_login(const KerberosLoginRequest&) { return {}; }
  virtual TreeConnectReply tree_connect(const TreeConnectRequest& req) = 0;
  virtual void tree_disconnect(const std::string& share, const std::string& user) = 0;
  virtual void logout(const std::string& user) = 0;
  // Named pipes. A handle stays open until pipe_close, which the data
  // plane calls for every open it drops (CLOSE, tree disconnect, logoff,
  // connection loss).
  virtual PipeReply pipe_open(const PipeOpenRequest& req) = 0;
  virtual PipeReply pipe_write(uint32_t handle, ByteSpan data) = 0;
  virtual PipeReply pipe_read(uint32_t handle, uint32_t max) = 0;
  // FSCTL_PIPE_TRANSCEIVE: write IN, then read up to MAX.
  virtual PipeReply pipe_transceive(uint32_t handle, ByteSpan in, uint32_t max) = 0;
  virtual void pipe_close(uint32_t handle) = 0;
  // The caller's own home share ([homes]) for the share list; empty: none.
  virtual std::string home_share_of(const std::string& /*user*/, bool /*is_guest*/) { return {}; }
  // SIGHUP: re-read configuration and users where the implementation caches
  // them (the in-process one re-reads the user database by itself).
  virtual void reload() {}
  // NetBIOS names for the NTLM CHALLENGE.
  virtual std::string workgroup() const = 0;
  virtual std::string netbios_name() const = 0;
};

}  // namespace ringsmb::ipc
