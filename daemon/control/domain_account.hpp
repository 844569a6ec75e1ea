// A domain account from a ticket's PAC, as the NAS knows it: which Unix
// account (looked up through NSS, where sssd or winbind answer for the
// domain) and which Windows SIDs the session carries.
//
// The NSS names tried, first found wins (docs/active-directory.md):
//   1. "DOMAIN\user"   winbind's names (winbind separator "\", no default domain)
//   2. "user@realm"    sssd's names with use_fully_qualified_names (realm in
//                      lower case, as `realm join` names the sssd domain;
//                      sssd matches AD names case-insensitively)
//   3. "user"          sssd without fully qualified names, winbind with
//                      "winbind use default domain", or a local account
// DOMAIN is the PAC's NetBIOS domain (LogonDomainName), user its account
// name (EffectiveName), realm the client principal's.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "kerberos/pac.hpp"

namespace ringsmb::control {

std::vector<std::string> domain_account_names(const kerberos::LogonInfo& info, std::string_view realm);

// The realm of "user@REALM" ("" when none).
std::string_view principal_realm(std::string_view principal);

// Tells LSA's lookups (rpc/domain_names.hpp) the names the PAC gives: the
// user's SID is DOMAIN\user, the logon domain's SID is DOMAIN.
void remember_domain_names(const kerberos::LogonInfo& info);

// The session's SIDs as text, the user's first, then its groups' (each
// once); refused when their text would not fit the contract (kMaxSidsText).
std::expected<std::vector<std::string>, std::string> session_sids(const kerberos::LogonInfo& info);

}  // namespace ringsmb::control
