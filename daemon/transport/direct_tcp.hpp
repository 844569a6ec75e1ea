// Direct TCP transport framing (MS-SMB2 2.1): every SMB2 message goes out
// behind a 4-byte header, a zero byte and the message length in 24 bits
// big-endian. The only place that writes it (FrameAssembler::frame_length
// reads it).
#pragma once

#include "smb2/engine/conn_state.hpp"

namespace ringsmb::transport {

class DirectTcpFraming final : public smb2::MessageFraming {
 public:
  static constexpr size_t kHeaderSize = 4;
  size_t open(Bytes& out) const override {
    // An insert: resize would zero-fill through an out-of-line call.
    static constexpr uint8_t kZeros[kHeaderSize] = {};
    out.insert(out.end(), kZeros, kZeros + kHeaderSize);
    return out.size();
  }
  void close(Bytes& out, size_t start, size_t file_bytes) const override {
    size_t len = out.size() - start + file_bytes;
    uint8_t* h = out.data() + start - kHeaderSize;
    h[0] = 0;
    h[1] = uint8_t(len >> 16);
    h[2] = uint8_t(len >> 8);
    h[3] = uint8_t(len);
  }
  void discard(Bytes& out, size_t start) const override { out.resize(start - kHeaderSize); }
};

// The one instance every connection uses.
inline const DirectTcpFraming& direct_tcp_framing() {
  static const DirectTcpFraming framing;
  return framing;
}

}  // namespace ringsmb::transport
