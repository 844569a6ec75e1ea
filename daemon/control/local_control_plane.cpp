// The in-process control plane: NTLMv2 verification against the user
// database and share policy from the config. The user database is re-read
// when its file changes, so `ringsmbctl user add` takes effect for new
// logins without a restart. IPC$ pipes run in a PipeTable.
#include "control/local_control_plane.hpp"

#include <grp.h>
#include <sys/stat.h>

#include <time.h>

#include <algorithm>
#include <mutex>

#include "auth/ntlmssp.hpp"
#include "auth/user_db.hpp"
#include "control/domain_account.hpp"
#include "control/home_shares.hpp"
#include "control/login_throttle.hpp"
#include "control/pipe_table.hpp"
#include "common/log.hpp"
#include "common/log_event.hpp"
#include "control/share_access.hpp"
#include "kerberos/gss_acceptor.hpp"

namespace ringsmb::control {

using namespace ipc;  // the contract types (ipc/control_plane.hpp)

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return tolower(x) == tolower(y); });
}

class LocalControlPlane final : public ControlPlane {
 public:
  explicit LocalControlPlane(const config::Config& cfg)
      : cfg_(cfg), pipe_config_(std::make_shared<const config::Config>(cfg)), throttle_(control::shared_login_throttle()) {
    const auto& g = cfg.global;
    throttle_->configure({g.login_failure_delay_ms, g.login_failure_max_delay_ms, g.login_failure_window_s,
                          g.account_lockout_threshold, g.account_lockout_duration_s});
  }

  LoginReply login(const LoginRequest& req) override;
  KerberosLoginReply kerberos_login(const KerberosLoginRequest& req) override;
  TreeConnectReply tree_connect(const TreeConnectRequest& req) override;
  void tree_disconnect(const std::string&, const std::string&) override {}
  void logout(const std::string&) override {}
  std::string workgroup() const override { return cfg_.global.workgroup; }
  std::string netbios_name() const override { return cfg_.global.netbios_name; }
  PipeReply pipe_open(const PipeOpenRequest& req) override;
  std::string home_share_of(const std::string& user, bool is_guest) override;
  PipeReply pipe_write(uint32_t h, ByteSpan data) override { return pipes_.write(h, data); }
  PipeReply pipe_read(uint32_t h, uint32_t max) override { return pipes_.read(h, max); }
  PipeReply pipe_transceive(uint32_t h, ByteSpan in, uint32_t max) override { return pipes_.transceive(h, in, max); }
  void pipe_close(uint32_t h) override { pipes_.close(h); }

 private:
  void refresh_user_db();
  LoginReply guest_login() const;
  LoginReply verify(const LoginRequest& req, const auth::NtlmAuthenticate& msg);
  std::expected<UnixUser, std::string> kerberos_identity(const std::string& local_name);
  std::expected<std::string, std::string> domain_account(const kerberos::Accepted& accepted);
  std::optional<UnixUser> subject_identity(const TreeConnectRequest& req) const;
  Caller caller_of(const std::string& user, bool is_guest) const;
  AccountLookup account_lookup() const;

  config::Config cfg_;
  std::mutex mu_;
  auth::UserDb db_;
  struct timespec db_mtime_{};
  bool db_loaded_ = false;
  std::shared_ptr<const config::Config> pipe_config_;
  PipeTable pipes_;
  std::shared_ptr<LoginThrottle> throttle_;
};

int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void LocalControlPlane::refresh_user_db() {
  struct stat st{};
  if (stat(cfg_.global.users_db.c_str(), &st) != 0) {
    if (!db_loaded_) LOG_WARN("user database %s: %m (no users yet)", cfg_.global.users_db.c_str());
    db_ = auth::UserDb();
    db_loaded_ = true;
    return;
  }
  if (db_loaded_ && st.st_mtim.tv_sec == db_mtime_.tv_sec && st.st_mtim.tv_nsec == db_mtime_.tv_nsec) return;
  auto loaded = auth::UserDb::load(cfg_.global.users_db);
  if (!loaded) {
    LOG_ERROR("%s (keeping the previous user list)", loaded.error().c_str());
    return;
  }
  db_ = std::move(*loaded);
  db_mtime_ = st.st_mtim;
  db_loaded_ = true;
}

LoginReply LocalControlPlane::guest_login() const {
  LoginReply r;
  auto id = auth::lookup_unix_identity(cfg_.global.guest_account);
  if (!id) {
    LOG_WARN("guest account '%s' does not exist", cfg_.global.guest_account.c_str());
    return r;
  }
  r.status = NtStatus::Success;
  r.is_guest = true;
  r.user = cfg_.global.guest_account;
  r.unix_user = {id->uid, id->gid, id->groups};
  return r;
}

LoginReply LocalControlPlane::login(const LoginRequest& req) {
  LoginReply reply;
  auto auth_msg = auth::parse_ntlm_authenticate(req.authenticate_msg);
  if (!auth_msg) {
    reply.status = NtStatus::InvalidParameter;
    return reply;
  }
  if (auth_msg->user.empty() && auth_msg->nt_response.size() <= 1) {
    // Anonymous (NULL session): allowed; disk shares still require guest ok.
    reply.status = NtStatus::Success;
    reply.is_anonymous = true;
    auto id = auth::lookup_unix_identity(cfg_.global.guest_account);
    if (id) reply.unix_user = {id->uid, id->gid, id->groups};
    else reply.unix_user = {65534, 65534, {}};
    return reply;
  }
  // The throttle decides how long the answer waits and whether the account
  // is locked; the password check itself runs at once either way.
  int64_t now = monotonic_ms();
  auto pre = throttle_->before(req.client_address, auth_msg->user, now);
  if (pre.locked_out) {
    reply.status = NtStatus::AccountLockedOut;
    reply.delay_ms = std::max(pre.delay_ms, throttle_->failed(req.client_address, auth_msg->user, now));
    return reply;
  }
  reply = verify(req, *auth_msg);
  if (reply.status == NtStatus::LogonFailure) {
    reply.delay_ms = std::max(pre.delay_ms, throttle_->failed(req.client_address, auth_msg->user, now));
  } else {
    if (reply.status == NtStatus::Success && !reply.is_guest) throttle_->succeeded(auth_msg->user);
    reply.delay_ms = pre.delay_ms;
  }
  return reply;
}

LoginReply LocalControlPlane::verify(const LoginRequest& req, const auth::NtlmAuthenticate& msg) {
  LoginReply reply;
  std::lock_guard lock(mu_);
  refresh_user_db();
  const auth::UserRecord* rec = db_.find(msg.user);
  if (!rec) {
    if (cfg_.global.map_to_guest != config::MapToGuest::Never) return guest_login();
    reply.status = NtStatus::LogonFailure;
    return reply;
  }
  auto verified = auth::ntlmv2_verify(
      {req.negotiate_msg, req.challenge_msg, req.authenticate_msg, req.server_challenge}, msg, rec->nt_hash);
  if (!verified) {
    // A malformed NTLMv2 response is refused as such, never taken as a bad
    // password (no guest mapping, no throttle charge: it guessed nothing).
    if (verified.error() == NtStatus::InvalidParameter) {
      reply.status = NtStatus::InvalidParameter;
      return reply;
    }
    if (cfg_.global.map_to_guest == config::MapToGuest::BadPassword) return guest_login();
    reply.status = NtStatus::LogonFailure;
    return reply;
  }
  // As Samba (sam_account_ok after the password check) and Windows: a
  // disabled account is told so only to whoever knows its password.
  if (rec->disabled) {
    std::string client = log_printable(req.client_address);
    log_event(LogLevel::Info, "login_disabled_account", {{"client", client}, {"user", rec->name}},
              "%s: login of '%s' refused: the account is disabled (ringsmbctl user enable)", client.c_str(),
              rec->name.c_str());
    reply.status = NtStatus::AccountDisabled;
    return reply;
  }
  auto id = auth::lookup_unix_identity(rec->unix_user);
  if (!id) {
    LOG_ERROR("user '%s' maps to unix user '%s', which does not exist", rec->name.c_str(), rec->unix_user.c_str());
    reply.status = NtStatus::LogonFailure;
    return reply;
  }
  reply.status = NtStatus::Success;
  reply.user = rec->name;
  reply.session_key = verified->session_key;
  reply.unix_user = {id->uid, id->gid, id->groups};
  return reply;
}

// The replay cache sits in the state directory (ringsmb's own, not
// /var/tmp's shared one), where a restart of ringsmb-ctld finds it again.
kerberos::AcceptorSettings acceptor_settings(const config::GlobalConfig& g, const std::string& keytab) {
  return {keytab, g.realm, "file2:" + g.state_directory + "/krb5.rcache2"};
}

KerberosLoginReply LocalControlPlane::kerberos_login(const KerberosLoginRequest& req) {
  KerberosLoginReply reply;
  const char* from = req.client_address.c_str();
  LogClientScope about(req.client_address);  // ringsmb-ctld's lines are about the client too
  auto keytab = config::kerberos_keytab(cfg_.global);
  if (!keytab) {
    LOG_WARN("%s: Kerberos login refused: Kerberos is not configured (realm, kerberos method)", from);
    return reply;
  }
  auto accepted = kerberos::accept_ap_req(acceptor_settings(cfg_.global, *keytab), req.mech_token);
  if (!accepted) {
    LOG_WARN("%s: Kerberos login refused: %s", from, accepted.error().reason.c_str());
    return reply;
  }
  const char* principal = accepted->client_principal.c_str();
  std::expected<std::string, std::string> account =
      accepted->logon_info ? domain_account(*accepted) : std::expected<std::string, std::string>(accepted->local_name);
  if (account) {
    auto id = kerberos_identity(*account);
    if (id) reply.login.unix_user = *id;
    else account = std::unexpected(id.error());
  }
  if (account && accepted->logon_info) {
    auto sids = session_sids(*accepted->logon_info);
    if (sids) reply.login.sids = std::move(*sids);
    else account = std::unexpected(sids.error());
  }
  if (!account) {
    LOG_WARN("%s: Kerberos login of %s refused: %s", from, principal, account.error().c_str());
    return reply;
  }
  log_client_about(*account, {});
  if (accepted->logon_info) {
    remember_domain_names(*accepted->logon_info);  // for LSA's SID lookups
    LOG_INFO("%s: Kerberos login of %s (service %s, %s, %zu group SIDs) as Unix user '%s'", from, principal,
             accepted->service_principal.c_str(), reply.login.sids[0].c_str(), reply.login.sids.size() - 1,
             account->c_str());
  } else {
    LOG_INFO("%s: Kerberos login of %s (service %s) as Unix user '%s'", from, principal,
             accepted->service_principal.c_str(), account->c_str());
  }
  reply.login.status = NtStatus::Success;
  reply.login.user = *account;
  reply.login.session_key = accepted->session_key;
  reply.response_token = std::move(accepted->response_token);
  return reply;
}

// A domain account (its ticket has a PAC with logon info) is the first
// Unix account NSS knows by one of its names (domain_account.hpp). Root is
// never a domain account's: a domain user named "root" is refused.
std::expected<std::string, std::string> LocalControlPlane::domain_account(const kerberos::Accepted& accepted) {
  const kerberos::LogonInfo& info = *accepted.logon_info;
  auto names = domain_account_names(info, principal_realm(accepted.client_principal));
  for (const std::string& name : names) {
    auto id = auth::lookup_unix_identity(name);
    if (!id) continue;
    if (id->uid == 0) return std::unexpected("domain account '" + name + "' maps to uid 0, which is never a domain user's");
    return name;
  }
  std::string tried;
  for (const std::string& name : names) tried += (tried.empty() ? "'" : ", '") + name + "'";
  return std::unexpected("domain account " + info.domain_name + "\\" + info.account_name + " (" +
                         info.user_sid().to_string() + ") has no Unix account: NSS knows none of " + tried);
}

// A principal's account is the Unix account auth_to_local names. A users
// db entry of that name that maps to another Unix user would make share
// checks by name ("valid users", "@group") see a different identity than
// the files do, so such a login is refused rather than guessed at.
std::expected<UnixUser, std::string> LocalControlPlane::kerberos_identity(const std::string& local_name) {
  auto id = auth::lookup_unix_identity(local_name);
  if (!id) return std::unexpected("no Unix account '" + local_name + "'");
  std::lock_guard lock(mu_);
  refresh_user_db();
  const auth::UserRecord* rec = db_.find(local_name);
  if (rec && rec->unix_user != local_name)
    return std::unexpected("users db entry '" + rec->name + "' maps to Unix user '" + rec->unix_user +
                           "', not '" + local_name + "'");
  return UnixUser{id->uid, id->gid, id->groups};
}

// The Unix identity "@group" entries are checked against: the one the
// login maps this account to.
std::optional<UnixUser> LocalControlPlane::subject_identity(const TreeConnectRequest& req) const {
  if (req.user.empty()) return std::nullopt;
  const auth::UserRecord* rec = req.is_guest ? nullptr : db_.find(req.user);
  auto id = auth::lookup_unix_identity(rec ? rec->unix_user : req.user);
  if (!id) return std::nullopt;
  return UnixUser{id->uid, id->gid, id->groups};
}

// The caller's Unix user, for %H and for knowing their own home (mu_ held).
Caller LocalControlPlane::caller_of(const std::string& user, bool is_guest) const {
  Caller c{user, "", is_guest || user.empty()};
  if (c.is_guest) return c;
  const auth::UserRecord* rec = db_.find(user);
  c.unix_user = rec ? rec->unix_user : user;
  return c;
}

// Valid while mu_ is held: it reads db_.
AccountLookup LocalControlPlane::account_lookup() const {
  return {[this](const std::string& account) -> std::optional<std::string> {
            const auth::UserRecord* rec = db_.find(account);
            if (!rec) return std::nullopt;
            return rec->unix_user;
          },
          passwd_home_directory};
}

TreeConnectReply LocalControlPlane::tree_connect(const TreeConnectRequest& req) {
  TreeConnectReply reply;
  if (iequals(req.share, "IPC$")) {
    reply.share = *share_info(cfg_, req.share);
    reply.status = NtStatus::Success;
    return reply;
  }
  ShareSubject subject{req.user, req.is_guest || req.user.empty(), req.client_address, std::nullopt, {}};
  if (!subject.is_guest) subject.sids = req.sids;
  std::optional<ResolvedShare> resolved;
  {
    std::lock_guard lock(mu_);
    refresh_user_db();
    subject.unix_user = subject_identity(req);
    resolved = resolve_share(cfg_, req.share, caller_of(req.user, req.is_guest), account_lookup());
  }
  if (!resolved) {
    reply.status = NtStatus::BadNetworkName;
    return reply;
  }
  const config::ShareConfig& share = resolved->share;
  reply.share = share_info(cfg_, share);
  ShareAccess access = decide_share_access(share, subject);
  reply.status = access.status;
  // Someone else's home that valid users keep the caller out of does not exist for them.
  if (resolved->is_foreign_home && reply.status != NtStatus::Success) reply.status = NtStatus::BadNetworkName;
  if (reply.status == NtStatus::Success) reply.status = resolve_forced_identity(share, subject, reply.share);
  reply.writable = access.writable;
  return reply;
}

std::string LocalControlPlane::home_share_of(const std::string& user, bool is_guest) {
  std::lock_guard lock(mu_);
  refresh_user_db();
  return own_home_share(cfg_, caller_of(user, is_guest), account_lookup());
}

PipeReply LocalControlPlane::pipe_open(const PipeOpenRequest& req) {
  return pipes_.open(req, pipe_config_, home_share_of(req.user, req.is_guest));
}

}  // namespace

ipc::ShareInfo share_info(const config::Config& cfg, const config::ShareConfig& share) {
  ShareInfo info;
  info.name = share.name;
  info.path = share.path;
  info.comment = share.comment;
  info.read_only = share.read_only;
  info.browseable = share.browseable;
  info.case_sensitive = share.case_sensitive;
  info.encryption = share.smb3_encryption.value_or(cfg.global.smb3_encryption);
  fill_share_options(share, info);
  return info;
}

std::optional<ShareInfo> share_info(const config::Config& cfg, std::string_view name) {
  ShareInfo info;
  if (iequals(name, "IPC$")) {
    info.name = "IPC$";
    info.is_ipc = true;
    info.comment = "IPC Service";
    return info;
  }
  const config::ShareConfig* share = cfg.find_share(name);
  if (!share) return std::nullopt;
  return share_info(cfg, *share);
}

std::unique_ptr<ControlPlane> make_local_control_plane(const config::Config& cfg) {
  return std::make_unique<LocalControlPlane>(cfg);
}

}  // namespace ringsmb::control
