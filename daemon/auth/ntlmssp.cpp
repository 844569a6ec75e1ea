// NTLMSSP messages (MS-NLMP 2.2.1): NEGOTIATE parsing, CHALLENGE building,
// AUTHENTICATE parsing. Cryptographic verification is in ntlm_verify.cpp.
#include "auth/ntlmssp.hpp"

#include <algorithm>

#include "auth/spnego.hpp"
#include "auth/ntlm_utf16.hpp"

namespace ringsmb::auth {
namespace {

enum : uint32_t { kNegotiateMessage = 1, kChallengeMessage = 2, kAuthenticateMessage = 3 };

// MS-NLMP 2.2.2.1 AvId values.
enum : uint16_t {
  MsvAvEOL = 0,
  MsvAvNbComputerName = 1,
  MsvAvNbDomainName = 2,
  MsvAvDnsComputerName = 3,
  MsvAvDnsDomainName = 4,
  MsvAvTimestamp = 7,
};

constexpr size_t kChallengeHeaderSize = 56;
// AUTHENTICATE_MESSAGE: fixed fields through NegotiateFlags are 64 bytes;
// Version (8) and MIC (16) follow when the payload starts late enough.
constexpr size_t kAuthFixedSize = 64;
constexpr size_t kAuthMicOffset = 72;
constexpr size_t kAuthWithMicSize = 88;

// Product version sent in CHALLENGE (MS-NLMP 2.2.2.10); informational only.
constexpr uint8_t kVersion[8] = {6, 1, 0xB1, 0x1D, 0, 0, 0, 0x0F};  // 6.1.7601, NTLMSSP_REVISION_W2K3

bool read_signature(ByteReader& r, uint32_t type) {
  ByteSpan sig = r.bytes(8);
  uint32_t t = r.u32();
  return r.ok() && is_raw_ntlmssp(sig) && t == type;
}

// MS-NLMP 3.2.5.1.1: the flags a server answers a NEGOTIATE with. Only
// NTLMv2 is offered, so LM_KEY is never set.
uint32_t answer_flags(uint32_t client) {
  uint32_t f = NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN |
               NTLMSSP_TARGET_TYPE_SERVER | NTLMSSP_NEGOTIATE_TARGET_INFO;
  // UNICODE wins over OEM; a client asking for neither is answered in
  // Unicode, which every NTLMv2 client supports.
  f |= (client & NTLMSSP_NEGOTIATE_OEM) && !(client & NTLMSSP_NEGOTIATE_UNICODE) ? NTLMSSP_NEGOTIATE_OEM
                                                                                    : NTLMSSP_NEGOTIATE_UNICODE;
  // Echoed when asked for.
  f |= client & (NTLMSSP_NEGOTIATE_SIGN | NTLMSSP_NEGOTIATE_SEAL | NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |
                 NTLMSSP_NEGOTIATE_VERSION | NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_KEY_EXCH |
                 NTLMSSP_NEGOTIATE_56);
  return f;
}

Bytes utf16_or_empty(std::string_view s) { return detail::utf8_to_utf16le(s).value_or(Bytes{}); }

void put_av(ByteWriter& w, uint16_t id, ByteSpan value) {
  w.u16(id);
  w.u16(uint16_t(std::min<size_t>(value.size(), 0xFFFF)));
  w.bytes(value.first(std::min<size_t>(value.size(), 0xFFFF)));
}

// TargetInfo (MS-NLMP 2.2.2.1), in the order Windows sends it. Empty DNS
// names fall back to the NetBIOS ones: some clients reject empty pairs.
Bytes build_target_info(const ChallengeParams& p) {
  Bytes out;
  ByteWriter w(out);
  put_av(w, MsvAvNbDomainName, utf16_or_empty(p.netbios_domain));
  put_av(w, MsvAvNbComputerName, utf16_or_empty(p.netbios_computer));
  put_av(w, MsvAvDnsDomainName, utf16_or_empty(p.dns_domain.empty() ? p.netbios_domain : p.dns_domain));
  put_av(w, MsvAvDnsComputerName, utf16_or_empty(p.dns_computer.empty() ? p.netbios_computer : p.dns_computer));
  uint8_t ts[8];
  store_le64(ts, p.timestamp_filetime);
  put_av(w, MsvAvTimestamp, ts);
  put_av(w, MsvAvEOL, {});
  return out;
}

struct Field {
  uint16_t len = 0;
  uint32_t offset = 0;
};

Field read_field(ByteReader& r) {
  Field f;
  f.len = r.u16();
  r.u16();  // MaxLen, ignored as MS-NLMP says
  f.offset = r.u32();
  return f;
}

// The bytes a field points at; nullopt if they are not wholly inside the
// payload. Empty fields may carry any offset (clients differ).
std::optional<ByteSpan> field_bytes(ByteSpan msg, Field f) {
  if (f.len == 0) return ByteSpan{};
  if (f.offset < kAuthFixedSize || f.offset > msg.size() || f.len > msg.size() - f.offset) return std::nullopt;
  return msg.subspan(f.offset, f.len);
}

std::optional<std::string> field_string(ByteSpan msg, Field f, bool unicode) {
  auto b = field_bytes(msg, f);
  if (!b) return std::nullopt;
  if (unicode) return detail::utf16le_to_utf8(*b);
  return detail::latin1_to_utf8(*b);
}

}  // namespace

std::optional<NtlmNegotiate> parse_ntlm_negotiate(ByteSpan msg) {
  ByteReader r(msg);
  if (!read_signature(r, kNegotiateMessage)) return std::nullopt;
  NtlmNegotiate n;
  n.flags = r.u32();
  // DomainNameFields / WorkstationFields / Version are informational and
  // optional in old clients, so they are not required or looked at.
  if (!r.ok()) return std::nullopt;
  return n;
}

Bytes build_ntlm_challenge(uint32_t client_flags, const ChallengeParams& params) {
  uint32_t flags = answer_flags(client_flags);
  // TARGET_TYPE_SERVER: TargetName is the server's NetBIOS name.
  Bytes target_name = (flags & NTLMSSP_NEGOTIATE_UNICODE)
                          ? utf16_or_empty(params.netbios_computer)
                          : Bytes(params.netbios_computer.begin(), params.netbios_computer.end());
  target_name.resize(std::min<size_t>(target_name.size(), 0xFFFF));
  Bytes target_info = build_target_info(params);
  target_info.resize(std::min<size_t>(target_info.size(), 0xFFFF));

  Bytes out;
  ByteWriter w(out);
  w.bytes("NTLMSSP", 8);  // includes the terminating NUL
  w.u32(kChallengeMessage);
  w.u16(uint16_t(target_name.size()));
  w.u16(uint16_t(target_name.size()));
  w.u32(uint32_t(kChallengeHeaderSize));
  w.u32(flags);
  w.bytes(params.server_challenge);
  w.zeros(8);  // Reserved
  w.u16(uint16_t(target_info.size()));
  w.u16(uint16_t(target_info.size()));
  w.u32(uint32_t(kChallengeHeaderSize + target_name.size()));
  w.bytes(kVersion, sizeof kVersion);
  w.bytes(target_name);
  w.bytes(target_info);
  return out;
}

std::optional<NtlmAuthenticate> parse_ntlm_authenticate(ByteSpan msg) {
  ByteReader r(msg);
  if (!read_signature(r, kAuthenticateMessage)) return std::nullopt;
  Field lm = read_field(r), nt = read_field(r), domain = read_field(r), user = read_field(r),
        workstation = read_field(r), session_key = read_field(r);
  NtlmAuthenticate a;
  a.flags = r.u32();
  if (!r.ok()) return std::nullopt;

  bool unicode = a.flags & NTLMSSP_NEGOTIATE_UNICODE;
  auto lm_b = field_bytes(msg, lm), nt_b = field_bytes(msg, nt), key_b = field_bytes(msg, session_key);
  auto dom_s = field_string(msg, domain, unicode), user_s = field_string(msg, user, unicode),
       ws_s = field_string(msg, workstation, unicode);
  if (!lm_b || !nt_b || !key_b || !dom_s || !user_s || !ws_s) return std::nullopt;
  a.lm_response.assign(lm_b->begin(), lm_b->end());
  a.nt_response.assign(nt_b->begin(), nt_b->end());
  a.encrypted_random_session_key.assign(key_b->begin(), key_b->end());
  a.domain = std::move(*dom_s);
  a.user = std::move(*user_s);
  a.workstation = std::move(*ws_s);

  // Version and MIC exist only when the payload leaves room for them
  // (MS-NLMP 2.2.1.3); a client that sends a MIC says so in MsvAvFlags,
  // which ntlmv2_verify checks.
  size_t payload_start = msg.size();
  for (Field f : {lm, nt, domain, user, workstation, session_key}) {
    if (f.len) payload_start = std::min<size_t>(payload_start, f.offset);
  }
  if (payload_start >= kAuthWithMicSize) a.mic_offset = kAuthMicOffset;
  return a;
}

}  // namespace ringsmb::auth
