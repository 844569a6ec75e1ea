// The joined domain's directory (see domain_directory.hpp).
#include "control/domain_directory.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "common/log.hpp"
#include "kerberos/ldap_directory.hpp"
#include "rpc/directory_names.hpp"
#include "rpc/domain_names.hpp"

namespace ringsmb::control {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

rpc::Sid to_rpc(const kerberos::PacSid& s) { return rpc::Sid{1, s.authority, s.sub}; }

// The directory's entries of the domain itself as LSA names them
// ("DOMAIN\name"); SIDs of other domains are left out.
rpc::DirectoryNames::Backend ldap_backend(std::shared_ptr<kerberos::LdapDirectory> ldap, std::string domain) {
  return [ldap = std::move(ldap), domain = std::move(domain)](const std::vector<rpc::Sid>& sids,
                                                             const std::vector<std::string>& names)
             -> std::expected<std::vector<rpc::DomainAccountName>, std::string> {
    std::vector<kerberos::PacSid> asked;
    for (const auto& s : sids) asked.push_back(kerberos::PacSid{s.authority, s.sub});
    auto found = ldap->find(asked, names);
    if (!found) return std::unexpected(found.error());
    rpc::Sid domain_sid = to_rpc(ldap->domain_sid());
    rpc::known_domain_names().learn_domain(domain_sid, domain);  // the domain and its well-known RIDs
    std::vector<rpc::DomainAccountName> out;
    for (const auto& e : *found) {
      rpc::Sid sid = to_rpc(e.sid);
      bool in_domain = sid.authority == domain_sid.authority && sid.sub.size() == domain_sid.sub.size() + 1 &&
                       std::equal(domain_sid.sub.begin(), domain_sid.sub.end(), sid.sub.begin());
      if (!in_domain) continue;
      bool group = e.kind != kerberos::DirectoryKind::User;
      out.push_back(rpc::DomainAccountName{domain, e.account_name, group, domain_sid, sid,
                                           e.kind == kerberos::DirectoryKind::Alias});
    }
    return out;
  };
}

}  // namespace

void configure_domain_directory(const config::Config& cfg) {
  static std::mutex mu;
  static std::string running;  // the settings of the directory set up last; "": none
  const config::GlobalConfig& g = cfg.global;
  auto keytab = config::kerberos_keytab(g);
  bool member = g.security == config::SecurityMode::Ads && !g.realm.empty() && keytab.has_value();
  std::string settings = member ? g.realm + "\n" + *keytab + "\n" + g.workgroup : "";
  std::lock_guard lock(mu);
  if (settings == running) return;
  running = settings;
  if (!member) {
    rpc::set_domain_directory(nullptr);
    return;
  }
  auto ldap = std::make_shared<kerberos::LdapDirectory>(kerberos::DirectorySettings{*keytab, g.realm});
  rpc::DirectoryNames::Options options;
  options.domain = g.workgroup;
  options.dns_domain = lower(g.realm);
  rpc::set_domain_directory(std::make_shared<rpc::DirectoryNames>(ldap_backend(std::move(ldap), g.workgroup), options));
  LOG_INFO("domain directory: SIDs of %s are named by its domain controllers (LDAP, as the computer account)",
           g.realm.c_str());
}

}  // namespace ringsmb::control
