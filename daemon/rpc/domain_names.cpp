// Domain account names learnt from logons (see domain_names.hpp).
#include "rpc/domain_names.hpp"

#include <cctype>

namespace ringsmb::rpc {

namespace {

struct WellKnownRid {
  uint32_t rid;
  const char* name;
  bool is_group;
};

// MS-DTYP 2.4.2.4: the accounts every domain has, by their RIDs, in the
// names Windows and Samba give them.
constexpr WellKnownRid kDomainRids[] = {
    {500, "Administrator", false},
    {501, "Guest", false},
    {502, "krbtgt", false},
    {512, "Domain Admins", true},
    {513, "Domain Users", true},
    {514, "Domain Guests", true},
    {515, "Domain Computers", true},
    {516, "Domain Controllers", true},
    {517, "Cert Publishers", true},
    {518, "Schema Admins", true},
    {519, "Enterprise Admins", true},
    {520, "Group Policy Creator Owners", true},
};

bool same_text(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

Sid parent_of(const Sid& sid) {
  Sid parent = sid;
  if (!parent.sub.empty()) parent.sub.pop_back();
  return parent;
}

// Remembers KEY in ORDER and drops the oldest entries of MAP beyond MAX.
template <typename Map>
void remember(Map& map, std::deque<std::string>& order, const std::string& key, size_t max) {
  order.push_back(key);
  while (map.size() > max && !order.empty()) {
    map.erase(order.front());
    order.pop_front();
  }
}

}  // namespace

void DomainNames::learn_domain(const Sid& domain_sid, std::string_view netbios) {
  if (netbios.empty() || domain_sid.sub.empty()) return;
  std::lock_guard lock(mu_);
  std::string key = domain_sid.to_string();
  auto [it, added] = domains_.insert_or_assign(key, std::string(netbios));
  if (added) remember(domains_, domain_order_, key, kMaxDomains);
}

void DomainNames::learn_user(const Sid& domain_sid, std::string_view netbios, uint32_t rid, std::string_view name) {
  learn_domain(domain_sid, netbios);
  if (name.empty() || netbios.empty() || domain_sid.sub.empty() || domain_sid.sub.size() >= kMaxSubAuthorities) return;
  Sid sid = domain_sid.with_rid(rid);
  std::lock_guard lock(mu_);
  std::string key = sid.to_string();
  DomainAccountName entry{std::string(netbios), std::string(name), false, domain_sid, sid};
  auto [it, added] = accounts_.insert_or_assign(key, std::move(entry));
  if (added) remember(accounts_, account_order_, key, kMaxAccounts);
}

std::optional<DomainAccountName> DomainNames::by_sid(const Sid& sid) const {
  std::lock_guard lock(mu_);
  if (auto d = domains_.find(sid.to_string()); d != domains_.end()) return DomainAccountName{d->second, "", false, sid, sid};
  if (auto a = accounts_.find(sid.to_string()); a != accounts_.end()) return a->second;
  if (sid.sub.empty()) return std::nullopt;
  Sid domain = parent_of(sid);
  auto d = domains_.find(domain.to_string());
  if (d == domains_.end()) return std::nullopt;
  for (const auto& wk : kDomainRids)
    if (wk.rid == sid.sub.back()) return DomainAccountName{d->second, wk.name, wk.is_group, domain, sid};
  return std::nullopt;
}

std::optional<DomainAccountName> DomainNames::by_name(std::string_view domain, std::string_view name) const {
  std::lock_guard lock(mu_);
  for (const auto& [key, account] : accounts_)
    if (same_text(account.domain, domain) && same_text(account.name, name)) return account;
  for (const auto& [key, netbios] : domains_) {
    if (!same_text(netbios, domain)) continue;
    Sid domain_sid = *Sid::parse(key);
    if (name.empty()) return DomainAccountName{netbios, "", false, domain_sid, domain_sid};
    for (const auto& wk : kDomainRids)
      if (same_text(wk.name, name)) return DomainAccountName{netbios, wk.name, wk.is_group, domain_sid, domain_sid.with_rid(wk.rid)};
  }
  return std::nullopt;
}

void DomainNames::clear() {
  std::lock_guard lock(mu_);
  domains_.clear();
  domain_order_.clear();
  accounts_.clear();
  account_order_.clear();
}

DomainNames& known_domain_names() {
  static DomainNames names;
  return names;
}

}  // namespace ringsmb::rpc
