// Hashes, MACs, the SP 800-108 KDF and randomness on top of OpenSSL 3.
//
// Algorithms are fetched once and cached: an implicit fetch on every call
// would take OpenSSL's provider lock for each signed SMB2 message.
#include "crypto/primitives.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <cstring>

#include "crypto/mac_parts.hpp"

namespace ringsmb::crypto {
namespace detail {

void crypto_abort() { std::abort(); }

EVP_MAC* hmac_mac() {
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return mac;
}

}  // namespace detail

namespace {

using detail::crypto_abort;

const EVP_MD* md_sha512() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA512", nullptr);
  return md;
}
const EVP_MD* md_md5() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "MD5", nullptr);
  return md;
}

void digest_into(const EVP_MD* md, std::initializer_list<ByteSpan> parts, uint8_t* out) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = md && ctx && EVP_DigestInit_ex(ctx, md, nullptr) == 1;
  for (ByteSpan p : parts) ok = ok && EVP_DigestUpdate(ctx, p.data(), p.size()) == 1;
  ok = ok && EVP_DigestFinal_ex(ctx, out, nullptr) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) crypto_abort();
}

// Runs one EVP_MAC over the parts with a context of its own (the key
// derivation's and NTLM's keys serve a few messages; signing keys have
// contexts kept per key, crypto/keyed_macs.cpp). `sub_name`/`sub_value`
// select the digest.
void mac_into(EVP_MAC* mac, const char* sub_name, const char* sub_value, ByteSpan key,
              std::initializer_list<ByteSpan> parts, uint8_t* out, size_t out_size) {
  EVP_MAC_CTX* ctx = mac ? EVP_MAC_CTX_new(mac) : nullptr;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(sub_name, const_cast<char*>(sub_value), 0),
      OSSL_PARAM_construct_end(),
  };
  // An empty key is legal for HMAC; OpenSSL wants a non-null pointer.
  static const uint8_t kNoKey = 0;
  const uint8_t* key_ptr = key.empty() ? &kNoKey : key.data();
  bool ok = ctx && EVP_MAC_init(ctx, key_ptr, key.size(), params) == 1;
  for (ByteSpan p : parts) ok = ok && EVP_MAC_update(ctx, p.data(), p.size()) == 1;
  size_t got = 0;
  ok = ok && EVP_MAC_final(ctx, out, &got, out_size) == 1 && got == out_size;
  EVP_MAC_CTX_free(ctx);
  if (!ok) crypto_abort();
}

}  // namespace

namespace detail {

Digest32 hmac_sha256_parts(ByteSpan key, std::initializer_list<ByteSpan> parts) {
  Digest32 out;
  mac_into(hmac_mac(), OSSL_MAC_PARAM_DIGEST, "SHA256", key, parts, out.data(), out.size());
  return out;
}

Digest16 hmac_md5_parts(ByteSpan key, std::initializer_list<ByteSpan> parts) {
  Digest16 out;
  mac_into(hmac_mac(), OSSL_MAC_PARAM_DIGEST, "MD5", key, parts, out.data(), out.size());
  return out;
}

}  // namespace detail

Digest16 md5(ByteSpan data) {
  Digest16 out;
  digest_into(md_md5(), {data}, out.data());
  return out;
}

Digest64 sha512(ByteSpan a, ByteSpan b) {
  Digest64 out;
  digest_into(md_sha512(), {a, b}, out.data());
  return out;
}

Digest16 hmac_md5(ByteSpan key, ByteSpan data) { return detail::hmac_md5_parts(key, {data}); }
Digest32 hmac_sha256(ByteSpan key, ByteSpan data) { return detail::hmac_sha256_parts(key, {data}); }

// SP 800-108 5.1 counter mode: K(i) = PRF(Ki, [i]_2 || Label || 0x00 ||
// Context || [L]_2) with 32-bit big-endian i and L. MS-SMB2 3.1.4.2 uses it
// with HMAC-SHA256; the 0x00 separator is SP 800-108's, in addition to the
// NUL that ends each MS-SMB2 label.
Bytes kdf_counter_hmac_sha256(ByteSpan key, ByteSpan label, ByteSpan context, uint32_t length_bits) {
  size_t want = length_bits / 8;
  Bytes out;
  out.reserve(want + 32);
  uint8_t len_be[4] = {uint8_t(length_bits >> 24), uint8_t(length_bits >> 16), uint8_t(length_bits >> 8),
                       uint8_t(length_bits)};
  static const uint8_t kSeparator = 0;
  for (uint32_t i = 1; out.size() < want; ++i) {
    uint8_t i_be[4] = {uint8_t(i >> 24), uint8_t(i >> 16), uint8_t(i >> 8), uint8_t(i)};
    Digest32 k = detail::hmac_sha256_parts(key, {i_be, label, {&kSeparator, 1}, context, len_be});
    out.insert(out.end(), k.begin(), k.end());
  }
  out.resize(want);
  return out;
}

void random_bytes(std::span<uint8_t> out) {
  if (out.empty()) return;
  if (RAND_bytes(out.data(), int(out.size())) != 1) crypto_abort();
}

bool equal_ct(ByteSpan a, ByteSpan b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace ringsmb::crypto
