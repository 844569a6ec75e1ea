#include "ntlm_client.hpp"

#include <chrono>

#include "auth/ntlmssp.hpp"
#include "auth/spnego.hpp"
#include "auth/ntlm_utf16.hpp"
#include "crypto/primitives.hpp"

namespace ringsmb::smbench {
namespace {

using namespace ringsmb::auth;

constexpr uint8_t kSignature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
constexpr size_t kAuthHeaderSize = 64;  // no Version, no MIC: the payload starts right after the fields

// What a Windows client asks for, minus VERSION (it changes nothing) and
// SEAL (smbench never seals NTLM messages).
constexpr uint32_t kClientFlags = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN |
                                  NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN |
                                  NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY | NTLMSSP_NEGOTIATE_128 |
                                  NTLMSSP_NEGOTIATE_KEY_EXCH | NTLMSSP_NEGOTIATE_56;

constexpr uint16_t kAvEol = 0, kAvTimestamp = 7;

Bytes utf16(std::string_view s) { return detail::utf8_to_utf16le(s).value_or(Bytes{}); }

// Reads a (Len, MaxLen, Offset) field and returns the bytes it names.
std::optional<ByteSpan> field(ByteSpan msg, size_t at) {
  ByteReader r(msg);
  r.seek(at);
  uint16_t len = r.u16();
  r.u16();
  uint32_t off = r.u32();
  if (!r.ok() || off > msg.size() || len > msg.size() - off) return std::nullopt;
  return msg.subspan(off, len);
}

std::optional<uint64_t> find_timestamp(ByteSpan av) {
  ByteReader r(av);
  while (r.has(4)) {
    uint16_t id = r.u16(), len = r.u16();
    ByteSpan v = r.bytes(len);
    if (!r.ok() || id == kAvEol) break;
    if (id == kAvTimestamp && len == 8) return load_le64(v.data());
  }
  return std::nullopt;
}

// DER: tag, definite length, content.
void der(ByteWriter& w, uint8_t tag, ByteSpan content) {
  w.u8(tag);
  size_t n = content.size();
  if (n < 0x80) {
    w.u8(uint8_t(n));
  } else if (n <= 0xFF) {
    w.u8(0x81);
    w.u8(uint8_t(n));
  } else {
    w.u8(0x82);
    w.u8(uint8_t(n >> 8));
    w.u8(uint8_t(n));
  }
  w.bytes(content);
}

Bytes der(uint8_t tag, ByteSpan content) {
  Bytes out;
  ByteWriter w(out);
  der(w, tag, content);
  return out;
}

void put_field(ByteWriter& w, size_t at, size_t len, size_t off) {
  w.patch_u16(at, uint16_t(len));
  w.patch_u16(at + 2, uint16_t(len));
  w.patch_u32(at + 4, uint32_t(off));
}

}  // namespace

uint64_t filetime_now() {
  using namespace std::chrono;
  auto ns = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
  return uint64_t(ns / 100) + 116444736000000000ull;
}

Bytes ntlm_negotiate_message() {
  Bytes out;
  out.reserve(32);  // also keeps GCC 12's -Wstringop-overflow from misfiring on growth from empty
  ByteWriter w(out);
  w.bytes(kSignature, 8);
  w.u32(1);
  w.u32(kClientFlags);
  w.zeros(16);  // DomainNameFields, WorkstationFields: empty
  return out;
}

std::optional<NtlmChallenge> parse_ntlm_challenge(ByteSpan msg) {
  ByteReader r(msg);
  ByteSpan sig = r.bytes(8);
  uint32_t type = r.u32();
  if (!r.ok() || !std::equal(sig.begin(), sig.end(), kSignature) || type != 2) return std::nullopt;
  NtlmChallenge ch;
  r.seek(20);
  ch.flags = r.u32();
  ByteSpan chal = r.bytes(8);
  if (!r.ok()) return std::nullopt;
  std::copy(chal.begin(), chal.end(), ch.server_challenge.begin());
  auto name = field(msg, 12);
  if (!name) return std::nullopt;
  ch.target_name = detail::utf16le_to_utf8(*name).value_or("");
  if (msg.size() >= 48) {
    auto info = field(msg, 40);
    if (!info) return std::nullopt;
    ch.target_info.assign(info->begin(), info->end());
    ch.timestamp = find_timestamp(*info);
  }
  return ch;
}

NtlmAuthResult ntlm_authenticate_message(const NtlmChallenge& ch, const NtlmCredentials& cred,
                                         const std::array<uint8_t, 8>& client_challenge,
                                         const std::array<uint8_t, 16>& random_session_key,
                                         uint64_t now_filetime) {
  // NTOWFv2 = HMAC_MD5(MD4(UNICODE(password)), UNICODE(Uppercase(user) + domain)).
  auto nt_hash = nt_hash_from_password(cred.password);
  Bytes who = utf16(detail::to_upper_utf8(cred.user) + cred.domain);
  auto response_key = crypto::hmac_md5(nt_hash, who);

  // temp = 1, 1, Z(6), time, client challenge, Z(4), AV pairs, Z(4).
  Bytes temp;
  ByteWriter t(temp);
  t.u8(1);
  t.u8(1);
  t.zeros(6);
  t.u64(ch.timestamp.value_or(now_filetime));
  t.bytes(client_challenge);
  t.zeros(4);
  t.bytes(ch.target_info);
  t.zeros(4);

  Bytes proof_input(ch.server_challenge.begin(), ch.server_challenge.end());
  proof_input.insert(proof_input.end(), temp.begin(), temp.end());
  auto nt_proof = crypto::hmac_md5(response_key, proof_input);
  Bytes nt_response(nt_proof.begin(), nt_proof.end());
  nt_response.insert(nt_response.end(), temp.begin(), temp.end());
  auto session_base_key = crypto::hmac_md5(response_key, nt_proof);

  // LMv2 is useless next to NTLMv2; MS-NLMP sends zeros when the server
  // sent a timestamp, and Samba accepts zeros either way.
  Bytes lm_response(24, 0);

  uint32_t flags = kClientFlags & ch.flags;
  NtlmAuthResult res;
  Bytes enc_key;
  if (flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
    res.session_key = random_session_key;
    enc_key.assign(random_session_key.begin(), random_session_key.end());
    crypto::rc4(session_base_key, enc_key);
  } else {
    res.session_key = session_base_key;
  }

  Bytes domain = utf16(cred.domain), user = utf16(cred.user), ws = utf16(cred.workstation);
  ByteWriter w(res.message);
  w.bytes(kSignature, 8);
  w.u32(3);
  w.zeros(kAuthHeaderSize - 12);
  w.patch_u32(60, flags);
  const std::pair<size_t, const Bytes*> parts[] = {
      {12, &lm_response}, {20, &nt_response}, {28, &domain}, {36, &user}, {44, &ws}, {52, &enc_key}};
  for (auto [at, bytes] : parts) {
    put_field(w, at, bytes->size(), w.size());
    w.bytes(*bytes);
  }
  return res;
}

Bytes spnego_init_token(ByteSpan mech_token) {
  static const uint8_t kSpnegoOid[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};
  Bytes mech_list = der(0x30, der(0x06, kOidNtlmssp));
  Bytes seq;
  ByteWriter s(seq);
  der(s, 0xA0, mech_list);              // mechTypes [0]
  der(s, 0xA2, der(0x04, mech_token));  // mechToken [2]
  Bytes inner;
  ByteWriter i(inner);
  der(i, 0x06, kSpnegoOid);
  der(i, 0xA0, der(0x30, seq));  // negTokenInit [0]
  return der(0x60, inner);       // [APPLICATION 0]
}

Bytes spnego_resp_token(ByteSpan response_token) {
  Bytes seq = der(0xA2, der(0x04, response_token));  // responseToken [2]
  return der(0xA1, der(0x30, seq));                  // negTokenResp [1]
}

}  // namespace ringsmb::smbench
