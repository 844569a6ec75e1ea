// The joined domain's directory, asked over LDAP for the names of SIDs and
// the SIDs of names: what a PAC leaves out (it lists the user's groups by
// SID only) and what LSA's lookups (rpcclient lookupsids, smbcacls,
// Explorer's security tab) need to show a domain group by its name.
//
// It binds as the machine account with the machine's own keys (the keytab
// `ringsmbctl domain join` or `realm join` wrote) by SASL GSSAPI, as sssd's
// AD provider and adcli do: a TGT for NAS$ from the keytab into a memory
// credential cache of this thread, then OpenLDAP's libldap with Cyrus SASL
// (libldap-2.5-0, libsasl2-modules-gssapi-mit: what adcli already pulls in
// on every NAS that joined through it). No sssd or winbind is needed.
//
// The domain controller: the realm's KDCs from krb5.conf (in AD every KDC
// is a DC), else DNS (_ldap._tcp.<realm> SRV records). One LdapDirectory
// keeps one connection and re-binds when it breaks. Blocking: run it on a
// thread of its own (rpc/directory_names.hpp does), never on a worker.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kerberos/pac.hpp"

namespace ringsmb::kerberos {

struct DirectorySettings {
  std::string keytab;  // krb5 keytab name ("FILE:/path"); "" = krb5's default keytab
  std::string realm;   // "EXAMPLE.TEST": the domain, the bind's realm, the search base
  int timeout_ms = 2000;  // per connect and per search
};

// What a directory entry is, from its sAMAccountType (MS-SAMR 2.2.1.9
// SAM_USER_OBJECT and friends).
enum class DirectoryKind { User, Group, Alias };

struct DirectoryEntry {
  PacSid sid;
  std::string account_name;  // sAMAccountName: "nasstaff", "alice", "NAS$"
  DirectoryKind kind = DirectoryKind::User;
};

class LdapDirectory {
 public:
  explicit LdapDirectory(DirectorySettings settings);
  ~LdapDirectory();
  LdapDirectory(const LdapDirectory&) = delete;
  LdapDirectory& operator=(const LdapDirectory&) = delete;

  // The entries of the domain whose SID is one of SIDS or whose
  // sAMAccountName is one of NAMES (case-insensitively, as AD compares
  // them), in one search; what the directory does not hold is absent.
  // An error (in words, for the log) when the DC could not be asked.
  // Nothing to find: only connects, if not connected yet.
  std::expected<std::vector<DirectoryEntry>, std::string> find(const std::vector<PacSid>& sids,
                                                               const std::vector<std::string>& names);
  // The domain's SID (of its naming context's root); set once connected.
  const PacSid& domain_sid() const;

 private:
  struct Connection;
  std::expected<void, std::string> connect();
  DirectorySettings settings_;
  std::unique_ptr<Connection> conn_;
};

// The search base of REALM: "AD.EXAMPLE.TEST" -> "DC=ad,DC=example,DC=test".
std::string realm_base_dn(std::string_view realm);
// An objectSid value (MS-DTYP 2.4.2.2: revision, count, 48-bit big-endian
// authority, little-endian sub-authorities) as a SID; nullopt when malformed.
std::optional<PacSid> sid_from_binary(std::string_view bytes);
// The same in the escaped form an LDAP filter takes (RFC 4515): "\01\05...".
std::string sid_filter_value(const PacSid& sid);
// An assertion value with RFC 4515's specials (* ( ) \ NUL) escaped.
std::string escape_filter_value(std::string_view value);

}  // namespace ringsmb::kerberos
