// A decrypted SMB2 message in a buffer that is not zeroed first: the
// decryption writes every byte of it. The server's receive path uses it
// (smb2/engine/processor.cpp): for a 1 MiB encrypted WRITE the zero fill of a
// Bytes was one more pass over the data, and the buffer can be handed to a
// WRITE whose pwrite runs after the frame (smb2/engine/async_write.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/bytes.hpp"
#include "common/large_buffer.hpp"
#include "crypto/primitives.hpp"

namespace ringsmb::crypto {

struct PlainMessage {
  LargeBuffer data;  // a large one comes from, and goes back to, the frame buffer cache
  size_t size = 0;
  ByteSpan span() const { return {data.get(), size}; }
};

// As decrypt_message() (crypto/smb2_keys.hpp), into a PlainMessage.
std::optional<PlainMessage> decrypt_message_unzeroed(Aead alg, ByteSpan decryption_key, ByteSpan frame);

}  // namespace ringsmb::crypto
