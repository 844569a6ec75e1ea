#include <catch2/catch.hpp>

#include "rpc/interface.hpp"
#include "rpc/ndr.hpp"

using namespace ringsmb;
using namespace ringsmb::rpc;

namespace {

Bytes sample_encoding() {
  Bytes out;
  NdrWriter w(out);
  w.u8(7);
  w.u32(0x11223344);  // aligned to 4 after the byte
  w.u16(0xBEEF);
  w.u64(0x0102030405060708ull);  // aligned to 8
  w.unique_wstring("srv\xC3\xA9");
  w.flush();  // a top-level pointer's referent follows it directly
  w.unicode_string("Team");
  w.flush();
  w.sid(*Sid::parse("S-1-5-21-1-2-3-1001"));
  PolicyHandle h;
  for (size_t i = 0; i < h.bytes.size(); ++i) h.bytes[i] = uint8_t(i + 1);
  w.handle(h);
  return out;
}

struct Decoded {
  uint8_t a;
  uint32_t b;
  uint16_t c;
  uint64_t d;
  std::optional<std::string> e;
  std::string f;
  Sid sid;
  PolicyHandle h;
};

Decoded decode_sample(NdrReader& r) {
  Decoded d;
  d.a = r.u8();
  d.b = r.u32();
  d.c = r.u16();
  d.d = r.u64();
  d.e = r.unique_wstring();
  auto hdr = r.unicode_string_header();
  d.f = r.unicode_string_body(hdr);
  d.sid = r.sid();
  d.h = r.handle();
  return d;
}

}  // namespace

TEST_CASE("NDR primitives align relative to the stub start", "[rpc]") {
  Bytes out{0xAA};  // something already in the buffer: alignment ignores it
  NdrWriter w(out);
  w.u8(1);
  w.u32(2);
  w.u16(3);
  w.u64(4);
  REQUIRE(out.size() == 1 + 1 + 3 + 4 + 2 + 6 + 8);
  CHECK(out[5] == 2);
  CHECK(out[17] == 4);
}

TEST_CASE("NDR round trip of strings, SIDs and handles", "[rpc]") {
  Bytes enc = sample_encoding();
  NdrReader r(enc);
  auto d = decode_sample(r);
  REQUIRE(r.ok());
  CHECK(r.remaining() == 0);
  CHECK(d.a == 7);
  CHECK(d.b == 0x11223344);
  CHECK(d.c == 0xBEEF);
  CHECK(d.d == 0x0102030405060708ull);
  CHECK(d.e == std::optional<std::string>("srv\xC3\xA9"));
  CHECK(d.f == "Team");
  CHECK(d.sid.to_string() == "S-1-5-21-1-2-3-1001");
  CHECK(d.h.bytes[19] == 20);
}

TEST_CASE("NDR: every truncation fails cleanly", "[rpc]") {
  Bytes enc = sample_encoding();
  for (size_t n = 0; n < enc.size(); ++n) {
    NdrReader r(ByteSpan(enc.data(), n));
    (void)decode_sample(r);
    INFO("prefix " << n);
    CHECK_FALSE(r.ok());
  }
}

TEST_CASE("NDR: RPC_UNICODE_STRING wire layout", "[rpc]") {
  Bytes out;
  NdrWriter w(out);
  w.unicode_string("ab");
  w.flush();
  const Bytes expected{4, 0, 4, 0, 0x00, 0x00, 0x02, 0x00,  // Length, MaximumLength, referent 0x20000
                       2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,   // max_count, offset, actual_count
                       'a', 0, 'b', 0};
  CHECK(out == expected);
}

TEST_CASE("NDR: deferred referents are written depth-first", "[rpc]") {
  // struct { ptr -> struct { ptr -> u32 A } ; ptr -> u32 B }: A precedes B.
  Bytes out;
  NdrWriter w(out);
  w.pointer(true);
  w.defer([&w] {
    w.pointer(true);
    w.defer([&w] { w.u32(0xAAAAAAAA); });
  });
  w.pointer(true);
  w.defer([&w] { w.u32(0xBBBBBBBB); });
  w.flush();
  REQUIRE(out.size() == 20);
  CHECK(load_le32(&out[8]) == 0x00020008);  // the inner pointer
  CHECK(load_le32(&out[12]) == 0xAAAAAAAA);
  CHECK(load_le32(&out[16]) == 0xBBBBBBBB);
}

TEST_CASE("NDR: hostile counts and strings are refused", "[rpc]") {
  SECTION("conformance above the limit") {
    Bytes b{0xFF, 0xFF, 0xFF, 0x7F};
    NdrReader r(b);
    CHECK(r.count(1000) == 0);
    CHECK_FALSE(r.ok());
  }
  SECTION("string with actual_count > max_count") {
    Bytes b{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'a', 0, 'b', 0};
    NdrReader r(b);
    (void)r.wstring();
    CHECK_FALSE(r.ok());
  }
  SECTION("string with a nonzero offset") {
    Bytes b{2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 'a', 0};
    NdrReader r(b);
    (void)r.wstring();
    CHECK_FALSE(r.ok());
  }
  SECTION("huge string count without the bytes") {
    Bytes b{0xFF, 0x7F, 0, 0, 0, 0, 0, 0, 0xFF, 0x7F, 0, 0};
    NdrReader r(b);
    (void)r.wstring();
    CHECK_FALSE(r.ok());
  }
  SECTION("unpaired surrogate") {
    Bytes b{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x00, 0xD8};
    NdrReader r(b);
    (void)r.wstring();
    CHECK_FALSE(r.ok());
  }
  SECTION("SID with more than 15 sub-authorities") {
    Bytes b{16, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0, 5};
    NdrReader r(b);
    (void)r.sid();
    CHECK_FALSE(r.ok());
  }
  SECTION("SID whose count disagrees with its conformance") {
    Bytes b{1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0};
    NdrReader r(b);
    (void)r.sid();
    CHECK_FALSE(r.ok());
  }
  SECTION("RPC_UNICODE_STRING whose Length disagrees with the array") {
    Bytes b{4, 0, 4, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'a', 0};
    NdrReader r(b);
    (void)r.unicode_string();
    CHECK_FALSE(r.ok());
  }
}

TEST_CASE("UUIDs parse into NDR wire order", "[rpc]") {
  Uuid u = Uuid::parse("8a885d04-1ceb-11c9-9fe8-08002b104860");
  const std::array<uint8_t, 16> expected{0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
                                         0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60};
  CHECK(u.bytes == expected);
  CHECK(Uuid::parse("not a uuid").bytes == std::array<uint8_t, 16>{});
}

TEST_CASE("SID text form", "[rpc]") {
  auto s = Sid::parse("S-1-5-32-544");
  REQUIRE(s);
  CHECK(s->authority == 5);
  CHECK(s->sub == std::vector<uint32_t>{32, 544});
  CHECK(s->to_string() == "S-1-5-32-544");
  CHECK_FALSE(Sid::parse("S-1"));
  CHECK_FALSE(Sid::parse("S-1-5-x"));
  CHECK_FALSE(Sid::parse("S-1-5-4294967296"));
  CHECK_FALSE(Sid::parse("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16"));
}

TEST_CASE("The machine SID is stable, per name and case-insensitive", "[rpc]") {
  Sid a = derive_machine_sid("RINGSMB");
  CHECK(a == derive_machine_sid("ringsmb"));
  CHECK(a != derive_machine_sid("OTHER"));
  REQUIRE(a.sub.size() == 4);
  CHECK(a.sub[0] == 21);
  CHECK(a.authority == 5);
}
