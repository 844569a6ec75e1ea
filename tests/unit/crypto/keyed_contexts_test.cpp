// The per-key contexts (daemon/crypto/keyed_contexts.hpp) against
// OpenSSL with a fresh context per message: the same MACs and ciphertexts
// over any split of a message, for more keys than a thread keeps, with one
// key used by several algorithms, after a failed decryption, on two threads.
#include <catch2/catch.hpp>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "crypto/keyed_contexts.hpp"
#include "crypto/mac_parts.hpp"
#include "crypto/primitives.hpp"

using namespace ringsmb;
using namespace ringsmb::crypto;

namespace {

// OpenSSL's own CMAC (EVP_MAC "CMAC"), a context for the one message.
Digest16 reference_cmac(ByteSpan key, ByteSpan data) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "CMAC", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, const_cast<char*>("AES-128-CBC"), 0),
      OSSL_PARAM_construct_end(),
  };
  Digest16 out{};
  size_t got = 0;
  static const uint8_t kNone = 0;
  REQUIRE(EVP_MAC_init(ctx, key.data(), key.size(), params) == 1);
  REQUIRE(EVP_MAC_update(ctx, data.empty() ? &kNone : data.data(), data.size()) == 1);
  REQUIRE(EVP_MAC_final(ctx, out.data(), &got, out.size()) == 1);
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return out;
}

// GCM with the data as AAD and nothing to encrypt, a context for the message.
Digest16 reference_gmac(ByteSpan key, ByteSpan nonce, ByteSpan data) {
  EVP_CIPHER* gcm = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Digest16 out{};
  int len = 0;
  uint8_t none[16];
  REQUIRE(EVP_EncryptInit_ex2(ctx, gcm, key.data(), nonce.data(), nullptr) == 1);
  if (!data.empty()) REQUIRE(EVP_EncryptUpdate(ctx, nullptr, &len, data.data(), int(data.size())) == 1);
  REQUIRE(EVP_EncryptFinal_ex(ctx, none, &len) == 1);
  REQUIRE(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data()) == 1);
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(gcm);
  return out;
}

Bytes seeded_bytes(std::mt19937& rng, size_t size) {
  Bytes b(size);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

// DATA cut in three at random points (the signing paths pass a message in
// up to four pieces: header, zeroed signature, body, READ data).
struct Split {
  ByteSpan a, b, c;
};
Split split(std::mt19937& rng, ByteSpan data) {
  size_t x = data.empty() ? 0 : rng() % (data.size() + 1);
  size_t y = data.empty() ? 0 : x + rng() % (data.size() - x + 1);
  return {data.first(x), data.subspan(x, y - x), data.subspan(y)};
}

}  // namespace

TEST_CASE("keyed CMAC equals OpenSSL's CMAC for every length and split", "[crypto]") {
  std::mt19937 rng(1);
  Bytes key = seeded_bytes(rng, 16);
  for (size_t size = 0; size <= 130; ++size) {
    INFO(size);
    Bytes data = seeded_bytes(rng, size);
    Split s = split(rng, data);
    CHECK(detail::aes128_cmac_parts(key, {s.a, s.b, s.c}) == reference_cmac(key, data));
  }
  // Larger than the scratch buffer of the CBC pass, with an odd tail.
  Bytes big = seeded_bytes(rng, (1 << 20) + 5);
  Split s = split(rng, big);
  CHECK(detail::aes128_cmac_parts(key, {s.a, s.b, s.c}) == reference_cmac(key, big));
}

TEST_CASE("keyed GMAC and HMAC-SHA256 equal a fresh context's", "[crypto]") {
  std::mt19937 rng(2);
  Bytes key = seeded_bytes(rng, 16);
  for (size_t size : {size_t(0), size_t(1), size_t(64), size_t(65), size_t(1000), size_t(70000)}) {
    INFO(size);
    Bytes data = seeded_bytes(rng, size), nonce = seeded_bytes(rng, 12);
    Split s = split(rng, data);
    CHECK(detail::aes128_gmac_parts(key, nonce, {s.a, s.b, s.c}) == reference_gmac(key, nonce, data));
    CHECK(detail::hmac_sha256_signing_parts(key, {s.a, s.b, s.c}) == detail::hmac_sha256_parts(key, {data}));
  }
}

TEST_CASE("keyed contexts stay right with more keys than slots and one key in every use", "[crypto]") {
  std::mt19937 rng(3);
  std::vector<Bytes> keys;
  for (size_t i = 0; i < detail::kKeyedContextSlots + 7; ++i) keys.push_back(seeded_bytes(rng, 16));
  Bytes data = seeded_bytes(rng, 200), nonce = seeded_bytes(rng, 12), ccm_nonce = seeded_bytes(rng, 11);
  for (int round = 0; round < 3; ++round) {
    for (const Bytes& key : keys) {
      // The same key bytes as CMAC, GMAC, HMAC and two AEADs: each use its own context.
      CHECK(detail::aes128_cmac_parts(key, {data}) == reference_cmac(key, data));
      CHECK(detail::aes128_gmac_parts(key, nonce, {data}) == reference_gmac(key, nonce, data));
      CHECK(detail::hmac_sha256_signing_parts(key, {data}) == detail::hmac_sha256_parts(key, {data}));
      for (Aead alg : {Aead::Aes128Gcm, Aead::Aes128Ccm}) {
        Bytes n = alg == Aead::Aes128Gcm ? nonce : ccm_nonce;
        Bytes sealed = data;
        std::array<uint8_t, 16> tag{};
        REQUIRE(aead_encrypt(alg, key, n, {}, sealed, tag));
        CHECK(sealed != data);
        REQUIRE(aead_decrypt(alg, key, n, {}, sealed, tag));
        CHECK(sealed == data);
      }
    }
  }
}

TEST_CASE("a failed decryption leaves the key's context usable", "[crypto]") {
  std::mt19937 rng(4);
  for (Aead alg : {Aead::Aes128Ccm, Aead::Aes128Gcm, Aead::Aes256Ccm, Aead::Aes256Gcm}) {
    INFO(int(alg));
    Bytes key = seeded_bytes(rng, aead_key_size(alg)), nonce = seeded_bytes(rng, aead_nonce_size(alg));
    Bytes aad = seeded_bytes(rng, 32), plain = seeded_bytes(rng, 300);
    Bytes sealed = plain;
    std::array<uint8_t, 16> tag{};
    REQUIRE(aead_encrypt(alg, key, nonce, aad, sealed, tag));
    std::array<uint8_t, 16> bad_tag = tag;
    bad_tag[3] ^= 0x10;
    Bytes out(sealed.size());
    CHECK_FALSE(aead_decrypt(alg, key, nonce, aad, sealed, out, bad_tag));
    Bytes truncated(sealed.begin(), sealed.end() - 1), out2(truncated.size());
    CHECK_FALSE(aead_decrypt(alg, key, nonce, aad, truncated, out2, tag));
    REQUIRE(aead_decrypt(alg, key, nonce, aad, sealed, out, tag));
    CHECK(out == plain);
    // And it encrypts again, with the same result for the same nonce.
    Bytes again = plain;
    std::array<uint8_t, 16> tag2{};
    REQUIRE(aead_encrypt(alg, key, nonce, aad, again, tag2));
    CHECK(again == sealed);
    CHECK(tag2 == tag);
  }
}

TEST_CASE("two threads sign with the same key at once", "[crypto]") {
  std::mt19937 rng(5);
  Bytes key = seeded_bytes(rng, 16), data = seeded_bytes(rng, 4000), nonce = seeded_bytes(rng, 12);
  Digest16 cmac = reference_cmac(key, data), gmac = reference_gmac(key, nonce, data);
  std::atomic<int> wrong{0};
  auto work = [&] {
    for (int i = 0; i < 300; ++i) {
      if (detail::aes128_cmac_parts(key, {data}) != cmac) ++wrong;
      if (detail::aes128_gmac_parts(key, nonce, {data}) != gmac) ++wrong;
    }
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  CHECK(wrong == 0);
}

TEST_CASE("forget_key frees a key's contexts, and the key works again after", "[crypto]") {
  std::mt19937 rng(6);
  Bytes key = seeded_bytes(rng, 16), other = seeded_bytes(rng, 16), data = seeded_bytes(rng, 100);
  Bytes nonce = seeded_bytes(rng, 12);
  detail::forget_key(key);
  detail::forget_key(other);
  size_t before = detail::live_keyed_contexts();
  Digest16 cmac = detail::aes128_cmac_parts(key, {data});
  Digest16 gmac = detail::aes128_gmac_parts(key, nonce, {data});
  detail::aes128_cmac_parts(other, {data});
  CHECK(detail::live_keyed_contexts() == std::min(before + 3, detail::kKeyedContextSlots));
  detail::forget_key(key);  // both of its uses; OTHER stays
  CHECK(detail::live_keyed_contexts() == std::min(before + 3, detail::kKeyedContextSlots) - 2);
  CHECK(detail::aes128_cmac_parts(key, {data}) == cmac);
  CHECK(detail::aes128_gmac_parts(key, nonce, {data}) == gmac);
}
