// NTLMSSP server side (MS-NLMP), NTLMv2 only: no LM, no NTLMv1, no anonymous
// unless the caller allows it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::auth {

// MS-NLMP 2.2.2.5 flags used here.
enum : uint32_t {
  NTLMSSP_NEGOTIATE_UNICODE = 0x00000001,
  NTLMSSP_NEGOTIATE_OEM = 0x00000002,
  NTLMSSP_REQUEST_TARGET = 0x00000004,
  NTLMSSP_NEGOTIATE_SIGN = 0x00000010,
  NTLMSSP_NEGOTIATE_SEAL = 0x00000020,
  NTLMSSP_NEGOTIATE_LM_KEY = 0x00000080,
  NTLMSSP_NEGOTIATE_NTLM = 0x00000200,
  NTLMSSP_ANONYMOUS = 0x00000800,
  NTLMSSP_NEGOTIATE_ALWAYS_SIGN = 0x00008000,
  NTLMSSP_TARGET_TYPE_DOMAIN = 0x00010000,
  NTLMSSP_TARGET_TYPE_SERVER = 0x00020000,
  NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY = 0x00080000,
  NTLMSSP_NEGOTIATE_TARGET_INFO = 0x00800000,
  NTLMSSP_NEGOTIATE_VERSION = 0x02000000,
  NTLMSSP_NEGOTIATE_128 = 0x20000000,
  NTLMSSP_NEGOTIATE_KEY_EXCH = 0x40000000,
  NTLMSSP_NEGOTIATE_56 = 0x80000000,
};

struct NtlmNegotiate {
  uint32_t flags = 0;
};
std::optional<NtlmNegotiate> parse_ntlm_negotiate(ByteSpan msg);

struct ChallengeParams {
  std::array<uint8_t, 8> server_challenge;
  std::string netbios_domain;    // e.g. "WORKGROUP"
  std::string netbios_computer;  // e.g. "RINGSMB"
  std::string dns_domain;        // may be empty
  std::string dns_computer;      // may be empty
  uint64_t timestamp_filetime;   // MsvAvTimestamp
};
// Builds CHALLENGE_MESSAGE answering `client_flags` (MS-NLMP 3.2.5.1.1).
Bytes build_ntlm_challenge(uint32_t client_flags, const ChallengeParams& params);

struct NtlmAuthenticate {
  Bytes lm_response;
  Bytes nt_response;
  std::string domain;       // UTF-8
  std::string user;         // UTF-8
  std::string workstation;  // UTF-8
  Bytes encrypted_random_session_key;
  uint32_t flags = 0;
  std::optional<size_t> mic_offset;  // offset of the 16-byte MIC inside the message, if present
};
std::optional<NtlmAuthenticate> parse_ntlm_authenticate(ByteSpan msg);

// The NT hash (MD4 of the UTF-16LE password).
std::array<uint8_t, 16> nt_hash_from_password(std::string_view password_utf8);

struct NtlmVerifyInput {
  ByteSpan negotiate_msg;   // for the MIC
  ByteSpan challenge_msg;   // for the MIC
  ByteSpan authenticate_msg;
  std::array<uint8_t, 8> server_challenge;
};

struct NtlmVerifyResult {
  std::array<uint8_t, 16> session_key;  // exported session key (after KEY_EXCH if negotiated)
};

// Verifies NTLMv2 for a known user: tries the domain the client sent and the
// empty domain (as Windows and Samba do), checks the MIC when the client sent
// one (MsvAvFlags bit 0x2), and derives the exported session key.
// Returns LogonFailure on any mismatch; never distinguishes "no such user"
// from "wrong password" to the caller.
Result<NtlmVerifyResult> ntlmv2_verify(const NtlmVerifyInput& in, const NtlmAuthenticate& auth,
                                       const std::array<uint8_t, 16>& nt_hash);

}  // namespace ringsmb::auth
