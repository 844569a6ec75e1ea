// The client side of NTLMSSP (MS-NLMP, NTLMv2 only) and of the SPNEGO
// tokens that carry it, as much as smbench needs to log in to ringsmbd and
// Samba. The server-side parsers in daemon/auth stay the reference for the
// formats; these are their mirror images.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/bytes.hpp"

namespace ringsmb::smbench {

// NEGOTIATE_MESSAGE (MS-NLMP 2.2.1.1) with no domain or workstation.
Bytes ntlm_negotiate_message();

struct NtlmChallenge {
  uint32_t flags = 0;
  std::array<uint8_t, 8> server_challenge{};
  Bytes target_info;               // the AV pairs, copied verbatim into the NTLMv2 blob
  std::string target_name;         // UTF-8
  std::optional<uint64_t> timestamp;  // MsvAvTimestamp when the server sent one
};
std::optional<NtlmChallenge> parse_ntlm_challenge(ByteSpan msg);

struct NtlmCredentials {
  std::string user;
  std::string password;
  std::string domain;  // used for NTOWFv2 and sent as DomainName
  std::string workstation = "SMBENCH";
};

struct NtlmAuthResult {
  Bytes message;                        // AUTHENTICATE_MESSAGE
  std::array<uint8_t, 16> session_key;  // exported session key, the SMB2 session key
};

// AUTHENTICATE_MESSAGE answering `ch` (MS-NLMP 3.1.5.1.2, 3.3.2). The random
// inputs are parameters so that tests can pin them.
NtlmAuthResult ntlm_authenticate_message(const NtlmChallenge& ch, const NtlmCredentials& cred,
                                         const std::array<uint8_t, 8>& client_challenge,
                                         const std::array<uint8_t, 16>& random_session_key,
                                         uint64_t now_filetime);

// GSS-API wrapped NegTokenInit offering only NTLMSSP, carrying `mech_token`.
Bytes spnego_init_token(ByteSpan mech_token);
// NegTokenResp [1] carrying `response_token` and nothing else.
Bytes spnego_resp_token(ByteSpan response_token);

// Current time as a Windows FILETIME (100 ns since 1601).
uint64_t filetime_now();

}  // namespace ringsmb::smbench
