// Identity mapping for LSA and SAMR: the machine domain, Samba's Unix
// user/group domains, a few well-known SIDs, and the per-pipe handle table.
#include <grp.h>
#include <pwd.h>

#include <cctype>
#include <charconv>
#include <functional>

#include "auth/user_db.hpp"
#include "auth/ntlm_utf16.hpp"
#include "crypto/primitives.hpp"
#include "rpc/interface.hpp"

namespace ringsmb::rpc {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(uint8_t(a[i])) != std::tolower(uint8_t(b[i]))) return false;
  }
  return true;
}

namespace {

// getpw*_r with a buffer big enough for any sane passwd entry.
std::optional<std::pair<std::string, uint32_t>> passwd_entry(const char* name, const uid_t* uid) {
  struct passwd pw {};
  struct passwd* res = nullptr;
  char buf[4096];
  int rc = name ? getpwnam_r(name, &pw, buf, sizeof buf, &res) : getpwuid_r(*uid, &pw, buf, sizeof buf, &res);
  if (rc != 0 || res == nullptr) return std::nullopt;
  return std::make_pair(std::string(pw.pw_name), uint32_t(pw.pw_uid));
}

std::optional<std::pair<std::string, uint32_t>> group_entry(const char* name, const gid_t* gid) {
  struct group gr {};
  struct group* res = nullptr;
  char buf[16384];
  int rc = name ? getgrnam_r(name, &gr, buf, sizeof buf, &res) : getgrgid_r(*gid, &gr, buf, sizeof buf, &res);
  if (rc != 0 || res == nullptr) return std::nullopt;
  return std::make_pair(std::string(gr.gr_name), uint32_t(gr.gr_gid));
}

class SystemAccounts final : public AccountSource {
 public:
  explicit SystemAccounts(const config::Config& cfg) {
    // A broken database only costs name lookups; the pipes keep working.
    if (auto db = auth::UserDb::load(cfg.global.users_db)) db_ = std::move(*db);
  }
  std::optional<Account> user_by_name(std::string_view name) const override {
    if (const auto* rec = db_.find(name)) {
      if (auto pw = passwd_entry(rec->unix_user.c_str(), nullptr)) return Account{rec->name, pw->second, true};
      return std::nullopt;
    }
    if (auto pw = passwd_entry(std::string(name).c_str(), nullptr)) return Account{pw->first, pw->second, false};
    return std::nullopt;
  }
  std::optional<Account> user_by_uid(uint32_t uid) const override {
    auto pw = passwd_entry(nullptr, &uid);
    if (!pw) return std::nullopt;
    for (const auto& rec : db_.users()) {
      if (rec.unix_user == pw->first) return Account{rec.name, uid, true};
    }
    return Account{pw->first, uid, false};
  }
  std::optional<uint32_t> group_by_name(std::string_view name) const override {
    if (auto gr = group_entry(std::string(name).c_str(), nullptr)) return gr->second;
    return std::nullopt;
  }
  std::optional<std::string> group_by_gid(uint32_t gid) const override {
    if (auto gr = group_entry(nullptr, &gid)) return gr->first;
    return std::nullopt;
  }
  std::vector<Account> smb_users() const override {
    std::vector<Account> out;
    for (const auto& rec : db_.users()) {
      if (auto pw = passwd_entry(rec.unix_user.c_str(), nullptr)) out.push_back(Account{rec.name, pw->second, true});
    }
    return out;
  }

 private:
  auth::UserDb db_;
};

struct WellKnown {
  const char* sid;
  const char* domain;
  const char* name;
  SidType type;
};

// The SIDs clients commonly show in security dialogs. Domain entries
// (empty name) let "BUILTIN" or "NT AUTHORITY" themselves resolve.
constexpr WellKnown kWellKnown[] = {
    {"S-1-1-0", "", "Everyone", SidType::WellKnownGroup},
    {"S-1-3-0", "", "CREATOR OWNER", SidType::WellKnownGroup},
    {"S-1-3-1", "", "CREATOR GROUP", SidType::WellKnownGroup},
    {"S-1-5", "NT AUTHORITY", "", SidType::Domain},
    {"S-1-5-7", "NT AUTHORITY", "ANONYMOUS LOGON", SidType::WellKnownGroup},
    {"S-1-5-11", "NT AUTHORITY", "Authenticated Users", SidType::WellKnownGroup},
    {"S-1-5-18", "NT AUTHORITY", "SYSTEM", SidType::WellKnownGroup},
    {"S-1-5-32", "BUILTIN", "", SidType::Domain},
    {"S-1-5-32-544", "BUILTIN", "Administrators", SidType::Alias},
    {"S-1-5-32-545", "BUILTIN", "Users", SidType::Alias},
    {"S-1-5-32-546", "BUILTIN", "Guests", SidType::Alias},
    {"S-1-22-1", "Unix User", "", SidType::Domain},
    {"S-1-22-2", "Unix Group", "", SidType::Domain},
};

Translation from_well_known(const WellKnown& wk) {
  Translation t;
  t.type = wk.type;
  t.name = wk.name;
  t.domain = wk.domain;
  t.sid = *Sid::parse(wk.sid);
  // A domain is its own domain; a name without a domain (Everyone) is
  // listed under its own SID as Windows does; others under the parent.
  t.domain_sid = t.sid;
  if (wk.type != SidType::Domain && *wk.domain) t.domain_sid.sub.pop_back();
  return t;
}

Translation account(SidType type, std::string name, std::string domain, const Sid& domain_sid, uint32_t rid) {
  return Translation{type, std::move(name), std::move(domain), domain_sid, domain_sid.with_rid(rid)};
}

bool is_child_of(const Sid& sid, const Sid& domain) {
  if (sid.sub.size() != domain.sub.size() + 1 || sid.authority != domain.authority) return false;
  return std::equal(domain.sub.begin(), domain.sub.end(), sid.sub.begin());
}

Translation from_domain_account(const DomainAccountName& a) {
  SidType type = a.name.empty() ? SidType::Domain
                 : a.is_alias   ? SidType::Alias
                 : a.is_group   ? SidType::Group
                                : SidType::User;
  return Translation{type, a.name, a.domain, a.domain_sid, a.sid};
}

std::optional<Translation> lookup_machine_rid(const Identity& id, uint32_t rid) {
  if (rid == kRidNoneGroup) return account(SidType::Group, "None", id.netbios, id.machine_sid, rid);
  if (rid < kRidBase || !id.accounts) return std::nullopt;
  auto acct = id.accounts->user_by_uid(rid - kRidBase);
  if (!acct) return std::nullopt;
  return account(SidType::User, acct->name, id.netbios, id.machine_sid, rid);
}

}  // namespace

std::shared_ptr<const AccountSource> make_system_accounts(const config::Config& config) {
  return std::make_shared<SystemAccounts>(config);
}

Sid derive_machine_sid(std::string_view netbios) {
  std::string upper = auth::detail::to_upper_utf8(netbios);
  auto mac = crypto::hmac_sha256(as_bytes("ringsmb machine sid"), as_bytes(upper));
  Sid sid{1, 5, {21, load_le32(&mac[0]), load_le32(&mac[4]), load_le32(&mac[8])}};
  return sid;
}

Sid unix_users_sid() { return Sid{1, 22, {1}}; }
Sid unix_groups_sid() { return Sid{1, 22, {2}}; }
Sid builtin_sid() { return Sid{1, 5, {32}}; }

std::optional<uint32_t> user_rid(uint32_t uid) {
  if (uid > 0xFFFFFFFFu - kRidBase) return std::nullopt;
  return kRidBase + uid;
}

Identity make_identity(const config::Config& config, const AccountSource* accounts) {
  Identity id;
  id.netbios = auth::detail::to_upper_utf8(config.global.netbios_name);
  id.workgroup = auth::detail::to_upper_utf8(config.global.workgroup);
  id.machine_sid = derive_machine_sid(id.netbios);
  id.accounts = accounts;
  id.domain_names = &known_domain_names();
  id.directory = domain_directory();
  return id;
}

std::optional<Translation> lookup_sid(const Identity& id, const Sid& sid) {
  if (sid == id.machine_sid) return Translation{SidType::Domain, "", id.netbios, sid, sid};
  if (is_child_of(sid, id.machine_sid)) return lookup_machine_rid(id, sid.sub.back());
  if (is_child_of(sid, unix_users_sid()) && id.accounts) {
    auto acct = id.accounts->user_by_uid(sid.sub.back());
    if (acct) return account(SidType::User, acct->name, "Unix User", unix_users_sid(), sid.sub.back());
    return std::nullopt;
  }
  if (is_child_of(sid, unix_groups_sid()) && id.accounts) {
    auto name = id.accounts->group_by_gid(sid.sub.back());
    if (name) return account(SidType::Group, *name, "Unix Group", unix_groups_sid(), sid.sub.back());
    return std::nullopt;
  }
  for (const auto& wk : kWellKnown) {
    if (Sid::parse(wk.sid) == sid) return from_well_known(wk);
  }
  if (id.domain_names) {
    if (auto known = id.domain_names->by_sid(sid)) return from_domain_account(*known);
  }
  return std::nullopt;
}

namespace {

std::optional<Translation> lookup_in_domain(const Identity& id, std::string_view domain, std::string_view name) {
  bool machine = domain.empty() || iequals(domain, id.netbios);
  if (machine && iequals(name, "None")) return account(SidType::Group, "None", id.netbios, id.machine_sid, kRidNoneGroup);
  if (!id.accounts) return std::nullopt;
  if (machine) {
    auto acct = id.accounts->user_by_name(name);
    auto rid = acct ? user_rid(acct->uid) : std::nullopt;
    if (rid) return account(SidType::User, acct->name, id.netbios, id.machine_sid, *rid);
  } else if (iequals(domain, "Unix User")) {
    auto acct = id.accounts->user_by_name(name);
    if (acct) return account(SidType::User, acct->name, "Unix User", unix_users_sid(), acct->uid);
  } else if (iequals(domain, "Unix Group")) {
    auto gid = id.accounts->group_by_name(name);
    if (gid) return account(SidType::Group, std::string(name), "Unix Group", unix_groups_sid(), *gid);
  }
  return std::nullopt;
}

// An AD account or domain a logon has named ("EXAMPLE\alice", "EXAMPLE").
std::optional<Translation> lookup_domain_account(const Identity& id, std::string_view domain, std::string_view name) {
  if (!id.domain_names) return std::nullopt;
  auto known = domain.empty() ? id.domain_names->by_name(name, "") : id.domain_names->by_name(domain, name);
  if (!known) return std::nullopt;
  return from_domain_account(*known);
}

}  // namespace

std::optional<Translation> lookup_name(const Identity& id, std::string_view full) {
  if (full.empty()) return std::nullopt;
  size_t slash = full.find('\\');
  std::string_view domain = slash == std::string_view::npos ? std::string_view() : full.substr(0, slash);
  std::string_view name = slash == std::string_view::npos ? full : full.substr(slash + 1);
  if (slash == std::string_view::npos && iequals(name, id.netbios)) {
    return Translation{SidType::Domain, "", id.netbios, id.machine_sid, id.machine_sid};
  }
  for (const auto& wk : kWellKnown) {
    bool domain_ok = domain.empty() || iequals(domain, wk.domain);
    bool is_domain_name = wk.type == SidType::Domain && domain.empty() && iequals(name, wk.domain);
    if ((domain_ok && *wk.name && iequals(name, wk.name)) || is_domain_name) return from_well_known(wk);
  }
  if (auto t = lookup_in_domain(id, domain, name)) return t;
  return lookup_domain_account(id, domain, name);
}

namespace {

// "DOMAIN\name" split; no domain for a bare name.
DirectoryNames::QualifiedName split_name(std::string_view full) {
  size_t slash = full.find('\\');
  if (slash == std::string_view::npos) return {"", std::string(full)};
  return {std::string(full.substr(0, slash)), std::string(full.substr(slash + 1))};
}

// Each of KEYS as LOCAL translates it; those it leaves unmapped and that
// QUERY makes a directory query of are asked in one call of ASK (none
// without a directory).
template <class Key, class Query>
std::vector<std::optional<Translation>> translate_all(
    const std::vector<Key>& keys, const std::function<std::optional<Translation>(const Key&)>& local,
    const std::function<std::optional<Query>(const Key&)>& query,
    const std::function<std::vector<std::optional<DomainAccountName>>(const std::vector<Query>&)>& ask) {
  std::vector<std::optional<Translation>> out;
  std::vector<Query> asked;
  std::vector<size_t> asked_at;
  for (const auto& key : keys) {
    out.push_back(local(key));
    if (out.back() || !ask) continue;
    if (auto q = query(key)) {
      asked.push_back(std::move(*q));
      asked_at.push_back(out.size() - 1);
    }
  }
  if (asked.empty()) return out;
  auto found = ask(asked);
  for (size_t i = 0; i < found.size() && i < asked_at.size(); ++i)
    if (found[i]) out[asked_at[i]] = from_domain_account(*found[i]);
  return out;
}

}  // namespace

std::vector<std::optional<Translation>> translate_sids(const Identity& id, const std::vector<Sid>& sids) {
  auto null_sid = [](const Sid& sid) { return sid.sub.empty() && sid.authority == 0; };  // never maps
  std::function<std::vector<std::optional<DomainAccountName>>(const std::vector<Sid>&)> ask;
  if (id.directory) ask = [&](const std::vector<Sid>& q) { return id.directory->by_sids(q); };
  return translate_all<Sid, Sid>(
      sids, [&](const Sid& sid) { return null_sid(sid) ? std::nullopt : lookup_sid(id, sid); },
      [&](const Sid& sid) { return null_sid(sid) ? std::nullopt : std::optional<Sid>(sid); }, ask);
}

std::vector<std::optional<Translation>> translate_names(const Identity& id, const std::vector<std::string>& names) {
  using Query = DirectoryNames::QualifiedName;
  std::function<std::vector<std::optional<DomainAccountName>>(const std::vector<Query>&)> ask;
  if (id.directory) ask = [&](const std::vector<Query>& q) { return id.directory->by_names(q); };
  return translate_all<std::string, Query>(
      names, [&](const std::string& name) { return lookup_name(id, name); },
      [](const std::string& name) { return std::optional<Query>(split_name(name)); }, ask);
}

// ---- handles ----

std::optional<PolicyHandle> HandleTable::open(HandleEntry entry) {
  if (table_.size() >= kMaxHandles) return std::nullopt;
  PolicyHandle h;
  // Attributes stay 0; the GUID part is random so handles are not guessable
  // across pipes, with a counter so they are unique within one.
  crypto::random_bytes(std::span<uint8_t>(h.bytes.data() + 4, 8));
  store_le64(h.bytes.data() + 12, ++counter_);
  table_.emplace(h.bytes, std::move(entry));
  return h;
}

const HandleEntry* HandleTable::find(const PolicyHandle& h, HandleKind kind) const {
  auto it = table_.find(h.bytes);
  if (it == table_.end()) unknown_ = true;
  if (it == table_.end() || it->second.kind != kind) return nullptr;
  return &it->second;
}

bool HandleTable::close(const PolicyHandle& h) {
  bool closed = table_.erase(h.bytes) > 0;
  unknown_ = unknown_ || !closed;
  return closed;
}

CallResult fault_result(uint32_t status) { return CallResult{status, {}}; }

CallResult close_reply(CallContext& ctx, const PolicyHandle& h) {
  bool closed = ctx.handles.close(h);
  CallResult res;
  NdrWriter w(res.stub);
  w.handle(PolicyHandle{});
  w.u32(uint32_t(closed ? NtStatus::Success : NtStatus::InvalidHandle));
  return res;
}

}  // namespace ringsmb::rpc
