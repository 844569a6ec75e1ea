// SPNEGO (RFC 4178, MS-SPNG) in DER, only as much as NTLMSSP-over-SMB2 needs.
// Every decoder is bounds-checked and rejects trailing garbage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/bytes.hpp"

namespace ringsmb::auth {

// OID 1.3.6.1.4.1.311.2.2.10, NTLMSSP.
extern const Bytes kOidNtlmssp;
// Kerberos: RFC 1964's OID 1.2.840.113554.1.2.2, and 1.2.840.48018.1.2.2,
// the one Windows clients list first (MS-SPNG 3.1.5.2).
extern const Bytes kOidKrb5;
extern const Bytes kOidMsKrb5;
bool is_krb5_oid(ByteSpan oid);

// The GSS-API wrapped NegTokenInit a server sends in the NEGOTIATE response
// SecurityBuffer: mechTypes = [NTLMSSP], or [MS-KRB5, KRB5, NTLMSSP] when
// it accepts Kerberos (Samba's order), plus the
// "not_defined_in_RFC4178@please_ignore" negHints principal as Windows and
// Samba send it.
Bytes build_negotiate_hint(bool with_kerberos = false);

struct NegTokenInit {
  std::vector<Bytes> mech_types;  // DER-encoded OIDs (content bytes only)
  Bytes mech_token;               // empty when absent
};
struct NegTokenResp {
  std::optional<uint32_t> neg_state;
  Bytes supported_mech;  // OID content bytes, empty when absent
  Bytes response_token;  // empty when absent
  Bytes mech_list_mic;   // empty when absent
};

// Accepts the GSS-API wrapped form ([APPLICATION 0] with the SPNEGO OID) or a bare [0] NegTokenInit.
std::optional<NegTokenInit> parse_neg_token_init(ByteSpan blob);
// Accepts a [1] NegTokenResp.
std::optional<NegTokenResp> parse_neg_token_resp(ByteSpan blob);

enum class NegState : uint32_t { AcceptCompleted = 0, AcceptIncomplete = 1, Reject = 2, RequestMic = 3 };
// Builds a [1] NegTokenResp. supported_mech is included only when non-empty
// (the first server reply names NTLMSSP), response_token and mic likewise.
Bytes build_neg_token_resp(NegState state, ByteSpan supported_mech, ByteSpan response_token,
                           ByteSpan mech_list_mic = {});

// True when the blob starts with "NTLMSSP\0" (raw NTLMSSP, no SPNEGO wrapper).
bool is_raw_ntlmssp(ByteSpan blob);

}  // namespace ringsmb::auth
