// control_plane.hpp structs <-> ctl_abi attributes. Decoders of replies
// distrust a "success" that lacks what success needs: it becomes a failure,
// so a confused control daemon can never grant a login without an identity.
#include <algorithm>
#include <cstring>

#include "ipc/ctl_codec.hpp"

namespace ringsmb::ipc {

using namespace abi;

namespace {

// ATTR_SIDS: one space between SIDs. A text beyond kMaxSidsText is never
// sent (the control plane refuses such a login); the policy drops it too.
std::string join_sids(const std::vector<std::string>& sids) {
  std::string out;
  for (const auto& s : sids) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

std::vector<std::string> split_sids(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    size_t space = text.find(' ');
    if (space != 0) out.emplace_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

}  // namespace

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
  if (r.delay_ms) b.u32(ATTR_DELAY_MS, r.delay_ms);
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
  if (!r.sids.empty()) b.str(ATTR_SIDS, join_sids(r.sids));
}

LoginReply decode_login_reply(const Message& m) {
  LoginReply r;
  r.status = NtStatus(m.u32(ATTR_STATUS));
  r.delay_ms = std::min<uint32_t>(m.u32(ATTR_DELAY_MS), 300000);  // the largest "login failure max delay"
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
  r.sids = split_sids(m.str(ATTR_SIDS));
  return r;
}

void encode_kerberos_login_request(MsgBuilder& b, const KerberosLoginRequest& r) {
  b.bytes(ATTR_SPNEGO_BLOB, r.mech_token).str(ATTR_CLIENT_ADDRESS, r.client_address);
}

KerberosLoginRequest decode_kerberos_login_request(const Message& m) {
  KerberosLoginRequest r;
  r.client_address = m.str(ATTR_CLIENT_ADDRESS);
  r.mech_token = m.bytes(ATTR_SPNEGO_BLOB);
  return r;
}

void encode_kerberos_login_reply(MsgBuilder& b, const KerberosLoginReply& r) {
  encode_login_reply(b, r.login, true);
  if (r.login.status == NtStatus::Success && !r.response_token.empty()) b.bytes(ATTR_SPNEGO_BLOB, r.response_token);
}

KerberosLoginReply decode_kerberos_login_reply(const Message& m) {
  KerberosLoginReply r;
  r.login = decode_login_reply(m);
  // A Kerberos login always has a key: guest and anonymous are NTLM's.
  if (r.login.status == NtStatus::Success && (r.login.is_guest || r.login.is_anonymous))
    r.login.status = NtStatus::LogonFailure;
  if (r.login.status != NtStatus::Success) return r;
  ByteSpan token = m.bytes(ATTR_SPNEGO_BLOB);
  r.response_token.assign(token.begin(), token.end());
  return r;
}

void encode_tree_connect_request(MsgBuilder& b, const TreeConnectRequest& r) {
  b.str(ATTR_SHARE_NAME, r.share)
      .str(ATTR_ACCOUNT, r.user)
      .u32(ATTR_LOGIN_FLAGS, r.is_guest ? LOGIN_GUEST : 0)
      .str(ATTR_CLIENT_ADDRESS, r.client_address);
  if (!r.sids.empty()) b.str(ATTR_SIDS, join_sids(r.sids));
}

TreeConnectRequest decode_tree_connect_request(const Message& m) {
  TreeConnectRequest r;
  r.share = m.str(ATTR_SHARE_NAME);
  r.user = m.str(ATTR_ACCOUNT);
  r.is_guest = m.u32(ATTR_LOGIN_FLAGS) & LOGIN_GUEST;
  r.client_address = m.str(ATTR_CLIENT_ADDRESS);
  r.sids = split_sids(m.str(ATTR_SIDS));
  return r;
}

namespace {

// The veto patterns travel in Samba's own "/a/b/" spelling; a pattern never
// contains '/' (the config parser splits on it).
std::string join_veto(const std::vector<std::string>& patterns) {
  std::string out;
  for (const auto& p : patterns) out += "/" + p;
  if (!out.empty()) out += "/";
  return out;
}

std::vector<std::string> split_veto(std::string_view v) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < v.size()) {
    size_t slash = v.find('/', pos);
    if (slash == std::string_view::npos) slash = v.size();
    if (slash > pos) out.emplace_back(v.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return out;
}

// The recycle bin travels only when it is on; its absence means off.
void encode_recycle(MsgBuilder& b, const config::RecycleConfig& r) {
  if (!r.enabled) return;
  uint32_t flags = (r.keeptree ? RECYCLE_KEEPTREE : 0) | (r.versions ? RECYCLE_VERSIONS : 0) |
                   (r.touch ? RECYCLE_TOUCH : 0) | (r.touch_mtime ? RECYCLE_TOUCH_MTIME : 0);
  b.str(ATTR_RECYCLE_REPOSITORY, r.repository)
      .u32(ATTR_RECYCLE_FLAGS, flags)
      .u32(ATTR_RECYCLE_DIR_MODES, r.directory_mode | r.subdir_mode.value_or(r.directory_mode) << 16)
      .u64(ATTR_RECYCLE_MINSIZE, r.minsize_bytes)
      .u64(ATTR_RECYCLE_MAXSIZE, r.maxsize_bytes);
  if (!r.exclude.empty()) b.str(ATTR_RECYCLE_EXCLUDE, join_veto(r.exclude));
  if (!r.exclude_dir.empty()) b.str(ATTR_RECYCLE_EXCLUDE_DIR, join_veto(r.exclude_dir));
  if (!r.noversions.empty()) b.str(ATTR_RECYCLE_NOVERSIONS, join_veto(r.noversions));
}

void decode_recycle(const Message& m, config::RecycleConfig& r) {
  r = {};
  if (!m.has(ATTR_RECYCLE_REPOSITORY)) return;
  r.enabled = true;
  r.repository = m.str(ATTR_RECYCLE_REPOSITORY);
  uint32_t flags = m.u32(ATTR_RECYCLE_FLAGS);
  r.keeptree = flags & RECYCLE_KEEPTREE;
  r.versions = flags & RECYCLE_VERSIONS;
  r.touch = flags & RECYCLE_TOUCH;
  r.touch_mtime = flags & RECYCLE_TOUCH_MTIME;
  uint32_t modes = m.u32(ATTR_RECYCLE_DIR_MODES, 0700 | 0700u << 16);
  r.directory_mode = modes & 07777;
  r.subdir_mode = (modes >> 16) & 07777;
  r.minsize_bytes = m.u64(ATTR_RECYCLE_MINSIZE);
  r.maxsize_bytes = m.u64(ATTR_RECYCLE_MAXSIZE);
  r.exclude = split_veto(m.str(ATTR_RECYCLE_EXCLUDE));
  r.exclude_dir = split_veto(m.str(ATTR_RECYCLE_EXCLUDE_DIR));
  r.noversions = split_veto(m.str(ATTR_RECYCLE_NOVERSIONS));
}

// ShadowCopyConfig as "key=value" lines (values hold no newline: they
// come from one line of the config file).
std::string encode_shadow_copy(const config::ShadowCopyConfig& c) {
  return "snapdir=" + c.snapdir + "\nformat=" + c.format + "\nlocaltime=" + (c.localtime ? "1" : "0") +
         "\nsort_descending=" + (c.sort_descending ? "1" : "0") + "\nmountpoint=" + c.mountpoint +
         "\nbasedir=" + c.basedir + "\nsnapsharepath=" + c.snapsharepath;
}

config::ShadowCopyConfig decode_shadow_copy(std::string_view text) {
  config::ShadowCopyConfig c;
  c.enabled = true;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = line.substr(0, eq);
    std::string value(line.substr(eq + 1));
    if (key == "snapdir") c.snapdir = value;
    else if (key == "format") c.format = value;
    else if (key == "localtime") c.localtime = value == "1";
    else if (key == "sort_descending") c.sort_descending = value == "1";
    else if (key == "mountpoint") c.mountpoint = value;
    else if (key == "basedir") c.basedir = value;
    else if (key == "snapsharepath") c.snapsharepath = value;
  }
  return c;
}

void encode_force_identity(MsgBuilder& b, const ShareInfo& s) {
  if (s.force_user) {
    const UnixUser& u = *s.force_user;
    std::vector<uint8_t> raw(u.groups.size() * 4);
    if (!raw.empty()) memcpy(raw.data(), u.groups.data(), raw.size());
    b.u32(ATTR_FORCE_UID, u.uid).u32(ATTR_GID, u.gid).bytes(ATTR_GROUPS, raw);
  }
  if (s.force_gid) b.u32(ATTR_FORCE_GID, *s.force_gid);
}

void encode_fruit(MsgBuilder& b, const config::FruitOptions& f) {
  if (!f.enabled) return;
  using R = config::FruitOptions::Resource;
  uint32_t flags = FRUIT_ENABLED | (f.aapl ? FRUIT_AAPL : 0) | (f.copyfile ? FRUIT_COPYFILE : 0) |
                   (f.nfs_aces ? FRUIT_NFS_ACES : 0) | (f.time_machine ? FRUIT_TIME_MACHINE : 0) |
                   (f.posix_rename ? FRUIT_POSIX_RENAME : 0) | (f.veto_appledouble ? FRUIT_VETO_APPLEDOUBLE : 0) |
                   (f.wipe_intentionally_left_blank_rfork ? FRUIT_WIPE_BLANK_RFORK : 0) |
                   (f.delete_empty_adfiles ? FRUIT_DELETE_EMPTY_ADFILES : 0) |
                   (f.zero_file_id ? FRUIT_ZERO_FILE_ID : 0) |
                   (f.metadata == config::FruitOptions::Metadata::Netatalk ? FRUIT_METADATA_NETATALK : 0) |
                   (f.resource == R::Stream ? FRUIT_RESOURCE_STREAM : 0) |
                   (f.resource == R::Xattr ? FRUIT_RESOURCE_XATTR : 0) |
                   (f.netatalk_locking ? FRUIT_LOCKING_NETATALK : 0);
  b.u32(ATTR_FRUIT_FLAGS, flags).str(ATTR_FRUIT_MODEL, f.model);
  if (f.time_machine_max_size) b.u64(ATTR_FRUIT_TM_MAX_SIZE, f.time_machine_max_size);
}

void decode_fruit(const Message& m, config::FruitOptions& f) {
  uint32_t flags = m.u32(ATTR_FRUIT_FLAGS, 0);
  using R = config::FruitOptions::Resource;
  f.enabled = flags & FRUIT_ENABLED;
  f.aapl = flags & FRUIT_AAPL;
  f.copyfile = flags & FRUIT_COPYFILE;
  f.nfs_aces = flags & FRUIT_NFS_ACES;
  f.time_machine = flags & FRUIT_TIME_MACHINE;
  f.posix_rename = flags & FRUIT_POSIX_RENAME;
  f.veto_appledouble = flags & FRUIT_VETO_APPLEDOUBLE;
  f.wipe_intentionally_left_blank_rfork = flags & FRUIT_WIPE_BLANK_RFORK;
  f.delete_empty_adfiles = flags & FRUIT_DELETE_EMPTY_ADFILES;
  f.zero_file_id = flags & FRUIT_ZERO_FILE_ID;
  f.netatalk_locking = flags & FRUIT_LOCKING_NETATALK;
  f.metadata = flags & FRUIT_METADATA_NETATALK ? config::FruitOptions::Metadata::Netatalk
                                                : config::FruitOptions::Metadata::Stream;
  f.resource = flags & FRUIT_RESOURCE_STREAM ? R::Stream : flags & FRUIT_RESOURCE_XATTR ? R::Xattr : R::File;
  f.time_machine_max_size = m.u64(ATTR_FRUIT_TM_MAX_SIZE, 0);
  if (m.has(ATTR_FRUIT_MODEL)) f.model = std::string(m.str(ATTR_FRUIT_MODEL));
}

// Options absent from an older peer keep their defaults, except the
// booleans, which are flag bits and read as "off" (never grant a lease or an
// oplock the other side did not say yes to).
void decode_share_options(const Message& m, uint32_t flags, ShareInfo& s) {
  s.hide_dot_files = flags & SHARE_HIDE_DOT_FILES;
  s.oplocks = flags & SHARE_OPLOCKS;
  s.leases = flags & SHARE_LEASES;
  s.store_dos_attributes = flags & SHARE_STORE_DOS_ATTRIBUTES;
  s.streams = flags & SHARE_STREAMS;
  s.nt_acl_support = flags & SHARE_NT_ACL_SUPPORT;
  s.acl_flag_inherited_canonicalization = flags & SHARE_ACL_FLAG_CANONICALIZATION;
  s.client_symlinks = flags & SHARE_CLIENT_SYMLINKS;
  s.create_mask = m.u32(ATTR_CREATE_MASK, s.create_mask) & 07777;
  s.directory_mask = m.u32(ATTR_DIRECTORY_MASK, s.directory_mask) & 07777;
  s.veto_files = split_veto(m.str(ATTR_VETO_FILES));
  if (m.has(ATTR_FORCE_UID) && m.has(ATTR_GID)) {
    UnixUser u;
    u.uid = m.u32(ATTR_FORCE_UID);
    u.gid = m.u32(ATTR_GID);
    ByteSpan g = m.bytes(ATTR_GROUPS);  // a multiple of 4 by parse_message
    u.groups.resize(g.size() / 4);
    if (!g.empty()) memcpy(u.groups.data(), g.data(), g.size());
    s.force_user = std::move(u);
  }
  if (m.has(ATTR_FORCE_GID)) s.force_gid = m.u32(ATTR_FORCE_GID);
  decode_recycle(m, s.recycle);
  if (m.has(ATTR_SHADOW_COPY)) s.shadow_copy = decode_shadow_copy(m.str(ATTR_SHADOW_COPY));
  decode_fruit(m, s.fruit);
}

}  // namespace

void encode_share(MsgBuilder& b, const ShareInfo& s, uint32_t extra_flags) {
  uint32_t flags = extra_flags | (s.is_ipc ? SHARE_IPC : 0) | (s.read_only ? SHARE_READ_ONLY : 0) |
                   (s.browseable ? SHARE_BROWSEABLE : 0) | (s.case_sensitive ? SHARE_CASE_SENSITIVE : 0) |
                   (s.hide_dot_files ? SHARE_HIDE_DOT_FILES : 0) | (s.oplocks ? SHARE_OPLOCKS : 0) |
                   (s.leases ? SHARE_LEASES : 0) | (s.store_dos_attributes ? SHARE_STORE_DOS_ATTRIBUTES : 0) |
                   (s.streams ? SHARE_STREAMS : 0) | (s.nt_acl_support ? SHARE_NT_ACL_SUPPORT : 0) |
                   (s.acl_flag_inherited_canonicalization ? SHARE_ACL_FLAG_CANONICALIZATION : 0) |
                   (s.client_symlinks ? SHARE_CLIENT_SYMLINKS : 0);
  b.str(ATTR_SHARE_NAME, s.name)
      .str(ATTR_SHARE_PATH, s.path)
      .str(ATTR_SHARE_COMMENT, s.comment)
      .u32(ATTR_SHARE_FLAGS, flags)
      .u32(ATTR_ENCRYPTION, uint32_t(s.encryption))
      .u32(ATTR_CREATE_MASK, s.create_mask)
      .u32(ATTR_DIRECTORY_MASK, s.directory_mask);
  if (!s.veto_files.empty()) b.str(ATTR_VETO_FILES, join_veto(s.veto_files));
  if (s.shadow_copy) b.str(ATTR_SHADOW_COPY, encode_shadow_copy(*s.shadow_copy));
  encode_force_identity(b, s);
  encode_recycle(b, s.recycle);
  encode_fruit(b, s.fruit);
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
  decode_share_options(m, flags, r.share);
  r.writable = flags & SHARE_WRITABLE;
  if (!r.share.is_ipc && r.share.path.empty()) r.status = NtStatus::BadNetworkName;  // nothing to serve
  return r;
}

}  // namespace ringsmb::ipc
