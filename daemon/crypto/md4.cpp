// MD4 (RFC 1320). NTLM's NT hash is MD4 of the UTF-16LE password, and
// OpenSSL 3 only ships MD4 in its legacy provider, which a server should not
// have to load, so it is written out here from the RFC's description.
#include <cstring>

#include "crypto/primitives.hpp"

namespace ringsmb::crypto {
namespace {

inline uint32_t rotl(uint32_t x, int s) { return (x << s) | (x >> (32 - s)); }
inline uint32_t f(uint32_t x, uint32_t y, uint32_t z) { return (x & y) | (~x & z); }
inline uint32_t g(uint32_t x, uint32_t y, uint32_t z) { return (x & y) | (x & z) | (y & z); }
inline uint32_t h(uint32_t x, uint32_t y, uint32_t z) { return x ^ y ^ z; }

struct Md4State {
  uint32_t a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;

  // One 64-byte block, the three rounds of RFC 1320 section 3.4.
  void block(const uint8_t* p) {
    uint32_t x[16];
    for (int i = 0; i < 16; ++i) x[i] = load_le32(p + 4 * i);
    uint32_t aa = a, bb = b, cc = c, dd = d;

    static constexpr int r1[4] = {3, 7, 11, 19};
    for (int i = 0; i < 16; i += 4) {
      a = rotl(a + f(b, c, d) + x[i + 0], r1[0]);
      d = rotl(d + f(a, b, c) + x[i + 1], r1[1]);
      c = rotl(c + f(d, a, b) + x[i + 2], r1[2]);
      b = rotl(b + f(c, d, a) + x[i + 3], r1[3]);
    }
    static constexpr int r2[4] = {3, 5, 9, 13};
    for (int i = 0; i < 4; ++i) {
      a = rotl(a + g(b, c, d) + x[i + 0] + 0x5a827999, r2[0]);
      d = rotl(d + g(a, b, c) + x[i + 4] + 0x5a827999, r2[1]);
      c = rotl(c + g(d, a, b) + x[i + 8] + 0x5a827999, r2[2]);
      b = rotl(b + g(c, d, a) + x[i + 12] + 0x5a827999, r2[3]);
    }
    static constexpr int r3[4] = {3, 9, 11, 15};
    static constexpr int order[4] = {0, 2, 1, 3};
    for (int k = 0; k < 4; ++k) {
      int i = order[k];
      a = rotl(a + h(b, c, d) + x[i + 0] + 0x6ed9eba1, r3[0]);
      d = rotl(d + h(a, b, c) + x[i + 8] + 0x6ed9eba1, r3[1]);
      c = rotl(c + h(d, a, b) + x[i + 4] + 0x6ed9eba1, r3[2]);
      b = rotl(b + h(c, d, a) + x[i + 12] + 0x6ed9eba1, r3[3]);
    }
    a += aa; b += bb; c += cc; d += dd;
  }
};

}  // namespace

Digest16 md4(ByteSpan data) {
  Md4State st;
  size_t full = data.size() / 64;
  for (size_t i = 0; i < full; ++i) st.block(data.data() + 64 * i);

  // Padding: 0x80, zeros to 56 mod 64, then the bit length little-endian.
  uint8_t tail[128] = {};
  size_t rest = data.size() - 64 * full;
  if (rest) std::memcpy(tail, data.data() + 64 * full, rest);
  tail[rest] = 0x80;
  size_t tail_len = rest < 56 ? 64 : 128;
  store_le64(tail + tail_len - 8, uint64_t(data.size()) * 8);
  for (size_t off = 0; off < tail_len; off += 64) st.block(tail + off);

  Digest16 out;
  store_le32(out.data() + 0, st.a);
  store_le32(out.data() + 4, st.b);
  store_le32(out.data() + 8, st.c);
  store_le32(out.data() + 12, st.d);
  return out;
}

}  // namespace ringsmb::crypto
