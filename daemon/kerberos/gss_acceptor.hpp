// Kerberos service side (RFC 4120 AP-REQ/AP-REP, RFC 4121 framing) through
// MIT's GSSAPI: the ticket is decrypted, checked (expiry, clock skew, replay
// cache) and answered by the library that also ships kinit and the KDC,
// rather than by a hand-written ASN.1 and crypto stack; this file only
// decides which service principals count and what identity results.
//
// Runs where the keytab is: in ringsmb-ctld (or in-process with --no-ctld).
#pragma once

#include <array>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "common/bytes.hpp"
#include "kerberos/pac.hpp"

namespace ringsmb::kerberos {

struct AcceptorSettings {
  std::string keytab;  // krb5 keytab name ("FILE:/path"); "" = krb5's default keytab
  std::string realm;   // the service principal's realm must be this one; "" = any
  std::string rcache;  // replay cache name ("file2:/path"); "" = krb5's default
};

struct Accepted {
  std::string client_principal;   // "alice@EXAMPLE.TEST"
  std::string service_principal;  // "cifs/nas.example.test@EXAMPLE.TEST"
  // The Unix account auth_to_local maps the client to; may be empty when
  // logon_info is there (a domain account, mapped through NSS instead).
  std::string local_name;
  // The PAC's LOGON_INFO (MS-PAC 2.5), its server signature verified;
  // nullopt for a ticket without a PAC or with one that has no logon info.
  std::optional<LogonInfo> logon_info;
  // MS-SMB2 3.3.5.5.3: the GSS session key (the sub-session key of the
  // exchange), its first 16 bytes, zero-padded when shorter.
  std::array<uint8_t, 16> session_key{};
  Bytes response_token;  // the GSS token holding the AP-REP (mutual authentication)
};

// Why a token was refused, for the log (the client only sees LOGON_FAILURE).
struct Refusal {
  std::string reason;
};

// Accepts one GSS krb5 initial context token (RFC 4121 4.1 framing around
// an AP-REQ). Any failure, malformed input included, is a Refusal.
std::expected<Accepted, Refusal> accept_ap_req(const AcceptorSettings& settings, ByteSpan token);

// True for "cifs/..." and "host/..." principals (case-insensitive service
// name) and a computer account "NAS$" of REALM (any realm when REALM is
// empty): the services an SMB server answers for, as Samba's keytab
// acceptor takes them.
bool is_smb_service_principal(std::string_view principal, std::string_view realm);

}  // namespace ringsmb::kerberos
