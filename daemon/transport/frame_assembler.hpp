// Direct TCP transport framing (MS-SMB2 2.1): each SMB message is preceded
// by a zero byte and a 24-bit big-endian length. Bytes arrive in arbitrary
// pieces; the assembler hands out whole frames and keeps the remainder.
#pragma once

#include <cstddef>
#include <functional>

#include "common/bytes.hpp"

namespace ringsmb::transport {

class FrameAssembler {
 public:
  enum class Result { Ok, BadMessageType, TooLarge, Stop };

  explicit FrameAssembler(size_t max_frame) : max_frame_(max_frame) {}

  // Appends `data` and calls `on_frame(frame)` for every complete frame, in
  // order. on_frame returns false to stop (the connection is being dropped).
  // A frame is only valid during its call.
  template <typename OnFrame>
  Result feed(ByteSpan data, OnFrame&& on_frame) {
    if (buf_.empty()) {
      // Common case: whole frames in one receive are handled in place, and
      // only a trailing partial frame is copied.
      size_t used = 0;
      Result r = scan(data, used, on_frame);
      if (r == Result::Ok) {
        buf_.assign(data.begin() + used, data.end());
        reserve_for_partial();
      }
      return r;
    }
    buf_.insert(buf_.end(), data.begin(), data.end());
    size_t used = 0;
    Result r = scan(buf_, used, on_frame);
    buf_.erase(buf_.begin(), buf_.begin() + used);
    reserve_for_partial();
    return r;
  }
  size_t buffered() const { return buf_.size(); }
  void set_max_frame(size_t n) { max_frame_ = n; }

 private:
  // Hands out the complete frames at the start of `data`; `used` is how
  // many bytes they took.
  template <typename OnFrame>
  Result scan(ByteSpan data, size_t& used, OnFrame& on_frame) {
    size_t off = 0;
    Result r = Result::Ok;
    while (data.size() - off >= 4) {
      const uint8_t* p = data.data() + off;
      if (p[0] != 0) {
        r = Result::BadMessageType;
        break;
      }
      size_t len = (size_t(p[1]) << 16) | (size_t(p[2]) << 8) | p[3];
      if (len > max_frame_) {
        r = Result::TooLarge;
        break;
      }
      if (data.size() - off - 4 < len) break;
      off += 4 + len;
      if (!on_frame(ByteSpan(p + 4, len))) {
        r = Result::Stop;
        break;
      }
    }
    used = off;
    return r;
  }

  // Once a partial frame's length is known, make room for all of it: a
  // large WRITE arrives in many pieces, and growing the buffer by doubling
  // would copy the payload several times.
  void reserve_for_partial() {
    if (buf_.size() < 4 || buf_[0] != 0) return;
    size_t len = (size_t(buf_[1]) << 16) | (size_t(buf_[2]) << 8) | buf_[3];
    if (len <= max_frame_) buf_.reserve(4 + len);
  }

  size_t max_frame_;
  Bytes buf_;
};

}  // namespace ringsmb::transport
