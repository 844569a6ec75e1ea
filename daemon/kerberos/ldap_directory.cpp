// The domain's directory over LDAP, bound as the machine account (see
// ldap_directory.hpp).
#include "kerberos/ldap_directory.hpp"

#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <ldap.h>
#include <profile.h>
#include <sasl/sasl.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/log.hpp"

namespace ringsmb::kerberos {

namespace {

// sAMAccountType values (MS-SAMR 2.2.1.9).
constexpr uint32_t kSamGroupObject = 0x10000000;
constexpr uint32_t kSamNonSecurityGroupObject = 0x10000001;
constexpr uint32_t kSamAliasObject = 0x20000000;
constexpr uint32_t kSamNonSecurityAliasObject = 0x20000001;
// Per search: LSA asks at most 1000 at a time (lsarpc.cpp), the cache
// (rpc/directory_names.cpp) in batches far below that.
constexpr int kMaxEntries = 2000;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The thread's own credential cache: GSSAPI (and so SASL's GSSAPI plugin,
// which passes no credential) takes the cache gss_krb5_ccache_name names
// for the calling thread, so ringsmb-ctld's other threads are untouched.
constexpr const char* kCcacheName = "MEMORY:ringsmb-directory";

struct Krb5 {
  krb5_context ctx = nullptr;
  ~Krb5() {
    if (ctx) krb5_free_context(ctx);
  }
  std::string error(krb5_error_code code) const {
    const char* m = krb5_get_error_message(ctx, code);
    std::string text = m ? m : "unknown error";
    krb5_free_error_message(ctx, m);
    return text;
  }
};

// The keytab's machine account: the principal "NAME$@REALM" that adcli,
// realm join and net ads keytab all write.
std::expected<krb5_principal, std::string> machine_principal(Krb5& k, krb5_keytab kt, const std::string& realm) {
  krb5_kt_cursor cursor;
  if (krb5_error_code e = krb5_kt_start_seq_get(k.ctx, kt, &cursor)) return std::unexpected("keytab: " + k.error(e));
  krb5_principal found = nullptr;
  krb5_keytab_entry entry;
  while (!found && krb5_kt_next_entry(k.ctx, kt, &entry, &cursor) == 0) {
    krb5_principal p = entry.principal;
    bool machine = krb5_princ_size(k.ctx, p) == 1 && p->data[0].length > 0 &&
                   p->data[0].data[p->data[0].length - 1] == '$' &&
                   std::string_view(p->realm.data, p->realm.length) == realm;
    if (machine) krb5_copy_principal(k.ctx, p, &found);
    krb5_free_keytab_entry_contents(k.ctx, &entry);
  }
  krb5_kt_end_seq_get(k.ctx, kt, &cursor);
  if (!found) return std::unexpected("the keytab holds no computer account (NAME$@" + realm + ")");
  return found;
}

// A TGT of the machine account, from the keytab, in kCcacheName; the
// account's principal name.
std::expected<std::string, std::string> machine_tgt(const DirectorySettings& s) {
  Krb5 k;
  if (krb5_init_context(&k.ctx) != 0) return std::unexpected("krb5_init_context failed");
  krb5_keytab kt = nullptr;
  krb5_error_code e = s.keytab.empty() ? krb5_kt_default(k.ctx, &kt) : krb5_kt_resolve(k.ctx, s.keytab.c_str(), &kt);
  if (e) return std::unexpected("keytab: " + k.error(e));
  auto princ = machine_principal(k, kt, s.realm);
  if (!princ) {
    krb5_kt_close(k.ctx, kt);
    return std::unexpected(princ.error());
  }
  krb5_creds creds;
  std::memset(&creds, 0, sizeof creds);
  e = krb5_get_init_creds_keytab(k.ctx, &creds, *princ, kt, 0, nullptr, nullptr);
  krb5_ccache cc = nullptr;
  if (!e) e = krb5_cc_resolve(k.ctx, kCcacheName, &cc);
  if (!e) e = krb5_cc_initialize(k.ctx, cc, *princ);
  if (!e) e = krb5_cc_store_cred(k.ctx, cc, &creds);
  std::string why = e ? "a ticket for the computer account: " + k.error(e) : "";
  char* name = nullptr;
  std::string principal = krb5_unparse_name(k.ctx, *princ, &name) == 0 ? name : "?";
  krb5_free_unparsed_name(k.ctx, name);
  if (cc) krb5_cc_close(k.ctx, cc);  // a MEMORY cache lives on until destroyed
  krb5_free_cred_contents(k.ctx, &creds);
  krb5_free_principal(k.ctx, *princ);
  krb5_kt_close(k.ctx, kt);
  if (e) return std::unexpected(why);
  OM_uint32 minor = 0;
  gss_krb5_ccache_name(&minor, kCcacheName, nullptr);
  return principal;
}

// "dc1.example.test:88" or "[2001:db8::1]:88" without the port.
std::string host_of(std::string entry) {
  if (entry.starts_with('[')) return entry.substr(1, entry.find(']') - 1);
  if (size_t colon = entry.find(':'); colon != std::string::npos && entry.find(':', colon + 1) == std::string::npos)
    entry.resize(colon);
  return entry;
}

// The DCs to try: the realm's KDCs in krb5.conf, else DNS's _ldap._tcp SRV records.
std::vector<std::string> domain_controllers(const std::string& realm) {
  std::vector<std::string> out;
  Krb5 k;
  profile_t profile = nullptr;
  if (krb5_init_context(&k.ctx) == 0 && krb5_get_profile(k.ctx, &profile) == 0) {
    const char* path[] = {"realms", realm.c_str(), "kdc", nullptr};
    char** values = nullptr;
    if (profile_get_values(profile, path, &values) == 0) {
      for (char** v = values; *v; ++v) out.push_back(host_of(*v));
      profile_free_list(values);
    }
    profile_release(profile);
  }
  char* srv = nullptr;
  if (out.empty() && ldap_domain2hostlist(lower(realm).c_str(), &srv) == LDAP_SUCCESS && srv) {
    std::istringstream hosts(srv);
    for (std::string h; hosts >> h;) out.push_back(host_of(h));
    ldap_memfree(srv);
  }
  return out;
}

// SASL's questions during a GSSAPI bind (the authorization identity): the
// defaults, which mean "the principal of the ticket".
int sasl_defaults(LDAP*, unsigned, void*, void* prompts) {
  for (auto* p = static_cast<sasl_interact_t*>(prompts); p->id != SASL_CB_LIST_END; ++p) {
    p->result = p->defresult ? p->defresult : "";
    p->len = unsigned(std::strlen(static_cast<const char*>(p->result)));
  }
  return LDAP_SUCCESS;
}

std::string ldap_error(LDAP* ld, int rc) {
  std::string text = ldap_err2string(rc);
  char* diag = nullptr;
  if (ld && ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag) == LDAP_OPT_SUCCESS && diag) {
    if (*diag) text += std::string(" (") + diag + ")";
    ldap_memfree(diag);
  }
  return text;
}

std::optional<uint32_t> to_u32(const std::string& text) {
  char* end = nullptr;
  unsigned long n = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end || n > 0xFFFFFFFFul) return std::nullopt;
  return uint32_t(n);
}

DirectoryKind kind_of(uint32_t sam_account_type) {
  switch (sam_account_type) {
    case kSamGroupObject:
    case kSamNonSecurityGroupObject: return DirectoryKind::Group;
    case kSamAliasObject:
    case kSamNonSecurityAliasObject: return DirectoryKind::Alias;
    default: return DirectoryKind::User;
  }
}

// The first value of ATTR of ENTRY, or nullopt.
std::optional<std::string> first_value(LDAP* ld, LDAPMessage* entry, const char* attr) {
  berval** vals = ldap_get_values_len(ld, entry, attr);
  if (!vals) return std::nullopt;
  std::optional<std::string> out;
  if (vals[0]) out = std::string(vals[0]->bv_val, vals[0]->bv_len);
  ldap_value_free_len(vals);
  return out;
}

std::optional<DirectoryEntry> decode_entry(LDAP* ld, LDAPMessage* entry) {
  auto sid_bytes = first_value(ld, entry, "objectSid");
  auto name = first_value(ld, entry, "sAMAccountName");
  auto type = first_value(ld, entry, "sAMAccountType");
  if (!sid_bytes || !name || !type) return std::nullopt;
  auto sid = sid_from_binary(*sid_bytes);
  auto type_value = to_u32(*type);
  if (!sid || !type_value) return std::nullopt;
  return DirectoryEntry{*sid, *name, kind_of(*type_value)};
}

}  // namespace

struct LdapDirectory::Connection {
  LDAP* ld = nullptr;
  PacSid domain_sid;
  std::string base;
  ~Connection() {
    if (ld) ldap_unbind_ext_s(ld, nullptr, nullptr);
  }
};

LdapDirectory::LdapDirectory(DirectorySettings settings) : settings_(std::move(settings)) {}
LdapDirectory::~LdapDirectory() = default;

const PacSid& LdapDirectory::domain_sid() const {
  static const PacSid none;
  return conn_ ? conn_->domain_sid : none;
}

namespace {

std::expected<LDAP*, std::string> bind_to(const std::string& host, int timeout_ms) {
  LDAP* ld = nullptr;
  std::string uri = "ldap://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host);
  if (int rc = ldap_initialize(&ld, uri.c_str()); rc != LDAP_SUCCESS) return std::unexpected(ldap_err2string(rc));
  int version = LDAP_VERSION3;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version);
  ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
  ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tv);
  ldap_set_option(ld, LDAP_OPT_TIMEOUT, &tv);
  // The ticket is for ldap/<the DC's name as given>, not for what a
  // reverse lookup of its address says (libldap names a loopback peer
  // after this host): sssd's AD provider does the same.
  ldap_set_option(ld, LDAP_OPT_X_SASL_NOCANON, LDAP_OPT_ON);
  int rc = ldap_sasl_interactive_bind_s(ld, nullptr, "GSSAPI", nullptr, nullptr, LDAP_SASL_QUIET, sasl_defaults,
                                        nullptr);
  if (rc != LDAP_SUCCESS) {
    std::string why = ldap_error(ld, rc);
    ldap_unbind_ext_s(ld, nullptr, nullptr);
    return std::unexpected(why);
  }
  return ld;
}

// The domain's SID: the objectSid of its naming context's root.
std::expected<PacSid, std::string> read_domain_sid(LDAP* ld, const std::string& base, int timeout_ms) {
  char attr[] = "objectSid";
  char* attrs[] = {attr, nullptr};
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  LDAPMessage* res = nullptr;
  int rc = ldap_search_ext_s(ld, base.c_str(), LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, nullptr, nullptr, &tv,
                             1, &res);
  std::optional<PacSid> sid;
  if (rc == LDAP_SUCCESS)
    if (LDAPMessage* e = ldap_first_entry(ld, res))
      if (auto bytes = first_value(ld, e, "objectSid")) sid = sid_from_binary(*bytes);
  if (res) ldap_msgfree(res);
  if (rc != LDAP_SUCCESS) return std::unexpected(base + ": " + ldap_error(ld, rc));
  if (!sid) return std::unexpected(base + " has no objectSid: not an Active Directory domain");
  return *sid;
}

}  // namespace

std::expected<void, std::string> LdapDirectory::connect() {
  conn_.reset();
  auto principal = machine_tgt(settings_);
  if (!principal) return std::unexpected(principal.error());
  auto dcs = domain_controllers(settings_.realm);
  if (dcs.empty()) return std::unexpected("no domain controller for " + settings_.realm + " in krb5.conf or DNS");
  std::string why;
  for (const auto& dc : dcs) {
    auto ld = bind_to(dc, settings_.timeout_ms);
    if (!ld) {
      why += (why.empty() ? "" : "; ") + dc + ": " + ld.error();
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->ld = *ld;
    c->base = realm_base_dn(settings_.realm);
    auto sid = read_domain_sid(c->ld, c->base, settings_.timeout_ms);
    if (!sid) return std::unexpected(dc + ": " + sid.error());
    c->domain_sid = *sid;
    conn_ = std::move(c);
    LOG_INFO("domain directory: bound to %s as %s (SASL GSSAPI); domain SID %s", dc.c_str(), principal->c_str(),
             sid->to_string().c_str());
    return {};
  }
  return std::unexpected(why);
}

namespace {

std::string search_filter(const std::vector<PacSid>& sids, const std::vector<std::string>& names) {
  std::string terms;
  for (const auto& s : sids) terms += "(objectSid=" + sid_filter_value(s) + ")";
  for (const auto& n : names) terms += "(sAMAccountName=" + escape_filter_value(n) + ")";
  return "(|" + terms + ")";
}

}  // namespace

std::expected<std::vector<DirectoryEntry>, std::string> LdapDirectory::find(const std::vector<PacSid>& sids,
                                                                            const std::vector<std::string>& names) {
  if (sids.empty() && names.empty()) {  // nothing to find: only be connected (a warm-up)
    if (auto c = conn_ ? std::expected<void, std::string>() : connect(); !c) return std::unexpected(c.error());
    return std::vector<DirectoryEntry>{};
  }
  std::string filter = search_filter(sids, names);
  char a0[] = "objectSid", a1[] = "sAMAccountName", a2[] = "sAMAccountType";
  char* attrs[] = {a0, a1, a2, nullptr};
  timeval tv{settings_.timeout_ms / 1000, (settings_.timeout_ms % 1000) * 1000};
  for (int attempt = 0;; ++attempt) {
    if (!conn_) {
      if (auto c = connect(); !c) return std::unexpected(c.error());
    }
    LDAPMessage* res = nullptr;
    int rc = ldap_search_ext_s(conn_->ld, conn_->base.c_str(), LDAP_SCOPE_SUBTREE, filter.c_str(), attrs, 0,
                               nullptr, nullptr, &tv, kMaxEntries, &res);
    std::vector<DirectoryEntry> out;
    if (rc == LDAP_SUCCESS || rc == LDAP_SIZELIMIT_EXCEEDED)
      for (LDAPMessage* e = ldap_first_entry(conn_->ld, res); e; e = ldap_next_entry(conn_->ld, e))
        if (auto entry = decode_entry(conn_->ld, e)) out.push_back(std::move(*entry));
    std::string why = rc == LDAP_SUCCESS ? "" : ldap_error(conn_->ld, rc);
    if (res) ldap_msgfree(res);
    if (rc == LDAP_SUCCESS || rc == LDAP_SIZELIMIT_EXCEEDED) return out;
    conn_.reset();  // a DC that closed an idle connection: bind again, once
    if (attempt == 1 || (rc != LDAP_SERVER_DOWN && rc != LDAP_CONNECT_ERROR && rc != LDAP_UNAVAILABLE))
      return std::unexpected("search: " + why);
  }
}

std::string realm_base_dn(std::string_view realm) {
  std::string dn;
  size_t start = 0;
  while (start <= realm.size()) {
    size_t dot = realm.find('.', start);
    if (dot == std::string_view::npos) dot = realm.size();
    if (dot > start) dn += (dn.empty() ? "DC=" : ",DC=") + lower(realm.substr(start, dot - start));
    start = dot + 1;
  }
  return dn;
}

std::optional<PacSid> sid_from_binary(std::string_view bytes) {
  auto b = [&](size_t i) { return uint8_t(bytes[i]); };
  if (bytes.size() < 8 || b(0) != 1) return std::nullopt;
  size_t count = b(1);
  if (count > 15 || bytes.size() != 8 + 4 * count) return std::nullopt;
  PacSid sid;
  for (size_t i = 2; i < 8; ++i) sid.authority = (sid.authority << 8) | b(i);
  for (size_t i = 0; i < count; ++i) {
    size_t at = 8 + 4 * i;
    sid.sub.push_back(uint32_t(b(at)) | uint32_t(b(at + 1)) << 8 | uint32_t(b(at + 2)) << 16 |
                      uint32_t(b(at + 3)) << 24);
  }
  return sid;
}

std::string sid_filter_value(const PacSid& sid) {
  std::string raw;
  raw.push_back(1);
  raw.push_back(char(sid.sub.size()));
  for (int shift = 40; shift >= 0; shift -= 8) raw.push_back(char((sid.authority >> shift) & 0xFF));
  for (uint32_t s : sid.sub)
    for (int shift = 0; shift < 32; shift += 8) raw.push_back(char((s >> shift) & 0xFF));
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += {'\\', hex[c >> 4], hex[c & 15]};
  return out;
}

std::string escape_filter_value(std::string_view value) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : value) {
    if (c == '*' || c == '(' || c == ')' || c == '\\' || c == 0)
      out += {'\\', hex[c >> 4], hex[c & 15]};
    else
      out += char(c);
  }
  return out;
}

}  // namespace ringsmb::kerberos
