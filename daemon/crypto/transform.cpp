// SMB2 TRANSFORM_HEADER (MS-SMB2 2.2.41) and message encryption (3.1.4.3).
//
//   0  ProtocolId 0xFD 'S' 'M' 'B'     20 Nonce (16)
//   4  Signature (16)                  36 OriginalMessageSize (4)
//                                      40 Reserved (2)   42 Flags (2)
//                                      44 SessionId (8)
// The AEAD's additional data is the header from Nonce to the end (32 bytes).
#include <cstring>

#include "crypto/smb2_keys.hpp"

namespace ringsmb::crypto {
namespace {

constexpr size_t kSignatureOffset = 4;
constexpr size_t kNonceOffset = 20;
constexpr uint16_t kFlagEncrypted = 0x0001;

ByteSpan aad_of(ByteSpan frame) { return frame.subspan(kNonceOffset, kTransformHeaderSize - kNonceOffset); }

}  // namespace

Bytes encrypt_message(Aead alg, ByteSpan encryption_key, uint64_t session_id, ByteSpan plaintext) {
  if (plaintext.size() > UINT32_MAX) return {};
  Bytes out;
  out.reserve(kTransformHeaderSize + plaintext.size());
  ByteWriter w(out);
  w.u32(kTransformProtocolId);
  w.zeros(16);  // Signature, filled in below
  // A random nonce: MS-SMB2 only asks that it is never reused in a session.
  // The unused tail of the 16-byte field stays zero.
  std::array<uint8_t, 16> nonce{};
  random_bytes(std::span(nonce).first(aead_nonce_size(alg)));
  w.bytes(nonce);
  w.u32(uint32_t(plaintext.size()));
  w.u16(0);  // Reserved
  w.u16(kFlagEncrypted);
  w.u64(session_id);
  w.bytes(plaintext);

  std::span<uint8_t> body(out.data() + kTransformHeaderSize, plaintext.size());
  std::span<uint8_t, 16> tag(out.data() + kSignatureOffset, 16);
  // The tag is written straight into the header, which is not part of the AAD.
  if (!aead_encrypt(alg, encryption_key, std::span(nonce).first(aead_nonce_size(alg)),
                    aad_of(out), body, tag)) {
    return {};
  }
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

std::optional<Bytes> decrypt_message(Aead alg, ByteSpan decryption_key, ByteSpan frame) {
  auto h = parse_transform_header(frame);
  if (!h || h->flags != kFlagEncrypted) return std::nullopt;
  // The ciphertext must be exactly OriginalMessageSize bytes: anything else
  // is either truncation or trailing data the tag does not cover.
  if (h->original_message_size == 0 || h->original_message_size != frame.size() - kTransformHeaderSize) {
    return std::nullopt;
  }
  Bytes plain(frame.begin() + kTransformHeaderSize, frame.end());
  ByteSpan nonce = ByteSpan(h->nonce).first(aead_nonce_size(alg));
  std::span<const uint8_t, 16> tag(h->signature.data(), 16);
  if (!aead_decrypt(alg, decryption_key, nonce, aad_of(frame), plain, tag)) return std::nullopt;
  return plain;
}

}  // namespace ringsmb::crypto
