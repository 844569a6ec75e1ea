// Private to daemon/crypto: MACs over a message given as several pieces, so
// SMB2 signatures can be computed and checked without copying the message to
// zero its Signature field.
#pragma once

#include <openssl/types.h>

#include <initializer_list>

#include "crypto/primitives.hpp"

namespace ringsmb::crypto::detail {

// A failure here means the OpenSSL installation is broken (e.g. SHA-256
// missing); no caller can do anything sensible, so stop loudly.
[[noreturn]] void crypto_abort();
// OpenSSL's HMAC, fetched once: a fetch by name takes a provider lock and
// a name lookup each time.
EVP_MAC* hmac_mac();

Digest32 hmac_sha256_parts(ByteSpan key, std::initializer_list<ByteSpan> parts);
// The same for a key that signs many messages (SMB 2.x signing): its
// context stays in this thread's table (crypto/keyed_contexts.hpp).
Digest32 hmac_sha256_signing_parts(ByteSpan key, std::initializer_list<ByteSpan> parts);
Digest16 hmac_md5_parts(ByteSpan key, std::initializer_list<ByteSpan> parts);
// key 16 bytes (AES-128-CBC based CMAC). This one and GMAC keep each key's
// context in this thread's table (crypto/keyed_macs.cpp).
Digest16 aes128_cmac_parts(ByteSpan key, std::initializer_list<ByteSpan> parts);
// AES-128-GMAC; nonce 12 bytes.
Digest16 aes128_gmac_parts(ByteSpan key, ByteSpan nonce12, std::initializer_list<ByteSpan> parts);

}  // namespace ringsmb::crypto::detail
