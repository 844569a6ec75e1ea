#include "transport/frame_assembler.hpp"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <utility>

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

// Receiving in place: a reactor that, whenever the assembler offers space
// for a large frame's rest, receives straight into it (at most `piece`
// bytes per recv), and otherwise hands over `piece` bytes through feed().
namespace {

struct InPlaceRun {
  std::vector<Bytes> frames;
  size_t in_place_bytes = 0;
  FrameAssembler::Result result = FrameAssembler::Result::Ok;
};

// With `headers`, it also reads each next header in place, as the worker
// does after a large frame.
InPlaceRun deliver(FrameAssembler& fa, const Bytes& stream, size_t piece, size_t min_missing,
                   bool headers = false) {
  InPlaceRun run;
  auto keep = [&](ByteSpan f) {
    run.frames.emplace_back(f.begin(), f.end());
    return true;
  };
  size_t off = 0;
  while (off < stream.size() && run.result == FrameAssembler::Result::Ok) {
    size_t n = std::min(piece, stream.size() - off);
    std::span<uint8_t> space = fa.recv_space(min_missing);
    if (space.empty() && headers) space = fa.header_space();
    else if (!space.empty() && space.size() < min_missing) FAIL("space below the asked minimum: " << space.size());
    if (!space.empty()) {
      n = std::min(n, space.size());
      std::memcpy(space.data(), stream.data() + off, n);
      run.result = fa.commit(n, keep);
      run.in_place_bytes += n;
    } else {
      run.result = fa.feed(ByteSpan(stream.data() + off, n), keep);
    }
    off += n;
  }
  return run;
}

constexpr size_t kThreshold = 64 * 1024;

std::vector<Bytes> frames_of_sizes(std::initializer_list<size_t> sizes) {
  std::vector<Bytes> frames;
  for (size_t n : sizes) {
    Bytes f(n);
    for (size_t i = 0; i < n; ++i) f[i] = uint8_t(i * 13 + n + (i >> 8));
    frames.push_back(f);
  }
  return frames;
}

}  // namespace

TEST_CASE("frames survive any split when large frames are received in place", "[transport]") {
  auto frames = frames_of_sizes({64, 1, 0, 300, kThreshold - 1, kThreshold, kThreshold + 1, kThreshold + 4,
                                 7, (1 << 20) + 1, 3 * 1024 * 1024 + 3, 0, 5});
  Bytes stream = framed(frames);
  for (size_t piece : {1, 2, 5, 100, 4096, 16384, 65536, 1 << 20, 8 << 20}) {
    for (size_t min_missing : {size_t(1), kThreshold}) {
     for (bool headers : {false, true}) {
      CAPTURE(piece, min_missing, headers);
      FrameAssembler fa(4 << 20);
      InPlaceRun run = deliver(fa, stream, piece, min_missing, headers);
      REQUIRE(run.result == FrameAssembler::Result::Ok);
      CHECK(run.frames == frames);
      CHECK(fa.buffered() == 0);
      // Only what the first piece of a frame brought is copied.
      if (piece <= 16384) CHECK(run.in_place_bytes > (1 << 20));
      if (headers && min_missing == 1) CHECK(run.in_place_bytes == stream.size());  // nothing through feed()
     }
    }
  }
}

TEST_CASE("in-place receive starts exactly at the threshold", "[transport]") {
  const size_t len = kThreshold + 10;
  Bytes stream = framed(frames_of_sizes({len}));
  for (size_t fed : {4 + 9, 4 + 10, 4 + 11}) {
    CAPTURE(fed);
    FrameAssembler fa(1 << 20);
    int frames = 0;
    auto count = [&](ByteSpan f) {
      CHECK(f.size() == len);
      ++frames;
      return true;
    };
    REQUIRE(fa.feed(ByteSpan(stream.data(), fed), count) == FrameAssembler::Result::Ok);
    size_t missing = stream.size() - fed;
    CHECK(fa.missing_bytes() == missing);
    std::span<uint8_t> space = fa.recv_space(kThreshold);
    if (missing >= kThreshold) {
      REQUIRE(space.size() == missing);  // the frame's rest, not a byte more
      std::memcpy(space.data(), stream.data() + fed, missing);
      CHECK(fa.commit(missing, count) == FrameAssembler::Result::Ok);
    } else {
      CHECK(space.empty());
      CHECK(fa.feed(ByteSpan(stream.data() + fed, missing), count) == FrameAssembler::Result::Ok);
    }
    CHECK(frames == 1);
    CHECK(fa.buffered() == 0);
  }
}

TEST_CASE("no in-place space before a frame's header is whole", "[transport]") {
  FrameAssembler fa(1 << 20);
  CHECK(fa.recv_space(1).empty());
  Bytes hdr{0, 0x01, 0x00};  // 3 bytes of a 64 KiB frame's header
  REQUIRE(fa.feed(hdr, [](ByteSpan) { return true; }) == FrameAssembler::Result::Ok);
  CHECK(fa.recv_space(1).empty());
  Bytes last{0};
  REQUIRE(fa.feed(last, [](ByteSpan) { return true; }) == FrameAssembler::Result::Ok);
  CHECK(fa.recv_space(1).size() == 65536);
}

TEST_CASE("a frame over the limit gives TooLarge and no in-place space, however it is split", "[transport]") {
  Bytes stream{0, 0x10, 0x00, 0x01};  // 1 MiB + 1
  stream.resize(4 + 200000, 0xAB);
  for (size_t piece : {1, 2, 3, 5, 100}) {
    for (bool headers : {false, true}) {
      CAPTURE(piece, headers);
      FrameAssembler fa(1 << 20);
      InPlaceRun run = deliver(fa, stream, piece, 1, headers);
      CHECK(run.result == FrameAssembler::Result::TooLarge);
      CHECK(run.in_place_bytes == (headers ? 4 : 0));  // the header only
      CHECK(run.frames.empty());
      CHECK(fa.recv_space(1).empty());
    }
  }
}

TEST_CASE("a header read in place after a large frame is checked", "[transport]") {
  Bytes stream = framed(frames_of_sizes({200000}));
  for (Bytes next : {Bytes{0x85, 0, 0, 0}, Bytes{0, 0x20, 0, 0}, Bytes{0, 0, 0, 0}}) {
    Bytes s = stream;
    s.insert(s.end(), next.begin(), next.end());
    FrameAssembler fa(1 << 20);
    InPlaceRun run = deliver(fa, s, 3, kThreshold, true);
    CHECK(run.frames.size() == (next[1] == 0x20 || next[0] ? 1u : 2u));
    if (next[0]) CHECK(run.result == FrameAssembler::Result::BadMessageType);
    else if (next[1]) CHECK(run.result == FrameAssembler::Result::TooLarge);
    else CHECK(run.result == FrameAssembler::Result::Ok);  // an empty frame, handed out at once
  }
}

TEST_CASE("a bad message type split over receives is refused", "[transport]") {
  Bytes stream{0x85, 0x01, 0x00, 0x00};
  stream.resize(4 + 65536);
  for (size_t piece : {1, 2, 5}) {
    for (bool headers : {false, true}) {
      FrameAssembler fa(1 << 20);
      InPlaceRun run = deliver(fa, stream, piece, 1, headers);
      CHECK(run.result == FrameAssembler::Result::BadMessageType);
      CHECK(run.in_place_bytes == (headers ? 4 : 0));
    }
  }
}

TEST_CASE("the callback can stop the stream from a frame received in place", "[transport]") {
  Bytes stream = framed(frames_of_sizes({200000, 10}));
  FrameAssembler fa(1 << 20);
  REQUIRE(fa.feed(ByteSpan(stream.data(), 100), [](ByteSpan) { return true; }) == FrameAssembler::Result::Ok);
  std::span<uint8_t> space = fa.recv_space(kThreshold);
  REQUIRE(space.size() == 4 + 200000 - 100);
  std::memcpy(space.data(), stream.data() + 100, space.size());
  CHECK(fa.commit(space.size(), [](ByteSpan) { return false; }) == FrameAssembler::Result::Stop);
}

TEST_CASE("random splits, mixing feed and in-place receives, keep every frame", "[transport]") {
  std::mt19937 rng(12345);
  auto frames = frames_of_sizes({0, 3, 100, 4000, kThreshold - 5, kThreshold + 5, 200000, 1 << 20, 17, 90000});
  Bytes stream = framed(frames);
  for (int round = 0; round < 200; ++round) {
    FrameAssembler fa(2 << 20);
    std::vector<Bytes> got;
    auto keep = [&](ByteSpan f) {
      got.emplace_back(f.begin(), f.end());
      return true;
    };
    size_t min_missing = std::uniform_int_distribution<size_t>(1, 2 * kThreshold)(rng);
    size_t off = 0;
    while (off < stream.size()) {
      size_t n = std::min(stream.size() - off, std::uniform_int_distribution<size_t>(1, 300000)(rng));
      std::span<uint8_t> space = fa.recv_space(min_missing);
      if (space.empty() && rng() % 2) space = fa.header_space();
      FrameAssembler::Result r;
      if (!space.empty() && rng() % 4) {
        n = std::min(n, space.size());
        std::memcpy(space.data(), stream.data() + off, n);
        r = fa.commit(n, keep);
      } else {
        r = fa.feed(ByteSpan(stream.data() + off, n), keep);
      }
      REQUIRE(r == FrameAssembler::Result::Ok);
      off += n;
    }
    REQUIRE(got == frames);
    REQUIRE(fa.buffered() == 0);
  }
}

// A pause (the connection's replies are not being read) stops after the
// frame that asked for it; the caller keeps the rest and feeds it later,
// and every frame still comes out once, in order, however the stream is cut.
TEST_CASE("a paused stream resumes from its backlog with every frame once, in order", "[transport]") {
  auto frames = sample_frames();
  Bytes stream = framed(frames);
  for (size_t piece : {1, 3, 100, 4096, 1 << 20}) {
    FrameAssembler fa(1 << 20);
    std::vector<Bytes> got;
    Bytes backlog;
    auto on_frame = [&](ByteSpan f) {
      got.emplace_back(f.begin(), f.end());
      return got.size() % 2 ? FrameAssembler::Next::Pause : FrameAssembler::Next::Continue;
    };
    // What the worker does: while paused, bytes go to the backlog; resumed,
    // the backlog is fed first (it may pause again).
    auto feed = [&](ByteSpan data) {
      auto r = fa.feed(data, on_frame);
      if (r == FrameAssembler::Result::Paused) {
        ByteSpan rest = data.subspan(fa.consumed());
        backlog.insert(backlog.end(), rest.begin(), rest.end());
      } else {
        REQUIRE(r == FrameAssembler::Result::Ok);
      }
    };
    for (size_t off = 0; off < stream.size(); off += piece) {
      ByteSpan data(stream.data() + off, std::min(piece, stream.size() - off));
      if (!backlog.empty()) backlog.insert(backlog.end(), data.begin(), data.end());
      else feed(data);
      while (!backlog.empty()) {
        Bytes b = std::exchange(backlog, {});
        feed(b);
        if (backlog.size() == b.size()) break;  // nothing taken: needs more bytes
      }
    }
    CHECK(got == frames);
  }
}

TEST_CASE("writable gives a frame assembled in the frame buffer as writable memory, and only that", "[transport]") {
  Bytes big(100000, 0x42);
  Bytes small{1, 2, 3};
  Bytes stream = framed({big, small});
  FrameAssembler fa(1 << 20);
  size_t writable_frames = 0;
  for (size_t off = 0; off < stream.size(); off += 16384) {
    size_t n = std::min<size_t>(16384, stream.size() - off);
    auto r = fa.feed(ByteSpan(stream.data() + off, n), [&](ByteSpan f) {
      CHECK(fa.writable(ByteSpan(small)).empty());  // not in the buffer
      std::span<uint8_t> w = fa.writable(f);
      if (!w.empty()) {
        ++writable_frames;
        CHECK(w.data() == f.data());
        CHECK(w.size() == f.size());
        w[0] = 0x43;  // the frame's own bytes
        CHECK(f[0] == 0x43);
      }
      return true;
    });
    REQUIRE(r == FrameAssembler::Result::Ok);
  }
  CHECK(writable_frames == 1);  // the small frame came whole in one piece, in the caller's data
}

TEST_CASE("take_buffer gives away the buffer a frame was assembled in, and only that", "[transport]") {
  Bytes big(100000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 31);
  Bytes small{1, 2, 3};
  Bytes stream = framed({big, small, big});
  FrameAssembler fa(1 << 20);
  std::vector<LargeBuffer> taken;
  std::vector<ByteSpan> kept;
  size_t frames = 0;
  // In pieces: the large frames are assembled in the frame buffer.
  for (size_t off = 0; off < stream.size(); off += 16384) {
    size_t n = std::min<size_t>(16384, stream.size() - off);
    auto r = fa.feed(ByteSpan(stream.data() + off, n), [&](ByteSpan f) {
      ++frames;
      CHECK_FALSE(fa.take_buffer(ByteSpan(small)));  // not in the buffer
      if (auto buf = fa.take_buffer(f)) {
        taken.push_back(std::move(buf));
        kept.push_back(f);
      }
      return true;
    });
    REQUIRE(r == FrameAssembler::Result::Ok);
  }
  CHECK(frames == 3);
  REQUIRE(taken.size() == 2);  // the small frame came whole in one piece: handed out in place
  for (ByteSpan f : kept) CHECK(Bytes(f.begin(), f.end()) == big);  // still there, where they were
  CHECK(fa.buffered() == 0);
}

// A stream of large WRITEs: the next frame is received whole, header
// first, into frame_space; one that comes only up to its header (a
// receiver that saw it is small, or longer than the room) goes on as any
// other.
TEST_CASE("frame_space takes a whole frame, header first, in one commit, or its header alone", "[transport]") {
  auto frames = frames_of_sizes({300000, 200000, 300001, 5});
  Bytes stream = framed(frames);
  FrameAssembler fa(1 << 20);
  std::vector<Bytes> got;
  auto keep = [&](ByteSpan f) {
    got.emplace_back(f.begin(), f.end());
    return true;
  };
  size_t off = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    std::span<uint8_t> space = fa.frame_space(300000);
    REQUIRE(space.size() == 4 + 300000);
    size_t whole = 4 + frames[i].size();
    size_t n = whole <= space.size() ? whole : 4;  // what the receiver takes
    std::memcpy(space.data(), stream.data() + off, n);
    REQUIRE(fa.commit(n, keep) == FrameAssembler::Result::Ok);
    off += n;
    if (n == whole) {
      CHECK(got.size() == i + 1);
      continue;
    }
    std::span<uint8_t> rest = fa.recv_space(1);
    REQUIRE(rest.size() == frames[i].size());
    CHECK(fa.frame_space(300000).empty());  // a frame is being assembled
    std::memcpy(rest.data(), stream.data() + off, rest.size());
    REQUIRE(fa.commit(rest.size(), keep) == FrameAssembler::Result::Ok);
    off += rest.size();
  }
  CHECK(got == frames);
  CHECK(fa.buffered() == 0);
  CHECK(fa.frame_space(2 << 20).empty());  // never past the maximum frame
}
