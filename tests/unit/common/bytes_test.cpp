#include <catch2/catch.hpp>

#include "common/bytes.hpp"

using namespace ringsmb;

TEST_CASE("bytes: ByteWriter appends each field little-endian after what the buffer holds", "[bytes]") {
  Bytes out{0xEE};  // a caller's bytes before the writer's stay
  ByteWriter w(out);
  w.u8(0x01);
  w.u16(0x0302);
  w.u32(0x07060504);
  w.u64(0x0F0E0D0C0B0A0908ull);
  w.be32(0x10111213);
  CHECK(w.size() == 1 + 1 + 2 + 4 + 8 + 4);
  CHECK(out == Bytes{0xEE, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E,
                     0x0F, 0x10, 0x11, 0x12, 0x13});
}

TEST_CASE("bytes: ByteWriter grows past any capacity, field by field", "[bytes]") {
  // Each width appended into an empty vector and then past every capacity
  // the vector grows through: the values read back where they were put.
  for (size_t width : {2u, 4u, 8u}) {
    Bytes out;
    ByteWriter w(out);
    for (uint32_t i = 0; i < 1000; ++i) {
      if (width == 2) w.u16(uint16_t(i * 0x101u));
      if (width == 4) w.u32(i * 0x01010101u);
      if (width == 8) w.u64(uint64_t(i) << 40 | i);
    }
    REQUIRE(out.size() == 1000 * width);
    ByteReader r(out);
    for (uint32_t i = 0; i < 1000; ++i) {
      if (width == 2) CHECK(r.u16() == uint16_t(i * 0x101u));
      if (width == 4) CHECK(r.u32() == i * 0x01010101u);
      if (width == 8) CHECK(r.u64() == (uint64_t(i) << 40 | i));
    }
    CHECK(r.ok());
    CHECK(r.remaining() == 0);
  }
}

TEST_CASE("bytes: ByteWriter zeros, alignment, byte runs and patches", "[bytes]") {
  Bytes out{0xFF, 0xFF, 0xFF};  // the alignment base is the fourth byte
  ByteWriter w(out);
  w.u8(0xAA);
  w.align(8, 3);  // pads to 8 bytes after the base: 7 zeros
  CHECK(out.size() == 3 + 8);
  CHECK(out == Bytes{0xFF, 0xFF, 0xFF, 0xAA, 0, 0, 0, 0, 0, 0, 0});
  w.align(8, 3);  // already aligned: nothing
  CHECK(out.size() == 11);
  const uint8_t run[] = {1, 2, 3};
  w.bytes(run, sizeof run);
  w.bytes(ByteSpan(run).subspan(1));
  w.zeros(2);
  CHECK(Bytes(out.begin() + 11, out.end()) == Bytes{1, 2, 3, 2, 3, 0, 0});
  w.patch_u16(4, 0xBEEF);
  w.patch_u32(6, 0x01020304);
  CHECK(Bytes(out.begin() + 3, out.begin() + 11) == Bytes{0xAA, 0xEF, 0xBE, 0x04, 0x03, 0x02, 0x01, 0});
  CHECK(&w.buffer() == &out);
}

TEST_CASE("bytes: ByteReader stops at the end and returns zeros from then on", "[bytes]") {
  const Bytes in{0x01, 0x02, 0x03, 0x04, 0x05};
  ByteReader r(in);
  CHECK(r.u32() == 0x04030201u);
  CHECK(r.has(1));
  CHECK_FALSE(r.has(2));
  CHECK(r.u16() == 0);  // one byte left: fails
  CHECK_FALSE(r.ok());
  CHECK(r.u8() == 0);  // sticky, though a byte is left
  CHECK(r.remaining() == 0);
  CHECK(r.bytes(1).empty());
}
