// This thread's keyed OpenSSL contexts (crypto/keyed_contexts.hpp).
#include "crypto/keyed_contexts.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>

#include <array>
#include <cstring>

#include "crypto/mac_parts.hpp"

namespace ringsmb::crypto::detail {
namespace {

// Fetched once: an implicit fetch by name takes a provider lock and a
// name lookup each time.
const EVP_CIPHER* aes128_cbc() {
  static EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, "AES-128-CBC", nullptr);
  return c;
}
const EVP_CIPHER* aes128_gcm() {
  static EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
  return c;
}
const EVP_CIPHER* aead_cipher(Aead alg) {
  static EVP_CIPHER* ccm128 = EVP_CIPHER_fetch(nullptr, "AES-128-CCM", nullptr);
  static EVP_CIPHER* ccm256 = EVP_CIPHER_fetch(nullptr, "AES-256-CCM", nullptr);
  static EVP_CIPHER* gcm256 = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  switch (alg) {
    case Aead::Aes128Ccm: return ccm128;
    case Aead::Aes128Gcm: return aes128_gcm();
    case Aead::Aes256Ccm: return ccm256;
    case Aead::Aes256Gcm: return gcm256;
  }
  return nullptr;
}

// RFC 4493 2.3: doubling in GF(2^128), big-endian.
Digest16 cmac_double(const Digest16& in) {
  Digest16 out;
  for (size_t i = 0; i < 16; ++i) out[i] = uint8_t((in[i] << 1) | (i + 1 < 16 ? in[i + 1] >> 7 : 0));
  if (in[0] & 0x80) out[15] ^= 0x87;
  return out;
}

// AES-128-CBC with KEY and a zero IV, and CMAC's subkeys from L = AES(KEY, 0^128).
bool key_cmac(KeyedContext& kc, ByteSpan key, bool fresh) {
  static const uint8_t kZeros[16] = {};
  if (key.size() != 16) return false;
  EVP_CIPHER_CTX* ctx = kc.cipher;
  bool ok = EVP_EncryptInit_ex2(ctx, fresh ? aes128_cbc() : nullptr, key.data(), kZeros, nullptr) == 1 &&
            EVP_CIPHER_CTX_set_padding(ctx, 0) == 1;
  Digest16 l{};
  int len = 0;
  ok = ok && EVP_EncryptUpdate(ctx, l.data(), &len, kZeros, 16) == 1 && len == 16;
  kc.cmac_k1 = cmac_double(l);
  kc.cmac_k2 = cmac_double(kc.cmac_k1);
  OPENSSL_cleanse(l.data(), l.size());
  return ok;
}

bool key_gmac(KeyedContext& kc, ByteSpan key, bool fresh) {
  return key.size() == 16 &&
         EVP_EncryptInit_ex2(kc.cipher, fresh ? aes128_gcm() : nullptr, key.data(), nullptr, nullptr) == 1;
}

// The AEAD with KEY, encrypting (ENC 1) or decrypting; CCM's nonce and tag
// lengths go in before the key (OpenSSL builds its CCM state from them, and
// from the direction, when the key is set).
bool key_aead(KeyedContext& kc, ByteSpan key, Aead alg, int enc, bool fresh) {
  EVP_CIPHER_CTX* ctx = kc.cipher;
  if (key.size() != aead_key_size(alg)) return false;
  if (!fresh) return EVP_CipherInit_ex2(ctx, nullptr, key.data(), nullptr, enc, nullptr) == 1;
  bool ccm = alg == Aead::Aes128Ccm || alg == Aead::Aes256Ccm;
  bool ok = EVP_CipherInit_ex2(ctx, aead_cipher(alg), nullptr, nullptr, enc, nullptr) == 1;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, int(aead_nonce_size(alg)), nullptr) == 1;
  if (ccm) ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, nullptr) == 1;
  return ok && EVP_CipherInit_ex2(ctx, nullptr, key.data(), nullptr, enc, nullptr) == 1;
}

bool is_aead(KeyUse u) { return u == KeyUse::AeadSeal || u == KeyUse::AeadOpen; }

bool key_hmac(KeyedContext& kc, ByteSpan key, bool fresh) {
  if (key.empty()) return false;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_end(),
  };
  return EVP_MAC_init(kc.mac, key.data(), key.size(), fresh ? params : nullptr) == 1;
}

struct Slot {
  bool live = false;
  KeyUse use = KeyUse::Cmac;
  Aead alg = Aead::Aes128Gcm;
  uint8_t key_size = 0;
  std::array<uint8_t, 32> key{};
  uint64_t last_use = 0;
  KeyedContext ctx;

  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() { release(); }

  bool holds(KeyUse u, Aead a, ByteSpan k) const {
    return live && use == u && (!is_aead(u) || alg == a) && key_size == k.size() &&
           std::memcmp(key.data(), k.data(), k.size()) == 0;
  }
  // Whether the context (live or not) is of the kind USE/A, so it can be re-keyed.
  bool same_kind(KeyUse u, Aead a) const {
    return (ctx.cipher || ctx.mac) && use == u && (!is_aead(u) || alg == a);
  }
  void release() {
    EVP_CIPHER_CTX_free(ctx.cipher);
    EVP_MAC_CTX_free(ctx.mac);
    OPENSSL_cleanse(&ctx, sizeof ctx);
    ctx = {};
    OPENSSL_cleanse(key.data(), key.size());
    live = false;
  }
  bool take(KeyUse u, Aead a, ByteSpan k);
};

// Makes this slot hold K for U/A: re-keys its context when it is of that
// kind, otherwise frees it and makes one.
bool Slot::take(KeyUse u, Aead a, ByteSpan k) {
  bool fresh = !same_kind(u, a);
  if (fresh) {
    release();
    if (u == KeyUse::HmacSha256)
      ctx.mac = hmac_mac() ? EVP_MAC_CTX_new(hmac_mac()) : nullptr;
    else
      ctx.cipher = EVP_CIPHER_CTX_new();
    if (!ctx.mac && !ctx.cipher) return false;
  }
  live = false;
  use = u;
  alg = a;
  bool ok = false;
  switch (u) {
    case KeyUse::Cmac: ok = key_cmac(ctx, k, fresh); break;
    case KeyUse::Gmac: ok = key_gmac(ctx, k, fresh); break;
    case KeyUse::HmacSha256: ok = key_hmac(ctx, k, fresh); break;
    case KeyUse::AeadSeal: ok = key_aead(ctx, k, a, 1, fresh); break;
    case KeyUse::AeadOpen: ok = key_aead(ctx, k, a, 0, fresh); break;
  }
  if (!ok) {
    release();
    return false;
  }
  key_size = uint8_t(k.size());
  std::memcpy(key.data(), k.data(), k.size());
  live = true;
  return true;
}

struct Table {
  std::array<Slot, kKeyedContextSlots> slots;
  uint64_t clock = 0;
};

// Freed when the thread ends (for the main thread before OpenSSL's own
// atexit cleanup: glibc runs thread-local destructors first).
thread_local Table t_table;

}  // namespace

KeyedContext* keyed_context(KeyUse use, ByteSpan key, Aead alg) {
  if (key.size() > 32) return nullptr;
  Table& table = t_table;
  Slot* victim = &table.slots[0];
  for (Slot& s : table.slots) {
    if (s.holds(use, alg, key)) {
      s.last_use = ++table.clock;
      return &s.ctx;
    }
    if (!victim->live) continue;
    if (!s.live || s.last_use < victim->last_use) victim = &s;
  }
  if (!victim->take(use, alg, key)) return nullptr;
  victim->last_use = ++table.clock;
  return &victim->ctx;
}

size_t live_keyed_contexts() {
  size_t n = 0;
  for (const Slot& s : t_table.slots) n += s.live ? 1 : 0;
  return n;
}

void forget_key(ByteSpan key) {
  if (key.empty()) return;
  for (Slot& s : t_table.slots)
    if (s.live && s.key_size == key.size() && CRYPTO_memcmp(s.key.data(), key.data(), key.size()) == 0) s.release();
}

}  // namespace ringsmb::crypto::detail
