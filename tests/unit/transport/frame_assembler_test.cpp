#include "transport/frame_assembler.hpp"

#include <catch2/catch.hpp>

using namespace ringsmb;
using transport::FrameAssembler;

namespace {

Bytes framed(const std::vector<Bytes>& frames) {
  Bytes out;
  for (const auto& f : frames) {
    out.push_back(0);
    out.push_back(uint8_t(f.size() >> 16));
    out.push_back(uint8_t(f.size() >> 8));
    out.push_back(uint8_t(f.size()));
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

std::vector<Bytes> sample_frames() {
  std::vector<Bytes> frames;
  for (size_t n : {64, 1, 0, 300, 70000, 7}) {
    Bytes f(n);
    for (size_t i = 0; i < n; ++i) f[i] = uint8_t(i * 7 + n);
    frames.push_back(f);
  }
  return frames;
}

}  // namespace

TEST_CASE("frames survive any split of the byte stream", "[transport]") {
  auto frames = sample_frames();
  Bytes stream = framed(frames);
  for (size_t piece : {1, 2, 5, 100, 4096, 1 << 20}) {
    FrameAssembler fa(1 << 20);
    std::vector<Bytes> got;
    for (size_t off = 0; off < stream.size(); off += piece) {
      size_t n = std::min(piece, stream.size() - off);
      auto r = fa.feed(ByteSpan(stream.data() + off, n), [&](ByteSpan f) {
        got.emplace_back(f.begin(), f.end());
        return true;
      });
      REQUIRE(r == FrameAssembler::Result::Ok);
    }
    CHECK(got == frames);
    CHECK(fa.buffered() == 0);
  }
}

TEST_CASE("a frame over the limit is refused before it is buffered", "[transport]") {
  FrameAssembler fa(1000);
  Bytes hdr{0, 0, 0x03, 0xE9};  // 1001 bytes
  CHECK(fa.feed(hdr, [](ByteSpan) { return true; }) == FrameAssembler::Result::TooLarge);
}

TEST_CASE("a non-session message type is refused", "[transport]") {
  FrameAssembler fa(1000);
  Bytes keepalive{0x85, 0, 0, 0};
  CHECK(fa.feed(keepalive, [](ByteSpan) { return true; }) == FrameAssembler::Result::BadMessageType);
}

TEST_CASE("the callback can stop the stream", "[transport]") {
  FrameAssembler fa(1000);
  Bytes stream = framed({Bytes(10), Bytes(10), Bytes(10)});
  int calls = 0;
  auto r = fa.feed(stream, [&](ByteSpan) { return ++calls < 2; });
  CHECK(r == FrameAssembler::Result::Stop);
  CHECK(calls == 2);
}
