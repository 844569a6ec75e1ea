// Cryptographic primitives that SMB2/3 and NTLMv2 need. OpenSSL 3 supplies
// the modern ones; MD4 and RC4 (needed by NTLM, and only in OpenSSL's legacy
// provider) are implemented in md4.cpp / rc4.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/bytes.hpp"

namespace ringsmb::crypto {

using Key16 = std::array<uint8_t, 16>;
using Digest16 = std::array<uint8_t, 16>;
using Digest32 = std::array<uint8_t, 32>;
using Digest64 = std::array<uint8_t, 64>;

Digest16 md4(ByteSpan data);
Digest16 md5(ByteSpan data);
Digest64 sha512(ByteSpan a, ByteSpan b = {});
Digest16 hmac_md5(ByteSpan key, ByteSpan data);
Digest32 hmac_sha256(ByteSpan key, ByteSpan data);
// RC4 keystream XOR (NTLM key exchange). In place.
void rc4(ByteSpan key, std::span<uint8_t> data);

// NIST SP 800-108 counter-mode KDF with HMAC-SHA256, r=32, L in bits
// (128 or 256), as MS-SMB2 3.1.4.2 uses it: label and context are passed
// exactly as MS-SMB2 lists them (including their trailing NUL bytes).
Bytes kdf_counter_hmac_sha256(ByteSpan key, ByteSpan label, ByteSpan context, uint32_t length_bits);

enum class Aead { Aes128Ccm = 1, Aes128Gcm = 2, Aes256Ccm = 3, Aes256Gcm = 4 };
inline size_t aead_key_size(Aead a) { return (a == Aead::Aes256Ccm || a == Aead::Aes256Gcm) ? 32 : 16; }
// CCM uses an 11-byte nonce, GCM a 12-byte nonce (MS-SMB2 2.2.41).
inline size_t aead_nonce_size(Aead a) { return (a == Aead::Aes128Ccm || a == Aead::Aes256Ccm) ? 11 : 12; }

// Encrypts `data`, then `more` (the plaintext's continuation in another
// buffer; GCM only), in place; writes the 16-byte tag. False only on
// internal error, or `more` with CCM.
bool aead_encrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, std::span<uint8_t> data,
                  std::span<uint8_t, 16> tag, std::span<uint8_t> more = {});
// Decrypts in place; false when the tag does not verify.
bool aead_decrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, std::span<uint8_t> data,
                  std::span<const uint8_t, 16> tag);
// Decrypts `in` into `out` (same size) in one pass; false when the tag does
// not verify (`out` then holds no usable data).
bool aead_decrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, ByteSpan in, std::span<uint8_t> out,
                  std::span<const uint8_t, 16> tag);

void random_bytes(std::span<uint8_t> out);
// Constant-time comparison.
bool equal_ct(ByteSpan a, ByteSpan b);

}  // namespace ringsmb::crypto
