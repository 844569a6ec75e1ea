// Accepting Kerberos AP-REQs with MIT GSSAPI (see gss_acceptor.hpp).
#include "kerberos/gss_acceptor.hpp"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "kerberos/pac.hpp"

namespace ringsmb::kerberos {

namespace {

// RFC 1964's krb5 mechanism; MIT accepts tokens framed with Microsoft's
// variant of the OID (1.2.840.48018.1.2.2) under it too.
gss_OID_desc krb5_mech_oid() { return *gss_mech_krb5; }

// Owners of the GSSAPI handles, released on every path.
struct Buffer {
  gss_buffer_desc b{0, nullptr};
  ~Buffer() {
    OM_uint32 minor = 0;
    gss_release_buffer(&minor, &b);
  }
  std::string str() const { return std::string(static_cast<const char*>(b.value), b.length); }
};
struct Name {
  gss_name_t n = GSS_C_NO_NAME;
  ~Name() {
    OM_uint32 minor = 0;
    if (n != GSS_C_NO_NAME) gss_release_name(&minor, &n);
  }
};
struct Cred {
  gss_cred_id_t c = GSS_C_NO_CREDENTIAL;
  ~Cred() {
    OM_uint32 minor = 0;
    if (c != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &c);
  }
};
struct Context {
  gss_ctx_id_t c = GSS_C_NO_CONTEXT;
  ~Context() {
    OM_uint32 minor = 0;
    if (c != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &c, GSS_C_NO_BUFFER);
  }
};
struct BufferSet {
  gss_buffer_set_t s = GSS_C_NO_BUFFER_SET;
  ~BufferSet() {
    OM_uint32 minor = 0;
    if (s != GSS_C_NO_BUFFER_SET) gss_release_buffer_set(&minor, &s);
  }
};

// All messages of one status code kind, joined.
std::string status_text(OM_uint32 code, int type) {
  std::string out;
  OM_uint32 ctx = 0;
  gss_OID_desc mech = krb5_mech_oid();
  do {
    OM_uint32 minor = 0;
    Buffer msg;
    if (GSS_ERROR(gss_display_status(&minor, code, type, &mech, &ctx, &msg.b))) break;
    if (!out.empty()) out += "; ";
    out += msg.str();
  } while (ctx != 0);
  return out;
}

// The mechanism's own message ("Ticket expired", "Request is a replay")
// says more than the generic one; both when there is a minor code, and the
// code itself where krb5 has no text for it (it then says "Success").
Refusal gss_refusal(const char* step, OM_uint32 major, OM_uint32 minor) {
  std::string text = std::string(step) + ": " + status_text(major, GSS_C_GSS_CODE);
  if (minor == 0) return {text};
  std::string detail = status_text(minor, GSS_C_MECH_CODE);
  if (detail.empty() || detail == "Success") detail = "minor code " + std::to_string(minor);
  return {text + " (" + detail + ")"};
}

std::expected<void, Refusal> acquire_acceptor_cred(const AcceptorSettings& s, Cred& cred) {
  gss_key_value_element_desc elements[2];
  OM_uint32 count = 0;
  if (!s.keytab.empty()) elements[count++] = {"keytab", s.keytab.c_str()};
  if (!s.rcache.empty()) elements[count++] = {"rcache", s.rcache.c_str()};
  gss_key_value_set_desc store{count, elements};
  gss_OID_desc mech = krb5_mech_oid();
  gss_OID_set_desc mechs{1, &mech};
  OM_uint32 minor = 0;
  // GSS_C_NO_NAME: any key in the keytab may accept; the service name is
  // checked after the ticket is decrypted (is_smb_service_principal).
  OM_uint32 major = gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_ACCEPT,
                                          count ? &store : GSS_C_NO_CRED_STORE, &cred.c, nullptr, nullptr);
  if (GSS_ERROR(major)) {
    Refusal r = gss_refusal("keytab", major, minor);
    r.reason += " [keytab " + (s.keytab.empty() ? std::string("default") : s.keytab) + "]";
    return std::unexpected(r);
  }
  return {};
}

std::expected<std::string, Refusal> display_name(gss_name_t name) {
  OM_uint32 minor = 0;
  Buffer text;
  OM_uint32 major = gss_display_name(&minor, name, &text.b, nullptr);
  if (GSS_ERROR(major)) return std::unexpected(gss_refusal("display name", major, minor));
  return text.str();
}

// MS-SMB2 3.3.5.5.3: the first 16 bytes of the GSS session key.
std::expected<std::array<uint8_t, 16>, Refusal> session_key(gss_ctx_id_t ctx) {
  OM_uint32 minor = 0;
  BufferSet keys;
  OM_uint32 major = gss_inquire_sec_context_by_oid(&minor, ctx, GSS_C_INQ_SSPI_SESSION_KEY, &keys.s);
  if (GSS_ERROR(major)) return std::unexpected(gss_refusal("session key", major, minor));
  if (keys.s->count < 1 || keys.s->elements[0].length == 0) return std::unexpected(Refusal{"session key: none"});
  std::array<uint8_t, 16> out{};
  const gss_buffer_desc& key = keys.s->elements[0];
  std::memcpy(out.data(), key.value, std::min(key.length, out.size()));
  return out;
}

std::expected<std::string, Refusal> local_name(gss_name_t client, const std::string& principal) {
  OM_uint32 minor = 0;
  Buffer name;
  gss_OID_desc mech = krb5_mech_oid();
  OM_uint32 major = gss_localname(&minor, client, &mech, &name.b);
  if (GSS_ERROR(major) || name.b.length == 0)
    return std::unexpected(Refusal{"principal " + principal + " maps to no local account (auth_to_local)"});
  return name.str();
}

// Who the ticket names on both ends, checked against the services we are.
std::expected<void, Refusal> identify(const AcceptorSettings& s, gss_ctx_id_t ctx, gss_name_t client, Accepted& out) {
  OM_uint32 minor = 0;
  Name target;
  OM_uint32 major = gss_inquire_context(&minor, ctx, nullptr, &target.n, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (GSS_ERROR(major)) return std::unexpected(gss_refusal("inquire context", major, minor));
  auto service = display_name(target.n);
  if (!service) return std::unexpected(service.error());
  auto principal = display_name(client);
  if (!principal) return std::unexpected(principal.error());
  out.service_principal = *service;
  out.client_principal = *principal;
  if (!is_smb_service_principal(out.service_principal, s.realm))
    return std::unexpected(Refusal{"ticket of " + out.client_principal + " is for " + out.service_principal +
                                   ", not a cifs/ or host/ service" + (s.realm.empty() ? "" : " of " + s.realm)});
  return {};
}

constexpr char kMsPacAttribute[] = "urn:mspac:";  // MIT's name for the whole PAC

// Whether the ticket carries a PAC at all, signature checked or not: MIT's
// mspac module names its buffers ("urn:mspac:logon-info", ...) among the
// client name's attributes whether or not the signature verified.
bool ticket_has_pac(gss_name_t client) {
  OM_uint32 minor = 0;
  BufferSet attrs;
  OM_uint32 major = gss_inquire_name(&minor, client, nullptr, nullptr, &attrs.s);
  if (GSS_ERROR(major) || attrs.s == GSS_C_NO_BUFFER_SET) return false;
  constexpr std::string_view kPrefix = kMsPacAttribute;
  for (size_t i = 0; i < attrs.s->count; ++i) {
    std::string_view name(static_cast<const char*>(attrs.s->elements[i].value), attrs.s->elements[i].length);
    if (name.starts_with(kPrefix)) return true;
  }
  return false;
}

// The PAC's logon info, from MIT's mspac authdata module, which checked the
// server signature with the service key when the ticket was accepted
// (krb5_pac_verify). MIT treats a PAC that fails the check as absent (or
// not authenticated), so a ticket that has one but yields none here is a
// PAC whose signature failed: refused, never mapped as if it had no PAC.
// A PAC without LOGON_INFO (MIT's KDC) yields nullopt.
std::expected<std::optional<LogonInfo>, Refusal> verified_logon_info(gss_name_t client,
                                                                     const std::string& principal) {
  bool present = ticket_has_pac(client);
  gss_buffer_desc attr{sizeof(kMsPacAttribute) - 1, const_cast<char*>(kMsPacAttribute)};
  int authenticated = 0, complete = 0, more = -1;
  Buffer value, display;
  OM_uint32 minor = 0;
  OM_uint32 major =
      gss_get_name_attribute(&minor, client, &attr, &authenticated, &complete, &value.b, &display.b, &more);
  Refusal unsigned_pac{"the PAC in the ticket of " + principal +
                       " fails its server signature check (PAC_SERVER_CHECKSUM)"};
  if (GSS_ERROR(major)) {
    if (!present) return std::nullopt;
    if (major == GSS_S_UNAVAILABLE) return std::unexpected(unsigned_pac);
    return std::unexpected(gss_refusal("PAC", major, minor));
  }
  if (!authenticated) return std::unexpected(unsigned_pac);
  auto pac = parse_pac(ByteSpan(static_cast<const uint8_t*>(value.b.value), value.b.length));
  if (!pac) return std::unexpected(Refusal{"the PAC in the ticket of " + principal + " is malformed: " + pac.error()});
  return pac->logon_info;
}

}  // namespace

bool is_smb_service_principal(std::string_view principal, std::string_view realm) {
  size_t slash = principal.find('/');
  size_t at = principal.rfind('@');
  if (at == std::string_view::npos || at < 2) return false;
  bool realm_ok = realm.empty() || principal.substr(at + 1) == realm;
  // The computer account itself, NAS$: an AD KDC may name it in the ticket
  // for cifs/nas.example.test (Samba's canonicalises the service name to
  // the account the SPN belongs to); its keys are those of its SPNs.
  if (slash == std::string_view::npos || slash > at) return principal[at - 1] == '$' && realm_ok;
  std::string service(principal.substr(0, slash));
  for (char& c : service) c = char(tolower(static_cast<unsigned char>(c)));
  if (service != "cifs" && service != "host") return false;
  return realm_ok;
}

std::expected<Accepted, Refusal> accept_ap_req(const AcceptorSettings& settings, ByteSpan token) {
  if (token.empty()) return std::unexpected(Refusal{"empty Kerberos token"});
  Cred cred;
  if (auto ok = acquire_acceptor_cred(settings, cred); !ok) return std::unexpected(ok.error());
  Context ctx;
  Name client;
  Buffer output;
  gss_buffer_desc input{token.size(), const_cast<uint8_t*>(token.data())};
  OM_uint32 minor = 0, flags = 0;
  OM_uint32 major = gss_accept_sec_context(&minor, &ctx.c, cred.c, &input, GSS_C_NO_CHANNEL_BINDINGS, &client.n,
                                           nullptr, &output.b, &flags, nullptr, nullptr);
  if (major == GSS_S_CONTINUE_NEEDED)
    return std::unexpected(Refusal{"the client asked for a multi-leg (DCE-style) exchange, which SMB does not use"});
  if (GSS_ERROR(major) || major != GSS_S_COMPLETE) {
    Refusal r = gss_refusal("AP-REQ", major, minor);
    // The client only sees LOGON_FAILURE: the log names the cause.
    if (minor == OM_uint32(KRB5KRB_AP_ERR_SKEW))
      r.reason += ": KRB_AP_ERR_SKEW, the client's clock and this server's differ by more than krb5's clockskew "
                  "(300 s unless krb5.conf says otherwise); synchronise both with the domain's time (NTP)";
    return std::unexpected(r);
  }
  Accepted out;
  if (auto ok = identify(settings, ctx.c, client.n, out); !ok) return std::unexpected(ok.error());
  auto logon = verified_logon_info(client.n, out.client_principal);
  if (!logon) return std::unexpected(logon.error());
  out.logon_info = std::move(*logon);
  // auth_to_local names the account of a ticket without logon info; with
  // one, the control plane looks the domain account up (NSS), and the
  // auth_to_local name, when there is one, is only a hint.
  auto local = local_name(client.n, out.client_principal);
  if (local) out.local_name = *local;
  else if (!out.logon_info) return std::unexpected(local.error());
  auto key = session_key(ctx.c);
  if (!key) return std::unexpected(key.error());
  out.session_key = *key;
  auto* bytes = static_cast<const uint8_t*>(output.b.value);
  out.response_token.assign(bytes, bytes + output.b.length);
  return out;
}

}  // namespace ringsmb::kerberos
