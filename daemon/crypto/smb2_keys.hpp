// SMB 2.x/3.x signing, key derivation and encryption (MS-SMB2 3.1.4.1 - 3.1.4.3,
// 2.2.41 transform header).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "common/bytes.hpp"
#include "crypto/primitives.hpp"

namespace ringsmb::crypto {

enum class SigningAlgorithm : uint16_t { HmacSha256 = 0, AesCmac = 1, AesGmac = 2 };

// Keys of one session, derived once at SESSION_SETUP success.
struct SessionKeys {
  Bytes session_key;      // the (possibly truncated) session key, 16 bytes
  Bytes signing_key;      // 16 bytes
  Bytes encryption_key;   // server->client ("ServerOut"), 16 or 32 bytes
  Bytes decryption_key;   // client->server ("ServerIn"), 16 or 32 bytes
  Bytes application_key;  // 16 bytes
};

// dialect: 0x0202, 0x0210, 0x0300, 0x0302, 0x0311. For 3.1.1 `preauth_hash`
// is the session's 64-byte preauth integrity hash; `cipher` picks the
// encryption key length (32 bytes for AES-256 ciphers).
SessionKeys derive_session_keys(uint16_t dialect, ByteSpan session_base_key, ByteSpan preauth_hash,
                                std::optional<Aead> cipher);

// Signs one SMB2 message (header + body, no transport framing) in place:
// sets SMB2_FLAGS_SIGNED, zeroes the 16-byte Signature field, computes the
// signature with the algorithm, writes it. TRAILING is the rest of the
// message when it is not in the same buffer (the data of a READ response
// that is sent from a buffer of its own).
void sign_message(SigningAlgorithm alg, ByteSpan signing_key, std::span<uint8_t> message, ByteSpan trailing = {});
// Verifies one SMB2 message's signature without modifying it.
bool verify_message(SigningAlgorithm alg, ByteSpan signing_key, ByteSpan message);

// Frees the calling thread's OpenSSL contexts of KEY (a signing key, or
// either cipher key), whatever they were set up for: each thread keeps a
// keyed context per key it signs, seals or checks with (a table of a few
// dozen). Called where a session ends, and where a connection leaves a
// worker thread; a later message with the key sets its context up again.
void forget_key(ByteSpan key);
// The same for each key of KEYS.
void forget_keys(const SessionKeys& keys);

inline constexpr size_t kTransformHeaderSize = 52;
inline constexpr uint32_t kTransformProtocolId = 0x424D53FD;  // 0xFD 'S' 'M' 'B'

// Builds TRANSFORM_HEADER + ciphertext of `plaintext` (one or more SMB2
// messages, a compound chain) for the session. Nonce is random (MS-SMB2
// 3.1.4.3 allows any unique nonce).
Bytes encrypt_message(Aead alg, ByteSpan encryption_key, uint64_t session_id, ByteSpan plaintext);
// The same in place: `frame` is kTransformHeaderSize bytes of room for the
// header, then the plaintext, which becomes the ciphertext. The sender that
// reserves the room up front encrypts a reply where it was written, with no
// copy. False on an internal error or a message too large for the header.
// TRAILING, the rest of the plaintext in a buffer of its own (the data of a
// READ response), is encrypted in place too; only AES-GCM takes it (CCM
// needs the plaintext in one piece): false for CCM with TRAILING.
bool encrypt_in_place(Aead alg, ByteSpan encryption_key, uint64_t session_id, std::span<uint8_t> frame,
                      std::span<uint8_t> trailing = {});
// Whether encrypt_in_place() takes a TRAILING part with ALG.
inline bool encrypts_in_pieces(Aead alg) { return alg == Aead::Aes128Gcm || alg == Aead::Aes256Gcm; }

struct TransformHeader {
  std::array<uint8_t, 16> signature;
  std::array<uint8_t, 16> nonce;
  uint32_t original_message_size;
  uint16_t flags;  // 0x0001 Encrypted
  uint64_t session_id;
};
// Parses the 52-byte header; nullopt if short or not a transform header.
std::optional<TransformHeader> parse_transform_header(ByteSpan frame);
// Decrypts a whole transform frame in one pass from `frame` into the
// result; nullopt if the tag does not verify or sizes are inconsistent.
std::optional<Bytes> decrypt_message(Aead alg, ByteSpan decryption_key, ByteSpan frame);
// The same where the frame lies: the ciphertext after the header becomes
// the plaintext, which is returned (nullopt: the frame is not usable; its
// bytes after the header are then undefined).
std::optional<std::span<uint8_t>> decrypt_in_place(Aead alg, ByteSpan decryption_key, std::span<uint8_t> frame);
// Undoes decrypt_in_place(): encrypts the plaintext again with the header's
// nonce, which gives back the ciphertext and the tag the frame came with
// (checked: false if not), so the frame can be taken again as it came.
bool reseal_in_place(Aead alg, ByteSpan decryption_key, std::span<uint8_t> frame);

}  // namespace ringsmb::crypto
