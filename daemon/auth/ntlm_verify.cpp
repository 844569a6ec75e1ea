// NTLMv2 verification (MS-NLMP 3.3.2, 3.2.5.1.2) and the NT hash.
#include <cstring>

#include "auth/ntlmssp.hpp"
#include "auth/ntlm_utf16.hpp"
#include "crypto/primitives.hpp"

namespace ringsmb::auth {
namespace {

using Key16 = std::array<uint8_t, 16>;

constexpr size_t kNtProofSize = 16;
// NTLMv2_CLIENT_CHALLENGE (MS-NLMP 2.2.2.7) up to AvPairs: RespType,
// HiRespType, Reserved1 (2), Reserved2 (4), TimeStamp (8),
// ChallengeFromClient (8), Reserved3 (4).
constexpr size_t kClientChallengeFixed = 28;
constexpr uint16_t MsvAvEOL = 0;
constexpr uint16_t MsvAvFlags = 6;
constexpr uint32_t kAvFlagMicPresent = 0x00000002;

// NTOWFv2 = HMAC_MD5(NT hash, UNICODE(Uppercase(User) + UserDom)).
std::optional<Key16> ntowfv2(const Key16& nt_hash, const std::string& user, const std::string& domain) {
  auto ud = detail::utf8_to_utf16le(detail::to_upper_utf8(user) + domain);
  if (!ud) return std::nullopt;
  return crypto::hmac_md5(nt_hash, *ud);
}

// MsvAvFlags from the client's AV pairs; nullopt if the list is malformed
// (no EOL inside the response, or a pair running past its end).
std::optional<uint32_t> client_av_flags(ByteSpan client_challenge) {
  ByteReader r(client_challenge);
  r.skip(kClientChallengeFixed);
  uint32_t flags = 0;
  while (r.ok()) {
    uint16_t id = r.u16();
    ByteSpan value = r.bytes(r.u16());
    if (!r.ok()) break;
    if (id == MsvAvEOL) return flags;
    if (id == MsvAvFlags && value.size() == 4) flags = load_le32(value.data());
  }
  return std::nullopt;
}

// MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE
// with the MIC field zeroed) (MS-NLMP 3.1.5.1.2).
bool mic_ok(const NtlmVerifyInput& in, size_t mic_offset, const Key16& exported) {
  if (in.authenticate_msg.size() < mic_offset + 16) return false;
  Bytes all;
  all.reserve(in.negotiate_msg.size() + in.challenge_msg.size() + in.authenticate_msg.size());
  all.insert(all.end(), in.negotiate_msg.begin(), in.negotiate_msg.end());
  all.insert(all.end(), in.challenge_msg.begin(), in.challenge_msg.end());
  size_t auth_at = all.size();
  all.insert(all.end(), in.authenticate_msg.begin(), in.authenticate_msg.end());
  std::memset(all.data() + auth_at + mic_offset, 0, 16);
  auto mic = crypto::hmac_md5(exported, all);
  return crypto::equal_ct(mic, in.authenticate_msg.subspan(mic_offset, 16));
}

// The SessionBaseKey if the NTProofStr matches for this domain spelling.
std::optional<Key16> try_domain(const NtlmVerifyInput& in, const NtlmAuthenticate& auth, const Key16& nt_hash,
                                const std::string& domain) {
  auto key = ntowfv2(nt_hash, auth.user, domain);
  if (!key) return std::nullopt;
  ByteSpan nt(auth.nt_response);
  Bytes msg(in.server_challenge.begin(), in.server_challenge.end());
  msg.insert(msg.end(), nt.begin() + kNtProofSize, nt.end());
  auto proof = crypto::hmac_md5(*key, msg);
  if (!crypto::equal_ct(proof, nt.first(kNtProofSize))) return std::nullopt;
  return crypto::hmac_md5(*key, proof);  // SessionBaseKey
}

}  // namespace

std::array<uint8_t, 16> nt_hash_from_password(std::string_view password_utf8) {
  // Invalid UTF-8 cannot be a Windows password; hashing its Latin-1 reading
  // keeps the function total without matching any valid password by accident.
  auto u = detail::utf8_to_utf16le(password_utf8);
  if (!u) u = detail::utf8_to_utf16le(detail::latin1_to_utf8(as_bytes(password_utf8)));
  return crypto::md4(*u);
}

Result<NtlmVerifyResult> ntlmv2_verify(const NtlmVerifyInput& in, const NtlmAuthenticate& auth,
                                       const std::array<uint8_t, 16>& nt_hash) {
  const auto fail = Unexpected(NtStatus::LogonFailure);
  // 24 bytes is an LM / NTLMv1 response; shorter is anonymous or garbage.
  // Neither is accepted here.
  if (auth.user.empty() || auth.nt_response.size() < kNtProofSize + kClientChallengeFixed + 4) return fail;
  ByteSpan client_challenge = ByteSpan(auth.nt_response).subspan(kNtProofSize);
  if (client_challenge[0] != 1 || client_challenge[1] != 1) return fail;  // RespType, HiRespType
  // A client challenge whose AV pairs do not parse is a malformed message,
  // not a wrong password: INVALID_PARAMETER, as Windows and Samba answer
  // (smbtorture smb2.session.ntlmssp_bug14932). Checked before the proof,
  // so it says nothing about the password; the structure alone decides.
  auto av_flags = client_av_flags(client_challenge);
  if (!av_flags) return Unexpected(NtStatus::InvalidParameter);

  // The domain as sent, then the empty domain (clients that authenticate
  // to a workgroup server often compute NTOWFv2 without one).
  std::optional<Key16> base = try_domain(in, auth, nt_hash, auth.domain);
  if (!base && !auth.domain.empty()) base = try_domain(in, auth, nt_hash, std::string());
  if (!base) return fail;

  // NTLMv2: KeyExchangeKey = SessionBaseKey; with KEY_EXCH the client's
  // random key is RC4-encrypted under it (MS-NLMP 3.4.5.2, 3.1.5.1.2).
  NtlmVerifyResult result;
  result.session_key = *base;
  if (auth.flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
    if (auth.encrypted_random_session_key.size() != 16) return fail;
    std::memcpy(result.session_key.data(), auth.encrypted_random_session_key.data(), 16);
    crypto::rc4(*base, result.session_key);
  }

  if (*av_flags & kAvFlagMicPresent) {
    if (!auth.mic_offset || !mic_ok(in, *auth.mic_offset, result.session_key)) return fail;
  }
  return result;
}

}  // namespace ringsmb::auth
