// AES-CCM and AES-GCM (MS-SMB2 3.1.4.3) through OpenSSL's EVP_CIPHER, with
// each key's context kept in this thread's table (crypto/keyed_contexts.hpp):
// a message sets only its nonce, not the key schedule and GCM's tables.
#include <openssl/evp.h>

#include <climits>

#include "crypto/keyed_contexts.hpp"
#include "crypto/primitives.hpp"

namespace ringsmb::crypto {
namespace {

bool is_ccm(Aead alg) { return alg == Aead::Aes128Ccm || alg == Aead::Aes256Ccm; }

bool sizes_ok(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, size_t data_size) {
  return key.size() == aead_key_size(alg) && nonce.size() == aead_nonce_size(alg) && aad.size() <= INT_MAX &&
         data_size <= INT_MAX;
}

// The key's context (crypto/keyed_contexts.hpp), set up for one message:
// the nonce; for CCM the expected tag (decryption) and the total data
// length before any AAD (RFC 3610 puts it into block B0); the AAD.
EVP_CIPHER_CTX* start(Aead alg, bool encrypt, ByteSpan key, ByteSpan nonce, ByteSpan aad, size_t data_size,
                      const uint8_t* expected_tag) {
  auto use = encrypt ? detail::KeyUse::AeadSeal : detail::KeyUse::AeadOpen;
  detail::KeyedContext* kc = detail::keyed_context(use, key, alg);
  EVP_CIPHER_CTX* ctx = kc ? kc->cipher : nullptr;
  bool ok = ctx && EVP_CipherInit_ex2(ctx, nullptr, nullptr, nonce.data(), encrypt ? 1 : 0, nullptr) == 1;
  if (is_ccm(alg) && !encrypt) {
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<uint8_t*>(expected_tag)) == 1;
  }
  int len = 0;
  if (is_ccm(alg)) ok = ok && EVP_CipherUpdate(ctx, nullptr, &len, nullptr, int(data_size)) == 1;
  if (!aad.empty()) ok = ok && EVP_CipherUpdate(ctx, nullptr, &len, aad.data(), int(aad.size())) == 1;
  return ok ? ctx : nullptr;
}

// The data pass, from `in` to `out` (the same buffer, or another of the
// same size: one pass copies and transforms). A null pointer would tell
// OpenSSL's CCM "this is the length-setting call" and skip the tag check, so
// an empty message still passes a real (dummy) buffer.
bool update_data(EVP_CIPHER_CTX* ctx, ByteSpan in, std::span<uint8_t> out) {
  uint8_t dummy[1];
  uint8_t* o = out.empty() ? dummy : out.data();
  const uint8_t* i = in.empty() ? dummy : in.data();
  int len = 0;
  return EVP_CipherUpdate(ctx, o, &len, i, int(in.size())) == 1;
}

}  // namespace

bool aead_encrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, std::span<uint8_t> data,
                  std::span<uint8_t, 16> tag, std::span<uint8_t> more) {
  // OpenSSL's CCM takes the plaintext in one update call.
  if (!more.empty() && is_ccm(alg)) return false;
  if (!sizes_ok(alg, key, nonce, aad, data.size() + more.size())) return false;
  EVP_CIPHER_CTX* ctx = start(alg, true, key, nonce, aad, data.size(), nullptr);
  if (!ctx) return false;
  int len = 0;
  bool ok = update_data(ctx, data, data);
  if (!more.empty()) ok = ok && update_data(ctx, more, more);
  uint8_t final_block[16];
  ok = ok && EVP_CipherFinal_ex(ctx, final_block, &len) == 1;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag.data()) == 1;
  return ok;
}

bool aead_decrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, std::span<uint8_t> data,
                  std::span<const uint8_t, 16> tag) {
  return aead_decrypt(alg, key, nonce, aad, data, data, tag);
}

bool aead_decrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, ByteSpan in, std::span<uint8_t> out,
                  std::span<const uint8_t, 16> tag) {
  if (in.size() != out.size() || !sizes_ok(alg, key, nonce, aad, in.size())) return false;
  EVP_CIPHER_CTX* ctx = start(alg, false, key, nonce, aad, in.size(), tag.data());
  if (!ctx) return false;
  int len = 0;
  // CCM verifies the tag inside the (single) update call; GCM in the final step.
  bool ok = update_data(ctx, in, out);
  if (!is_ccm(alg)) {
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<uint8_t*>(tag.data())) == 1;
    uint8_t final_block[16];
    ok = ok && EVP_CipherFinal_ex(ctx, final_block, &len) == 1;
  }
  return ok;
}

}  // namespace ringsmb::crypto
