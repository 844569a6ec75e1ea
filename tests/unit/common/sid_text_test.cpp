#include <catch2/catch.hpp>

#include "common/sid_text.hpp"

using namespace ringsmb;

TEST_CASE("SID text parses as Windows writes it", "[common][sid]") {
  auto s = parse_sid_text("S-1-5-21-1-2-3-1104");
  REQUIRE(s);
  CHECK(s->authority == 5);
  CHECK(s->sub == std::vector<uint32_t>{21, 1, 2, 3, 1104});
  CHECK(sid_text(s->authority, s->sub) == "S-1-5-21-1-2-3-1104");
  CHECK(parse_sid_text("S-1-1-0"));
  CHECK(parse_sid_text("s-1-5-32-544"));
  CHECK(parse_sid_text("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15"));
  CHECK_FALSE(parse_sid_text("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16"));
  CHECK_FALSE(parse_sid_text("S-1-5"));
  CHECK_FALSE(parse_sid_text("S-2-5-1"));
  CHECK_FALSE(parse_sid_text("S-1-5-"));
  CHECK_FALSE(parse_sid_text("S-1-5--1"));
  CHECK_FALSE(parse_sid_text("S-1-5-+1"));
  CHECK_FALSE(parse_sid_text("S-1-5-4294967296"));
  CHECK_FALSE(parse_sid_text("S-1-281474976710656-1"));
  CHECK_FALSE(parse_sid_text("EXAMPLE\\staff"));
  CHECK_FALSE(parse_sid_text(""));
}
