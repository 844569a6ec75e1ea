// MS-SMB2 3.1.4.1 (signing), 3.1.4.2 (key derivation), 3.1.4.3 and 2.2.41
// (encryption with the TRANSFORM_HEADER).
#include "crypto/smb2_keys.hpp"

#include <algorithm>
#include <cstring>

#include "crypto/keyed_contexts.hpp"
#include "crypto/mac_parts.hpp"

namespace ringsmb::crypto {
namespace {

// SMB2 header (MS-SMB2 2.2.1) offsets used here.
constexpr size_t kHeaderSize = 64;
constexpr size_t kCommandOffset = 12;
constexpr size_t kFlagsOffset = 16;
constexpr size_t kMessageIdOffset = 24;
constexpr size_t kSignatureOffset = 48;
constexpr uint32_t kFlagServerToRedir = 0x00000001;
constexpr uint32_t kFlagSigned = 0x00000008;
constexpr uint16_t kCommandCancel = 0x000C;

// Labels exactly as MS-SMB2 3.1.4.2 / 3.3.5.5.3 give them, NUL included.
template <size_t N>
ByteSpan lit(const char (&s)[N]) {
  return {reinterpret_cast<const uint8_t*>(s), N};  // N counts the terminating NUL
}

Bytes kdf(ByteSpan key, ByteSpan label, ByteSpan context, uint32_t bits) {
  return kdf_counter_hmac_sha256(key, label, context, bits);
}

// AES-GMAC nonce (MS-SMB2 3.1.4.1): MessageId, then a 32-bit field whose
// bit 0 says the sender is the server and bit 1 that this is a CANCEL (a
// CANCEL reuses the MessageId of the request it cancels, so without the bit
// two different messages would share a nonce).
std::array<uint8_t, 12> gmac_nonce(ByteSpan message) {
  std::array<uint8_t, 12> nonce{};
  std::memcpy(nonce.data(), message.data() + kMessageIdOffset, 8);
  uint32_t flags = load_le32(message.data() + kFlagsOffset);
  uint16_t command = load_le16(message.data() + kCommandOffset);
  uint32_t extra = 0;
  if (flags & kFlagServerToRedir) extra |= 1;
  if (command == kCommandCancel) extra |= 2;
  store_le32(nonce.data() + 8, extra);
  return nonce;
}

// The signature of `message`, then `trailing`, as if its Signature field were zero.
std::array<uint8_t, 16> compute_signature(SigningAlgorithm alg, ByteSpan key, ByteSpan message, ByteSpan trailing) {
  static const uint8_t kZeros[16] = {};
  ByteSpan head = message.first(kSignatureOffset);
  ByteSpan tail = message.subspan(kHeaderSize);
  std::array<uint8_t, 16> sig{};
  switch (alg) {
    case SigningAlgorithm::HmacSha256: {
      Digest32 full = detail::hmac_sha256_signing_parts(key, {head, kZeros, tail, trailing});
      std::copy_n(full.begin(), 16, sig.begin());  // MS-SMB2: the first 16 bytes
      break;
    }
    case SigningAlgorithm::AesCmac:
      sig = detail::aes128_cmac_parts(key, {head, kZeros, tail, trailing});
      break;
    case SigningAlgorithm::AesGmac: {
      auto nonce = gmac_nonce(message);
      sig = detail::aes128_gmac_parts(key, nonce, {head, kZeros, tail, trailing});
      break;
    }
  }
  return sig;
}

bool signing_key_ok(SigningAlgorithm alg, ByteSpan key) {
  // HMAC takes any key; the AES algorithms need exactly 128 bits.
  return alg == SigningAlgorithm::HmacSha256 ? !key.empty() : key.size() == 16;
}

}  // namespace

SessionKeys derive_session_keys(uint16_t dialect, ByteSpan session_base_key, ByteSpan preauth_hash,
                                std::optional<Aead> cipher) {
  SessionKeys keys;
  // Session.SessionKey is the first 16 bytes of the GSS key, right-padded
  // with zeros if shorter (MS-SMB2 3.3.5.5.3).
  keys.session_key.assign(16, 0);
  std::copy_n(session_base_key.begin(), std::min<size_t>(16, session_base_key.size()), keys.session_key.begin());

  if (dialect < 0x0300) {
    // SMB 2.x signs with the session key itself and has no encryption;
    // the application key is the session key too.
    keys.signing_key = keys.session_key;
    keys.application_key = keys.session_key;
    return keys;
  }

  // AES-256 ciphers derive 256-bit keys from the full (untruncated) key.
  bool aes256 = cipher && aead_key_size(*cipher) == 32;
  ByteSpan enc_ki = aes256 ? session_base_key : ByteSpan(keys.session_key);
  uint32_t enc_bits = aes256 ? 256 : 128;

  if (dialect >= 0x0311) {
    keys.signing_key = kdf(keys.session_key, lit("SMBSigningKey"), preauth_hash, 128);
    keys.application_key = kdf(keys.session_key, lit("SMBAppKey"), preauth_hash, 128);
    keys.encryption_key = kdf(enc_ki, lit("SMBS2CCipherKey"), preauth_hash, enc_bits);
    keys.decryption_key = kdf(enc_ki, lit("SMBC2SCipherKey"), preauth_hash, enc_bits);
  } else {
    keys.signing_key = kdf(keys.session_key, lit("SMB2AESCMAC"), lit("SmbSign"), 128);
    keys.application_key = kdf(keys.session_key, lit("SMB2APP"), lit("SmbRpc"), 128);
    keys.encryption_key = kdf(enc_ki, lit("SMB2AESCCM"), lit("ServerOut"), enc_bits);
    keys.decryption_key = kdf(enc_ki, lit("SMB2AESCCM"), lit("ServerIn "), enc_bits);
  }
  return keys;
}

void sign_message(SigningAlgorithm alg, ByteSpan signing_key, std::span<uint8_t> message, ByteSpan trailing) {
  if (message.size() < kHeaderSize || !signing_key_ok(alg, signing_key)) return;
  store_le32(&message[kFlagsOffset], load_le32(&message[kFlagsOffset]) | kFlagSigned);
  auto sig = compute_signature(alg, signing_key, message, trailing);
  std::memcpy(&message[kSignatureOffset], sig.data(), sig.size());
}

bool verify_message(SigningAlgorithm alg, ByteSpan signing_key, ByteSpan message) {
  if (message.size() < kHeaderSize || !signing_key_ok(alg, signing_key)) return false;
  auto sig = compute_signature(alg, signing_key, message, {});
  return equal_ct(sig, message.subspan(kSignatureOffset, 16));
}

void forget_key(ByteSpan key) { detail::forget_key(key); }

void forget_keys(const SessionKeys& keys) {
  for (const Bytes* k : {&keys.signing_key, &keys.encryption_key, &keys.decryption_key}) detail::forget_key(*k);
}

}  // namespace ringsmb::crypto
