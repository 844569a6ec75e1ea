// Logins, share configuration and tree connects for ksmbd.ko.
#include "kmod-shim/ksmbd_shim.hpp"

#include <grp.h>

#include <algorithm>

#include "auth/user_db.hpp"
#include "common/log.hpp"
#include "control/local_control_plane.hpp"
#include "kmod-shim/ksmbd_abi.hpp"
#include "kmod-shim/ksmbd_structs.hpp"

namespace ringsmb::kmod {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(tolower(c)); });
  return s;
}

abi::TreeConnectStatus tree_status(NtStatus s) {
  switch (s) {
    case NtStatus::Success: return abi::kTreeOk;
    case NtStatus::BadNetworkName: return abi::kTreeNoShare;
    case NtStatus::NoSuchUser: return abi::kTreeNoUser;
    case NtStatus::AccessDenied: return abi::kTreeInvalidUser;
    default: return abi::kTreeError;
  }
}

}  // namespace

KsmbdShim::KsmbdShim(config::Config cfg) : cfg_(std::move(cfg)), policy_(control::make_local_control_plane(cfg_)) {}

KsmbdShim::~KsmbdShim() = default;

void KsmbdShim::reload(const config::Config& cfg) {
  cfg_ = cfg;
  policy_ = control::make_local_control_plane(cfg_);
  for (const auto& s : cfg_.shares) shares_to_update_.insert(lower(s.name));
}

std::optional<KernelReply> KsmbdShim::handle(uint8_t event, ByteSpan p) {
  switch (event) {
    case abi::kHeartbeatRequest: return std::nullopt;  // the unicast succeeding is the answer
    case abi::kLoginRequest: return KernelReply{abi::kLoginResponse, on_login(p)};
    case abi::kShareConfigRequest: return KernelReply{abi::kShareConfigResponse, on_share_config(p)};
    case abi::kTreeConnectRequest: return KernelReply{abi::kTreeConnectResponse, on_tree_connect(p)};
    case abi::kRpcRequest: return KernelReply{abi::kRpcResponse, on_rpc(p)};
    case abi::kSpnegoAuthenRequest: return KernelReply{abi::kSpnegoAuthenResponse, on_spnego(p)};
    case abi::kTreeDisconnectRequest:
      if (auto r = read_struct<abi::TreeDisconnectRequest>(p))
        LOG_DEBUG("ksmbd: tree disconnect (session %llu, tree %llu)", (unsigned long long)r->session_id,
                  (unsigned long long)r->connect_id);
      return std::nullopt;
    case abi::kLogoutRequest:
      if (auto r = read_struct<abi::LogoutRequest>(p)) policy_->logout(get_string(r->account));
      return std::nullopt;
    default:
      LOG_WARN("ksmbd: unexpected event %u (%zu bytes) ignored", unsigned(event), p.size());
      return std::nullopt;
  }
}

// The account's NT hash and Unix identity: the kernel checks the password.
Bytes KsmbdShim::on_login(ByteSpan p) {
  auto req = read_struct<abi::LoginRequest>(p);
  auto resp = zeroed<abi::LoginResponse>();
  if (!req) return struct_bytes(resp);  // the kernel's attribute policy makes this unreachable
  resp.handle = req->handle;
  std::string account = get_string(req->account);
  put_string(resp.account, account);
  auto db = auth::UserDb::load(cfg_.global.users_db);
  if (!db) LOG_ERROR("ksmbd login '%s': %s", account.c_str(), db.error().c_str());
  const auth::UserRecord* rec = db ? db->find(account) : nullptr;
  if (rec && rec->disabled) {
    // ksmbd's login response has no "disabled": the session fails as for
    // an unknown user, never mapped to guest.
    resp.status = abi::kUserBadUser;
    LOG_INFO("ksmbd login: user '%s' is disabled", account.c_str());
    return struct_bytes(resp);
  }
  std::string unix_user = rec ? rec->unix_user : cfg_.global.guest_account;
  bool guest = !rec && cfg_.global.map_to_guest == config::MapToGuest::BadUser;
  if (!rec && !guest) {
    resp.status = abi::kUserBadUser;
    LOG_INFO("ksmbd login: no user '%s'", account.c_str());
    return struct_bytes(resp);
  }
  auto id = auth::lookup_unix_identity(unix_user);
  if (!id) {
    LOG_ERROR("ksmbd login '%s': unix user '%s' does not exist", account.c_str(), unix_user.c_str());
    resp.status = abi::kUserBadUid;
    return struct_bytes(resp);
  }
  resp.uid = id->uid;
  resp.gid = id->gid;
  resp.status = abi::kUserOk | (guest ? abi::kUserGuestAccount : 0);
  if (rec) {
    resp.hash_size = uint16_t(rec->nt_hash.size());
    std::copy(rec->nt_hash.begin(), rec->nt_hash.end(), resp.hash);
  }
  // Never the hash itself, even at debug level.
  LOG_DEBUG("ksmbd login '%s': status 0x%x, uid %u, gid %u, %u-byte hash", account.c_str(), unsigned(resp.status),
            resp.uid, resp.gid, unsigned(resp.hash_size));
  return struct_bytes(resp);
}

namespace {

uint32_t share_flags(const ipc::ShareInfo& info, const config::ShareConfig* sc) {
  if (info.is_ipc) return abi::kShareAvailable | abi::kSharePipe;
  uint32_t f = abi::kShareAvailable;
  f |= info.read_only ? abi::kShareReadonly : abi::kShareWriteable;
  if (info.browseable) f |= abi::kShareBrowseable;
  if (sc && sc->guest_ok) f |= abi::kShareGuestOk;
  if (info.store_dos_attributes) f |= abi::kShareStoreDosAttrs;
  if (info.oplocks) f |= abi::kShareOplocks;
  if (info.hide_dot_files) f |= abi::kShareHideDotFiles;
  return f;
}

std::optional<uint32_t> group_id(const std::string& name) {
  group gr{}, *res = nullptr;
  std::vector<char> buf(16384);
  if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &res) != 0 || !res) return std::nullopt;
  return uint32_t(res->gr_gid);
}

// force user / force group as the share-wide ids ksmbd applies (it has no
// per-user "+group"; make_startup_request reports that).
void forced_ids(const config::ShareConfig* sc, abi::ShareConfigResponse& resp) {
  resp.force_uid = resp.force_gid = abi::kNoForcedId;
  if (!sc) return;
  if (!sc->force_user.empty())
    if (auto id = auth::lookup_unix_identity(sc->force_user); id && id->uid < abi::kNoForcedId) {
      resp.force_uid = uint16_t(id->uid);
      resp.force_gid = uint16_t(id->gid);
    }
  if (!sc->force_group.empty() && sc->force_group[0] != '+')
    if (auto gid = group_id(sc->force_group); gid && *gid < abi::kNoForcedId)
      resp.force_gid = uint16_t(*gid);
}

}  // namespace

Bytes KsmbdShim::on_share_config(ByteSpan p) {
  auto req = read_struct<abi::ShareConfigRequest>(p);
  auto resp = zeroed<abi::ShareConfigResponse>();
  if (!req) return struct_bytes(resp);
  resp.handle = req->handle;
  std::string name = get_string(req->share_name);
  auto info = control::share_info(cfg_, name);
  if (!info) return struct_bytes(resp);  // flags 0: no such share
  const config::ShareConfig* sc = cfg_.find_share(name);
  resp.flags = share_flags(*info, sc);
  resp.create_mask = uint16_t(info->create_mask);
  resp.directory_mask = uint16_t(info->directory_mask);
  put_string(resp.share_name, name);
  forced_ids(sc, resp);
  Bytes tail;
  for (const auto& v : info->veto_files) {
    tail.insert(tail.end(), v.begin(), v.end());
    tail.push_back(0);
  }
  if (!tail.empty()) tail.pop_back();  // separators only; the NUL after the list follows
  resp.veto_list_size = uint32_t(tail.size());
  if (!tail.empty()) tail.push_back(0);
  tail.insert(tail.end(), info->path.begin(), info->path.end());
  tail.push_back(0);
  resp.payload_size = uint32_t(tail.size());
  LOG_DEBUG("ksmbd share config '%s': flags 0x%x, masks %04o/%04o, force %u/%u, veto %u bytes, tail %u bytes, path %s",
            name.c_str(), resp.flags, unsigned(resp.create_mask), unsigned(resp.directory_mask), unsigned(resp.force_uid),
            unsigned(resp.force_gid), resp.veto_list_size, resp.payload_size, info->path.c_str());
  return struct_bytes(resp, tail);
}

Bytes KsmbdShim::on_tree_connect(ByteSpan p) {
  auto req = read_struct<abi::TreeConnectRequest>(p);
  auto resp = zeroed<abi::TreeConnectResponse>();
  if (!req) return struct_bytes(resp);
  resp.handle = req->handle;
  ipc::TreeConnectRequest tc;
  tc.share = get_string(req->share);
  tc.user = get_string(req->account);
  tc.is_guest = (req->account_flags & abi::kUserGuestAccount) != 0;
  tc.client_address = get_string(req->peer_address);
  auto reply = policy_->tree_connect(tc);
  resp.status = tree_status(reply.status);
  if (reply.status != NtStatus::Success) {
    LOG_INFO("ksmbd: tree connect of '%s' to '%s' from %s refused: %s", tc.user.c_str(), tc.share.c_str(),
             tc.client_address.c_str(), nt_status_name(reply.status));
    return struct_bytes(resp);
  }
  resp.connection_flags = reply.writable ? abi::kTreeWritable : abi::kTreeReadOnly;
  if (tc.is_guest) resp.connection_flags |= abi::kTreeGuest;
  if (shares_to_update_.erase(lower(tc.share))) resp.connection_flags |= abi::kTreeUpdate;
  LOG_DEBUG("ksmbd tree connect of '%s' to '%s' from %s: flags 0x%x", tc.user.c_str(), tc.share.c_str(),
            tc.client_address.c_str(), unsigned(resp.connection_flags));
  return struct_bytes(resp);
}

// Kerberos is not offered: a LoginResponse without kUserOk fails the session.
Bytes KsmbdShim::on_spnego(ByteSpan p) {
  auto resp = zeroed<abi::SpnegoAuthenResponse>();
  if (p.size() >= sizeof(uint32_t)) std::memcpy(&resp.handle, p.data(), sizeof resp.handle);
  resp.login.handle = resp.handle;
  LOG_INFO("ksmbd: Kerberos (SPNEGO) session setup refused: not supported");
  return struct_bytes(resp);
}

}  // namespace ringsmb::kmod
