// state::Session: when a session ends, its keys' OpenSSL contexts leave the
// thread's table (crypto/keyed_contexts.hpp) instead of staying until other
// keys push them out.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "crypto/keyed_contexts.hpp"
#include "crypto/smb2_keys.hpp"
#include "state/session.hpp"

using namespace ringsmb;

namespace {

Bytes filled(size_t n, uint8_t v) { return Bytes(n, v); }

// A signed and an encrypted message with the session's keys, and a
// channel's own signing key: each key gets its context on this thread.
void use_keys(const state::Session& s) {
  Bytes message(64 + 100, 0x11);
  crypto::sign_message(crypto::SigningAlgorithm::AesGmac, s.keys.signing_key, message);
  crypto::sign_message(crypto::SigningAlgorithm::AesGmac, s.channels.back().signing_key, message);
  Bytes frame = crypto::encrypt_message(crypto::Aead::Aes128Gcm, s.keys.encryption_key, s.session_id, message);
  REQUIRE(!frame.empty());
  Bytes reply = crypto::encrypt_message(crypto::Aead::Aes128Gcm, s.keys.decryption_key, s.session_id, message);
  REQUIRE(crypto::decrypt_message(crypto::Aead::Aes128Gcm, s.keys.decryption_key, reply));
}

}  // namespace

TEST_CASE("a session's end frees its keys' contexts on the thread", "[state]") {
  auto s = std::make_unique<state::Session>();
  s->session_id = 0x4100000021ull;
  s->keys.signing_key = filled(16, 0xA1);
  s->keys.encryption_key = filled(16, 0xA2);
  s->keys.decryption_key = filled(16, 0xA3);
  s->channels = {{1, s->keys.signing_key}, {2, filled(16, 0xA4)}};
  s->forget_keys_here();  // none of them from an earlier test
  size_t before = crypto::detail::live_keyed_contexts();
  use_keys(*s);
  // GMAC for both signing keys, a sealing context for the encryption key,
  // sealing and opening contexts for the decryption key.
  size_t used = std::min(before + 5, crypto::detail::kKeyedContextSlots);
  CHECK(crypto::detail::live_keyed_contexts() == used);
  state::Session other;
  other.keys.signing_key = filled(16, 0xB1);
  Bytes small = filled(64, 0);
  crypto::sign_message(crypto::SigningAlgorithm::AesGmac, other.keys.signing_key, small);
  s.reset();
  CHECK(crypto::detail::live_keyed_contexts() == std::min(used + 1, crypto::detail::kKeyedContextSlots) - 5);
}
