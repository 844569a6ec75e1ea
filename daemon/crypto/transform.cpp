// SMB2 TRANSFORM_HEADER (MS-SMB2 2.2.41) and message encryption (3.1.4.3).
//
//   0  ProtocolId 0xFD 'S' 'M' 'B'     20 Nonce (16)
//   4  Signature (16)                  36 OriginalMessageSize (4)
//                                      40 Reserved (2)   42 Flags (2)
//                                      44 SessionId (8)
// The AEAD's additional data is the header from Nonce to the end (32 bytes).
#include <array>
#include <cstring>

#include "crypto/plain_message.hpp"
#include "crypto/smb2_keys.hpp"

namespace ringsmb::crypto {
namespace {

constexpr size_t kSignatureOffset = 4;
constexpr size_t kNonceOffset = 20;
constexpr size_t kOriginalSizeOffset = 36;
constexpr size_t kReservedOffset = 40;
constexpr size_t kFlagsOffset = 42;
constexpr size_t kSessionIdOffset = 44;
constexpr uint16_t kFlagEncrypted = 0x0001;

ByteSpan aad_of(ByteSpan frame) { return frame.subspan(kNonceOffset, kTransformHeaderSize - kNonceOffset); }

}  // namespace

bool encrypt_in_place(Aead alg, ByteSpan encryption_key, uint64_t session_id, std::span<uint8_t> frame,
                      std::span<uint8_t> trailing) {
  if (frame.size() < kTransformHeaderSize) return false;
  uint64_t plain_size = uint64_t(frame.size() - kTransformHeaderSize) + trailing.size();
  if (plain_size > UINT32_MAX || (!trailing.empty() && !encrypts_in_pieces(alg))) return false;
  uint8_t* h = frame.data();
  store_le32(h, kTransformProtocolId);
  std::memset(h + kSignatureOffset, 0, 16);  // the tag, filled in below
  // A random nonce: MS-SMB2 only asks that it is never reused in a session.
  // The unused tail of the 16-byte field stays zero.
  std::memset(h + kNonceOffset, 0, 16);
  std::span<uint8_t> nonce(h + kNonceOffset, aead_nonce_size(alg));
  random_bytes(nonce);
  store_le32(h + kOriginalSizeOffset, uint32_t(plain_size));
  store_le16(h + kReservedOffset, 0);
  store_le16(h + kFlagsOffset, kFlagEncrypted);
  store_le64(h + kSessionIdOffset, session_id);
  std::span<uint8_t> body = frame.subspan(kTransformHeaderSize);
  std::span<uint8_t, 16> tag(h + kSignatureOffset, 16);
  // The tag is written straight into the header, which is not part of the AAD.
  return aead_encrypt(alg, encryption_key, nonce, aad_of(frame), body, tag, trailing);
}

Bytes encrypt_message(Aead alg, ByteSpan encryption_key, uint64_t session_id, ByteSpan plaintext) {
  if (plaintext.size() > UINT32_MAX) return {};
  Bytes out;
  out.reserve(kTransformHeaderSize + plaintext.size());
  out.resize(kTransformHeaderSize);  // the header, written by encrypt_in_place
  out.insert(out.end(), plaintext.begin(), plaintext.end());
  if (!encrypt_in_place(alg, encryption_key, session_id, out)) return {};
  return out;
}

std::optional<TransformHeader> parse_transform_header(ByteSpan frame) {
  ByteReader r(frame);
  if (r.u32() != kTransformProtocolId) return std::nullopt;
  TransformHeader h;
  ByteSpan sig = r.bytes(16);
  ByteSpan nonce = r.bytes(16);
  h.original_message_size = r.u32();
  r.u16();  // Reserved
  h.flags = r.u16();
  h.session_id = r.u64();
  if (!r.ok()) return std::nullopt;
  std::memcpy(h.signature.data(), sig.data(), 16);
  std::memcpy(h.nonce.data(), nonce.data(), 16);
  return h;
}

namespace {

// The header of an encrypted frame whose ciphertext is exactly
// OriginalMessageSize bytes (anything else is truncation, or trailing data
// the tag does not cover); nullopt otherwise.
std::optional<TransformHeader> checked_header(ByteSpan frame) {
  auto h = parse_transform_header(frame);
  if (!h || h->flags != kFlagEncrypted) return std::nullopt;
  if (h->original_message_size == 0 || h->original_message_size != frame.size() - kTransformHeaderSize)
    return std::nullopt;
  return h;
}

// Decrypts FRAME (checked_header's) from the frame into OUT in one pass (a
// copy, then an in-place decryption, went over the data twice).
bool decrypt_into(Aead alg, ByteSpan decryption_key, const TransformHeader& h, ByteSpan frame,
                  std::span<uint8_t> out) {
  ByteSpan nonce = ByteSpan(h.nonce).first(aead_nonce_size(alg));
  std::span<const uint8_t, 16> tag(h.signature.data(), 16);
  return aead_decrypt(alg, decryption_key, nonce, aad_of(frame), frame.subspan(kTransformHeaderSize), out, tag);
}

}  // namespace

std::optional<Bytes> decrypt_message(Aead alg, ByteSpan decryption_key, ByteSpan frame) {
  auto h = checked_header(frame);
  if (!h) return std::nullopt;
  Bytes plain(h->original_message_size);
  if (!decrypt_into(alg, decryption_key, *h, frame, plain)) return std::nullopt;
  return plain;
}

std::optional<std::span<uint8_t>> decrypt_in_place(Aead alg, ByteSpan decryption_key, std::span<uint8_t> frame) {
  auto h = checked_header(frame);
  if (!h) return std::nullopt;
  std::span<uint8_t> body = frame.subspan(kTransformHeaderSize);
  if (!decrypt_into(alg, decryption_key, *h, frame, body)) return std::nullopt;
  return body;
}

bool reseal_in_place(Aead alg, ByteSpan decryption_key, std::span<uint8_t> frame) {
  auto h = checked_header(frame);
  if (!h) return false;
  ByteSpan nonce = ByteSpan(h->nonce).first(aead_nonce_size(alg));
  std::array<uint8_t, 16> tag{};
  return aead_encrypt(alg, decryption_key, nonce, aad_of(frame), frame.subspan(kTransformHeaderSize), tag) &&
         equal_ct(tag, h->signature);
}

std::optional<PlainMessage> decrypt_message_unzeroed(Aead alg, ByteSpan decryption_key, ByteSpan frame) {
  auto h = checked_header(frame);
  if (!h) return std::nullopt;
  PlainMessage plain{LargeBuffer::allocate(h->original_message_size), h->original_message_size};
  if (!decrypt_into(alg, decryption_key, *h, frame, {plain.data.get(), plain.size})) return std::nullopt;
  return plain;
}

}  // namespace ringsmb::crypto
