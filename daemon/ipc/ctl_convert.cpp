// control_plane.hpp structs <-> ctl_abi attributes. Decoders of replies
// distrust a "success" that lacks what success needs: it becomes a failure,
// so a confused control daemon can never grant a login without an identity.
#include <cstring>

#include "ipc/ctl_codec.hpp"

namespace ringsmb::ipc {

using namespace abi;

void encode_login_request(MsgBuilder& b, const LoginRequest& r) {
  b.bytes(ATTR_SERVER_CHALLENGE, r.server_challenge)
      .bytes(ATTR_NTLM_CHALLENGE, r.challenge_msg)
      .bytes(ATTR_NTLM_AUTHENTICATE, r.authenticate_msg)
      .str(ATTR_CLIENT_ADDRESS, r.client_address);
  if (!r.negotiate_msg.empty()) b.bytes(ATTR_NTLM_NEGOTIATE, r.negotiate_msg);
}

LoginRequest decode_login_request(const Message& m) {
  LoginRequest r;
  r.client_address = m.str(ATTR_CLIENT_ADDRESS);
  ByteSpan ch = m.bytes(ATTR_SERVER_CHALLENGE);  // exactly 8 by policy
  memcpy(r.server_challenge.data(), ch.data(), r.server_challenge.size());
  r.negotiate_msg = m.bytes(ATTR_NTLM_NEGOTIATE);
  r.challenge_msg = m.bytes(ATTR_NTLM_CHALLENGE);
  r.authenticate_msg = m.bytes(ATTR_NTLM_AUTHENTICATE);
  return r;
}

void encode_login_reply(MsgBuilder& b, const LoginReply& r, bool with_groups) {
  b.u32(ATTR_STATUS, uint32_t(r.status));
  if (r.status != NtStatus::Success) return;
  uint32_t flags = (r.is_guest ? LOGIN_GUEST : 0) | (r.is_anonymous ? LOGIN_ANONYMOUS : 0);
  b.str(ATTR_ACCOUNT, r.user).u32(ATTR_LOGIN_FLAGS, flags);
  b.u32(ATTR_UID, r.unix_user.uid).u32(ATTR_GID, r.unix_user.gid);
  if (!r.is_guest && !r.is_anonymous) b.bytes(ATTR_SESSION_KEY, r.session_key);
  if (with_groups) {
    std::vector<uint8_t> raw(r.unix_user.groups.size() * 4);
    if (!raw.empty()) memcpy(raw.data(), r.unix_user.groups.data(), raw.size());
    b.bytes(ATTR_GROUPS, raw);
  }
}

LoginReply decode_login_reply(const Message& m) {
  LoginReply r;
  r.status = NtStatus(m.u32(ATTR_STATUS));
  if (r.status != NtStatus::Success) return r;
  uint32_t flags = m.u32(ATTR_LOGIN_FLAGS);
  r.is_guest = flags & LOGIN_GUEST;
  r.is_anonymous = flags & LOGIN_ANONYMOUS;
  bool needs_key = !r.is_guest && !r.is_anonymous;
  if (!m.has(ATTR_LOGIN_FLAGS) || !m.has(ATTR_UID) || !m.has(ATTR_GID) || (needs_key && !m.has(ATTR_SESSION_KEY))) {
    r.status = NtStatus::LogonFailure;
    return r;
  }
  r.user = m.str(ATTR_ACCOUNT);
  r.unix_user.uid = m.u32(ATTR_UID);
  r.unix_user.gid = m.u32(ATTR_GID);
  if (needs_key) memcpy(r.session_key.data(), m.bytes(ATTR_SESSION_KEY).data(), r.session_key.size());
  ByteSpan g = m.bytes(ATTR_GROUPS);  // a multiple of 4 by parse_message
  r.unix_user.groups.resize(g.size() / 4);
  if (!g.empty()) memcpy(r.unix_user.groups.data(), g.data(), g.size());
  return r;
}

void encode_tree_connect_request(MsgBuilder& b, const TreeConnectRequest& r) {
  b.str(ATTR_SHARE_NAME, r.share)
      .str(ATTR_ACCOUNT, r.user)
      .u32(ATTR_LOGIN_FLAGS, r.is_guest ? LOGIN_GUEST : 0)
      .str(ATTR_CLIENT_ADDRESS, r.client_address);
}

TreeConnectRequest decode_tree_connect_request(const Message& m) {
  TreeConnectRequest r;
  r.share = m.str(ATTR_SHARE_NAME);
  r.user = m.str(ATTR_ACCOUNT);
  r.is_guest = m.u32(ATTR_LOGIN_FLAGS) & LOGIN_GUEST;
  r.client_address = m.str(ATTR_CLIENT_ADDRESS);
  return r;
}

void encode_share(MsgBuilder& b, const ShareInfo& s, uint32_t extra_flags) {
  uint32_t flags = extra_flags | (s.is_ipc ? SHARE_IPC : 0) | (s.read_only ? SHARE_READ_ONLY : 0) |
                   (s.browseable ? SHARE_BROWSEABLE : 0) | (s.case_sensitive ? SHARE_CASE_SENSITIVE : 0);
  b.str(ATTR_SHARE_NAME, s.name)
      .str(ATTR_SHARE_PATH, s.path)
      .str(ATTR_SHARE_COMMENT, s.comment)
      .u32(ATTR_SHARE_FLAGS, flags)
      .u32(ATTR_ENCRYPTION, uint32_t(s.encryption));
}

void encode_tree_connect_reply(MsgBuilder& b, const TreeConnectReply& r) {
  b.u32(ATTR_STATUS, uint32_t(r.status));
  if (r.status == NtStatus::Success) encode_share(b, r.share, r.writable ? SHARE_WRITABLE : 0);
}

TreeConnectReply decode_tree_connect_reply(const Message& m) {
  TreeConnectReply r;
  r.status = NtStatus(m.u32(ATTR_STATUS));
  if (r.status != NtStatus::Success) return r;
  uint32_t enc = m.u32(ATTR_ENCRYPTION);
  if (!m.has(ATTR_SHARE_NAME) || !m.has(ATTR_SHARE_FLAGS) || enc > uint32_t(config::EncryptionPolicy::Required)) {
    r.status = NtStatus::BadNetworkName;
    return r;
  }
  uint32_t flags = m.u32(ATTR_SHARE_FLAGS);
  r.share.name = m.str(ATTR_SHARE_NAME);
  r.share.path = m.str(ATTR_SHARE_PATH);
  r.share.comment = m.str(ATTR_SHARE_COMMENT);
  r.share.is_ipc = flags & SHARE_IPC;
  r.share.read_only = flags & SHARE_READ_ONLY;
  r.share.browseable = flags & SHARE_BROWSEABLE;
  r.share.case_sensitive = flags & SHARE_CASE_SENSITIVE;
  r.share.encryption = config::EncryptionPolicy(enc);
  r.writable = flags & SHARE_WRITABLE;
  if (!r.share.is_ipc && r.share.path.empty()) r.status = NtStatus::BadNetworkName;  // nothing to serve
  return r;
}

}  // namespace ringsmb::ipc
