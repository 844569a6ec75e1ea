// Direct TCP transport framing (MS-SMB2 2.1): each SMB message is preceded
// by a zero byte and a 24-bit big-endian length. Bytes arrive in arbitrary
// pieces; the assembler hands out whole frames and keeps the remainder.
//
// Two ways in: feed() takes bytes received elsewhere (a reactor's buffer)
// and copies only what belongs to an incomplete frame; recv_space() (or
// header_space()) and commit() let the caller receive the rest of a large
// frame straight into its final place, so its payload is never copied in
// user space.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include "common/bytes.hpp"
#include "common/large_buffer.hpp"

namespace ringsmb::transport {

class FrameAssembler {
 public:
  // Paused: on_frame asked to stop reading for now (the connection's
  // replies are not being read); consumed() says how much of feed()'s data
  // was taken, and the caller keeps the rest (it starts at a frame
  // boundary) to feed again later.
  enum class Result { Ok, BadMessageType, TooLarge, Stop, Paused };
  // What on_frame returns; a bool means Continue (true) or Stop (false).
  enum class Next { Continue, Stop, Pause };
  static constexpr size_t kHeaderSize = 4;
  // The frame length the 4-byte Direct TCP header at P gives (MS-SMB2 2.1:
  // 24 bits big-endian after the zero byte; transport/direct_tcp.hpp writes it).
  static size_t frame_length(const uint8_t* p) { return load_be24(p + 1); }

  explicit FrameAssembler(size_t max_frame) : max_frame_(max_frame) {}

  // Takes `data` and calls `on_frame(frame)` for every complete frame, in
  // order. on_frame returns false to stop (the connection is being dropped).
  // A frame is only valid during its call.
  template <typename OnFrame>
  Result feed(ByteSpan data, OnFrame&& on_frame) {
    size_t took = 0;
    consumed_ = 0;
    if (held_ > 0) {
      Result r = complete_partial(data, took, on_frame);
      if (r == Result::Paused) consumed_ = took;
      if (r != Result::Ok || held_ > 0) return r;  // an error, a pause, or `data` ended inside the frame
      data = data.subspan(took);
    }
    // Whole frames are handed out in place; only a trailing partial frame
    // is copied.
    size_t used = 0;
    Result r = scan(data, used, on_frame);
    if (r == Result::Ok) keep_partial(data.subspan(used));
    if (r == Result::Paused) consumed_ = took + used;
    return r;
  }
  // After feed() returned Paused: the bytes of its data that were taken.
  size_t consumed() const { return consumed_; }

  // Where the rest of the frame being assembled goes, when its header is
  // known and at least `min_missing` (> 0) bytes are still missing: its
  // final place in the frame buffer, never past the frame's end (so never
  // beyond the maximum frame size). Empty otherwise.
  std::span<uint8_t> recv_space(size_t min_missing) {
    size_t missing = missing_bytes();
    if (missing == 0 || missing < min_missing) return {};
    return {buf_.get() + held_, missing};
  }

  // Where the rest of the next frame's header goes, while it is incomplete:
  // after a large frame the caller may read the next header itself, and
  // then the rest of the frame in place. Empty once the header is whole.
  std::span<uint8_t> header_space() {
    if (held_ >= kHeaderSize) return {};
    reserve(kHeaderSize);
    return {buf_.get() + held_, kHeaderSize - held_};
  }

  // Where the next frame goes whole, header first, when nothing of it is
  // here yet: room for a frame of up to `len` bytes (a stream of large
  // WRITEs: the last one's length). Empty otherwise.
  std::span<uint8_t> frame_space(size_t len) {
    if (held_ != 0 || len > max_frame_) return {};
    reserve(kHeaderSize + len);
    return {buf_.get(), kHeaderSize + len};
  }

  // `n` bytes (at most the size of the space) were written at the start of
  // recv_space(), header_space() or frame_space(). A header completed this
  // way is checked as feed() checks it; a complete frame is handed out.
  template <typename OnFrame>
  Result commit(size_t n, OnFrame&& on_frame) {
    consumed_ = 0;  // a pause here comes at the end of the bytes committed
    if (held_ < kHeaderSize) {
      size_t header = std::min(n, kHeaderSize - held_);
      held_ += header;
      n -= header;
      if (held_ < kHeaderSize) return Result::Ok;
      if (Result r = start_frame(); r != Result::Ok) return r;
    }
    held_ += std::min(n, missing_bytes());  // never past the frame
    return hand_out_if_whole(on_frame);
  }

  // While on_frame handles a frame that was assembled in the frame buffer
  // (not one handed out in place from feed()'s data), and BYTES lie in it:
  // gives the buffer away, so that the frame's bytes outlive the call at
  // the same address (a large WRITE whose pwrite runs on another thread);
  // the next frame gets a buffer of its own. Null otherwise.
  LargeBuffer take_buffer(ByteSpan bytes) {
    if (!holds_frame_bytes(bytes)) return {};
    return std::move(buf_);
  }

  // The same frame's BYTES as memory the caller may write over (the frame
  // buffer is the assembler's own, and nothing reads it until the next
  // frame): an encrypted frame is decrypted in place. Empty for bytes not
  // in it (a frame handed out from feed()'s data).
  std::span<uint8_t> writable(ByteSpan bytes) {
    if (!holds_frame_bytes(bytes)) return {};
    return {buf_.get() + (bytes.data() - buf_.get()), bytes.size()};
  }

  size_t buffered() const { return held_; }
  // Bytes the frame being assembled still misses (0 while its header is incomplete).
  size_t missing_bytes() const { return held_ >= kHeaderSize ? kHeaderSize + frame_len_ - held_ : 0; }
  void set_max_frame(size_t n) { max_frame_ = n; }
  size_t max_frame() const { return max_frame_; }

 private:
  template <typename T>
  static Next as_next(T r) {
    if constexpr (std::is_same_v<T, Next>) return r;
    else return r ? Next::Continue : Next::Stop;
  }
  static Result result_of(Next n) {
    return n == Next::Continue ? Result::Ok : n == Next::Stop ? Result::Stop : Result::Paused;
  }

  // Whether BYTES lie in the frame buffer while on_frame handles the frame
  // assembled there (none is being assembled meanwhile).
  bool holds_frame_bytes(ByteSpan bytes) const {
    auto begin = reinterpret_cast<uintptr_t>(buf_.get());
    auto at = reinterpret_cast<uintptr_t>(bytes.data());
    return buf_ && held_ == 0 && at >= begin && at + bytes.size() <= begin + buf_.capacity();
  }

  Result check_header(const uint8_t* p) const {
    if (p[0] != 0) return Result::BadMessageType;
    if (frame_length(p) > max_frame_) return Result::TooLarge;
    return Result::Ok;
  }

  // Hands out the complete frames at the start of `data`; `used` is how
  // many bytes they took.
  template <typename OnFrame>
  Result scan(ByteSpan data, size_t& used, OnFrame& on_frame) {
    size_t off = 0;
    Result r = Result::Ok;
    while (data.size() - off >= kHeaderSize) {
      const uint8_t* p = data.data() + off;
      r = check_header(p);
      if (r != Result::Ok) break;
      size_t len = frame_length(p);
      if (data.size() - off - kHeaderSize < len) break;
      off += kHeaderSize + len;
      r = result_of(as_next(on_frame(ByteSpan(p + kHeaderSize, len))));
      if (r != Result::Ok) break;
    }
    used = off;
    return r;
  }

  // Adds the start of `data` to the held partial frame: first the rest of
  // its header, then at most the rest of the frame (`took` counts both).
  template <typename OnFrame>
  Result complete_partial(ByteSpan data, size_t& took, OnFrame& on_frame) {
    if (held_ < kHeaderSize) {
      took = append(data, kHeaderSize - held_);
      if (held_ < kHeaderSize) return Result::Ok;
      if (Result r = start_frame(); r != Result::Ok) return r;
    }
    took += append(data.subspan(took), missing_bytes());
    return hand_out_if_whole(on_frame);
  }

  // The held header just became whole: checks it, as scan() does, and makes
  // room for its frame.
  Result start_frame() {
    Result r = check_header(buf_.get());
    if (r != Result::Ok) return r;
    frame_len_ = frame_length(buf_.get());
    reserve(kHeaderSize + frame_len_);
    return Result::Ok;
  }

  // Keeps an incomplete frame (scan() has checked its header, if whole).
  // Room for all of it is made at once: a large WRITE arrives in many
  // pieces, and growing by doubling would copy the payload several times.
  void keep_partial(ByteSpan rest) {
    held_ = 0;
    frame_len_ = 0;
    if (rest.empty()) return;
    if (rest.size() >= kHeaderSize) frame_len_ = frame_length(rest.data());
    reserve(kHeaderSize + frame_len_);
    append(rest, rest.size());
  }

  template <typename OnFrame>
  Result hand_out_if_whole(OnFrame& on_frame) {
    if (held_ != kHeaderSize + frame_len_) return Result::Ok;
    size_t len = frame_len_;
    held_ = 0;  // the bytes stay in buf_ until the next feed or commit
    frame_len_ = 0;
    return result_of(as_next(on_frame(ByteSpan(buf_.get() + kHeaderSize, len))));
  }

  size_t append(ByteSpan data, size_t at_most) {
    size_t n = std::min(data.size(), at_most);
    if (n) std::memcpy(buf_.get() + held_, data.data(), n);
    held_ += n;
    return n;
  }

  // The buffer is allocated without zeroing (a frame of up to max_frame_
  // bytes is about to be written over it) and kept for the next frames; a
  // large one given away (take_buffer) comes back through LargeBuffer's
  // cache instead of fresh pages.
  void reserve(size_t n) {
    if (n <= buf_.capacity()) return;
    LargeBuffer bigger = LargeBuffer::allocate(n);
    if (held_) std::memcpy(bigger.get(), buf_.get(), held_);
    buf_ = std::move(bigger);
  }

  size_t max_frame_;  // lowered before login (set_max_frame)
  LargeBuffer buf_;
  size_t held_ = 0;       // bytes of the incomplete frame at the start of buf_, header included
  size_t frame_len_ = 0;  // its length, once its header is whole
  size_t consumed_ = 0;   // of the last feed()'s data, when it paused
};

}  // namespace ringsmb::transport
