// The MACs that sign SMB2 messages (MS-SMB2 3.1.4.1), each with its key's
// context from this thread's table (crypto/keyed_contexts.hpp): a message
// resets the context instead of making one.
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "crypto/keyed_contexts.hpp"
#include "crypto/mac_parts.hpp"

namespace ringsmb::crypto::detail {
namespace {

// AES-CMAC (RFC 4493) over AES-128-CBC. CMAC is CBC-MAC whose last block
// is first XORed with a subkey, so the CBC chaining value after every
// block but the last is the CMAC state. OpenSSL 3.0's CMAC makes one
// cipher call per 16-byte block; CBC over many blocks per call is the same
// AES work without that overhead. The ciphertext itself is not needed: it
// goes to a small scratch buffer that stays in the L1 cache.
class CmacRun {
 public:
  explicit CmacRun(KeyedContext& kc) : kc_(kc) {
    static const uint8_t kZeroIv[16] = {};
    ok_ = EVP_EncryptInit_ex2(kc_.cipher, nullptr, nullptr, kZeroIv, nullptr) == 1;
  }
  void update(ByteSpan data);
  bool finish(Digest16& tag);

 private:
  void cbc(const uint8_t* in, size_t size);  // SIZE a multiple of 16

  KeyedContext& kc_;
  bool ok_ = false;
  // The last block seen, complete or not: it is the last of the message
  // unless more data follows.
  uint8_t pending_[16] = {};
  size_t pending_size_ = 0;
};

void CmacRun::cbc(const uint8_t* in, size_t size) {
  constexpr size_t kScratchSize = 4096;
  thread_local std::array<uint8_t, kScratchSize> scratch;
  for (size_t off = 0; ok_ && off < size;) {
    size_t n = std::min(size - off, kScratchSize);
    int len = 0;
    ok_ = EVP_EncryptUpdate(kc_.cipher, scratch.data(), &len, in + off, int(n)) == 1 && size_t(len) == n;
    off += n;
  }
}

void CmacRun::update(ByteSpan data) {
  if (data.empty()) return;
  if (pending_size_ == 16) {  // more data: the pending block was not the last
    cbc(pending_, 16);
    pending_size_ = 0;
  }
  if (pending_size_ > 0) {
    size_t n = std::min(16 - pending_size_, data.size());
    std::memcpy(pending_ + pending_size_, data.data(), n);
    pending_size_ += n;
    data = data.subspan(n);
    if (data.empty()) return;
    cbc(pending_, 16);
    pending_size_ = 0;
  }
  // All complete blocks but the last 1-16 bytes, which stay pending.
  size_t bulk = (data.size() - 1) / 16 * 16;
  cbc(data.data(), bulk);
  pending_size_ = data.size() - bulk;
  std::memcpy(pending_, data.data() + bulk, pending_size_);
}

bool CmacRun::finish(Digest16& tag) {
  uint8_t last[16] = {};
  std::memcpy(last, pending_, pending_size_);
  const Digest16& subkey = pending_size_ == 16 ? kc_.cmac_k1 : kc_.cmac_k2;
  if (pending_size_ < 16) last[pending_size_] = 0x80;  // 10* padding
  for (size_t i = 0; i < 16; ++i) last[i] ^= subkey[i];
  int len = 0;
  ok_ = ok_ && EVP_EncryptUpdate(kc_.cipher, tag.data(), &len, last, 16) == 1 && len == 16;
  OPENSSL_cleanse(last, sizeof last);
  return ok_;
}

}  // namespace

Digest16 aes128_cmac_parts(ByteSpan key, std::initializer_list<ByteSpan> parts) {
  KeyedContext* kc = key.size() == 16 ? keyed_context(KeyUse::Cmac, key) : nullptr;
  if (!kc) crypto_abort();
  CmacRun run(*kc);
  for (ByteSpan p : parts) run.update(p);
  Digest16 tag;
  if (!run.finish(tag)) crypto_abort();
  return tag;
}

// GMAC is GCM with everything fed as additional authenticated data and no
// plaintext (NIST SP 800-38D); the tag is the MAC. The keyed context only
// takes the message's nonce.
Digest16 aes128_gmac_parts(ByteSpan key, ByteSpan nonce12, std::initializer_list<ByteSpan> parts) {
  KeyedContext* kc = key.size() == 16 && nonce12.size() == 12 ? keyed_context(KeyUse::Gmac, key) : nullptr;
  if (!kc) crypto_abort();
  EVP_CIPHER_CTX* ctx = kc->cipher;
  bool ok = EVP_EncryptInit_ex2(ctx, nullptr, nullptr, nonce12.data(), nullptr) == 1;
  int len = 0;
  for (ByteSpan p : parts) {
    for (size_t off = 0; ok && off < p.size();) {
      int n = int(std::min<size_t>(p.size() - off, 1 << 30));
      ok = EVP_EncryptUpdate(ctx, nullptr, &len, p.data() + off, n) == 1;
      off += size_t(n);
    }
  }
  uint8_t no_output[16];
  ok = ok && EVP_EncryptFinal_ex(ctx, no_output, &len) == 1;
  Digest16 out;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data()) == 1;
  if (!ok) crypto_abort();
  return out;
}

Digest32 hmac_sha256_signing_parts(ByteSpan key, std::initializer_list<ByteSpan> parts) {
  KeyedContext* kc = keyed_context(KeyUse::HmacSha256, key);
  if (!kc) return hmac_sha256_parts(key, parts);  // a key longer than the table keeps
  // A null key restarts HMAC with the key it has.
  bool ok = EVP_MAC_init(kc->mac, nullptr, 0, nullptr) == 1;
  for (ByteSpan p : parts) ok = ok && EVP_MAC_update(kc->mac, p.data(), p.size()) == 1;
  Digest32 out;
  size_t got = 0;
  ok = ok && EVP_MAC_final(kc->mac, out.data(), &got, out.size()) == 1 && got == out.size();
  if (!ok) crypto_abort();
  return out;
}

}  // namespace ringsmb::crypto::detail
