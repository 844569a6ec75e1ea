// The names of Active Directory accounts this server has met, for LSA's
// SID-to-name lookups (LsarLookupSids: smbcacls, Explorer's security tab).
// What it knows comes from the PACs of domain users' Kerberos logons
// (control/), which name the user (SID, account name) and its domain (SID,
// NetBIOS name). A domain's well-known accounts (Domain Users, Domain
// Admins, ...: MS-DTYP 2.4.2.4) are named once the domain is known. Group
// SIDs of a PAC carry no names: the domain's directory names them
// (directory_names.hpp).
//
// One registry per process (known_domain_names()), filled by logons and
// read by every pipe; thread-safe; bounded (the oldest entries go first).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "rpc/ndr.hpp"

namespace ringsmb::rpc {

struct DomainAccountName {
  std::string domain;  // NetBIOS name of the domain, "EXAMPLE"
  std::string name;    // account name, "alice"; "" for the domain itself
  bool is_group = false;
  Sid domain_sid;
  Sid sid;
  bool is_alias = false;  // a domain local group (SidTypeAlias); is_group too
};

class DomainNames {
 public:
  static constexpr size_t kMaxAccounts = 4096;
  static constexpr size_t kMaxDomains = 64;

  void learn_domain(const Sid& domain_sid, std::string_view netbios);
  // A user of a known or unknown domain (its domain is learnt with it).
  void learn_user(const Sid& domain_sid, std::string_view netbios, uint32_t rid, std::string_view name);
  std::optional<DomainAccountName> by_sid(const Sid& sid) const;
  // "DOMAIN\name" split; the domain's NetBIOS name case-insensitively.
  std::optional<DomainAccountName> by_name(std::string_view domain, std::string_view name) const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> domains_;   // domain SID text -> NetBIOS name
  std::deque<std::string> domain_order_;         // oldest first, for the bound
  std::map<std::string, DomainAccountName> accounts_;  // SID text -> account
  std::deque<std::string> account_order_;
};

// The process's registry.
DomainNames& known_domain_names();

}  // namespace ringsmb::rpc
