#include "auth/ntlm_gss.hpp"

#include <cstring>
#include <string_view>

#include "auth/ntlmssp.hpp"
#include "crypto/primitives.hpp"

namespace ringsmb::auth {
namespace {

// MS-NLMP 3.4.5.2 SIGNKEY and 3.4.5.3 SEALKEY (128-bit, extended session security).
crypto::Digest16 derive(ByteSpan key, std::string_view magic_with_nul) {
  Bytes buf(key.begin(), key.end());
  buf.insert(buf.end(), magic_with_nul.begin(), magic_with_nul.end());
  return crypto::md5(buf);
}

}  // namespace

std::array<uint8_t, 16> ntlm_sign(ByteSpan key, uint32_t flags, NtlmDirection dir, uint32_t seq, ByteSpan message) {
  using namespace std::string_view_literals;
  bool c2s = dir == NtlmDirection::ClientToServer;
  auto sign_key = derive(key, c2s ? "session key to client-to-server signing key magic constant\0"sv
                                  : "session key to server-to-client signing key magic constant\0"sv);
  auto seal_key = derive(key, c2s ? "session key to client-to-server sealing key magic constant\0"sv
                                  : "session key to server-to-client sealing key magic constant\0"sv);
  Bytes data(4);
  store_le32(data.data(), seq);
  data.insert(data.end(), message.begin(), message.end());
  auto mac = crypto::hmac_md5(sign_key, data);
  std::array<uint8_t, 16> out{};
  store_le32(out.data(), 1);  // Version
  std::memcpy(out.data() + 4, mac.data(), 8);
  if (flags & NTLMSSP_NEGOTIATE_KEY_EXCH) crypto::rc4(seal_key, std::span<uint8_t>(out.data() + 4, 8));
  store_le32(out.data() + 12, seq);
  return out;
}

}  // namespace ringsmb::auth
