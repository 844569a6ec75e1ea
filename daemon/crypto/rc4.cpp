// RC4, only for NTLM KEY_EXCH (MS-NLMP 3.4.5.4 RC4K). OpenSSL 3 keeps RC4 in
// the legacy provider, so it is written out here.
#include <utility>

#include "crypto/primitives.hpp"

namespace ringsmb::crypto {

void rc4(ByteSpan key, std::span<uint8_t> data) {
  if (key.empty()) return;  // RC4 is undefined for an empty key; callers always pass 16 bytes.
  uint8_t s[256];
  for (int i = 0; i < 256; ++i) s[i] = uint8_t(i);
  // Key-scheduling algorithm.
  uint8_t j = 0;
  for (int i = 0; i < 256; ++i) {
    j = uint8_t(j + s[i] + key[size_t(i) % key.size()]);
    std::swap(s[i], s[j]);
  }
  // Keystream generation, XORed into the data.
  uint8_t i = 0;
  j = 0;
  for (auto& b : data) {
    i = uint8_t(i + 1);
    j = uint8_t(j + s[i]);
    std::swap(s[i], s[j]);
    b ^= s[uint8_t(s[i] + s[j])];
  }
}

}  // namespace ringsmb::crypto
