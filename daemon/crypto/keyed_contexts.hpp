// Private to daemon/crypto: this thread's OpenSSL contexts, one per key.
//
// Making a context for a message (an allocation, the algorithm fetched by
// name, the AES key schedule, CMAC's subkeys, GCM's hash key table) cost
// more than the MAC of a small signed message itself. A worker signs,
// seals and checks with the keys of its connections' sessions; each key
// keeps its keyed context here from its first use, and a message only
// resets it (a new IV, or CMAC's zero chaining value). A table of a fixed
// number of slots: a key not used for the longest time gives its slot to a
// new one (re-keying the context where the kind matches, so a miss costs
// the key schedule, not an allocation).
//
// Per thread: a context is never shared between workers, and callers go on
// passing plain key bytes (a session's, or a copy of it in a ResponseSeal
// or the session registry), which find the same context.
#pragma once

#include <openssl/evp.h>

#include "crypto/primitives.hpp"

namespace ringsmb::crypto::detail {

enum class KeyUse : uint8_t {
  Cmac,        // AES-128-CBC (no padding), with the subkeys
  Gmac,        // AES-128-GCM
  HmacSha256,  // EVP_MAC HMAC with SHA-256
  // The Aead cipher passed along, with its nonce length set, for one
  // direction: OpenSSL's AES-NI CCM picks its encrypting or decrypting
  // block function when the key is set.
  AeadSeal,
  AeadOpen,
};

struct KeyedContext {
  EVP_CIPHER_CTX* cipher = nullptr;  // Cmac, Gmac, Aead
  EVP_MAC_CTX* mac = nullptr;        // HmacSha256
  Digest16 cmac_k1{};                // RFC 4493 2.3: for a complete last block
  Digest16 cmac_k2{};                // for a padded last block
};

// This thread's keyed context for KEY (at most 32 bytes) used as USE, with
// ALG's cipher for KeyUse::AeadSeal/AeadOpen. Its IV or state is whatever the last
// message left: the caller re-initialises it. Valid until this thread's
// next keyed_context() or forget_key() (another key may take the slot).
// Null if OpenSSL failed or the key is too long.
KeyedContext* keyed_context(KeyUse use, ByteSpan key, Aead alg = Aead::Aes128Gcm);

// How many keys one thread keeps contexts for.
inline constexpr size_t kKeyedContextSlots = 32;
// How many of this thread's slots hold a keyed context (for tests).
size_t live_keyed_contexts();

// Frees the calling thread's contexts for KEY, whatever they are for.
void forget_key(ByteSpan key);

}  // namespace ringsmb::crypto::detail
