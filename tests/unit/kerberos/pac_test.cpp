// MS-PAC decoding: Microsoft's own example LOGON_INFO (MS-PAC section 3),
// PACs built here field by field, and every way of cutting them short or
// lying about a count, each refused with a reason.
#include <catch2/catch.hpp>

#include <string>

#include "common/unicode.hpp"
#include "kerberos/pac.hpp"

using namespace ringsmb;
using namespace ringsmb::kerberos;

namespace {

Bytes from_hex(std::string_view hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(uint8_t(std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// The KERB_VALIDATION_INFO of MS-PAC section 3 (user lzhu of NTDEV).
const char* const kSpecLogonInfo =
#include "pac_spec_example.inc"
    ;

// What a test PAC holds.
struct LogonSpec {
  std::string account = "alice";
  std::string domain = "EXAMPLE";
  std::vector<uint32_t> domain_sub = {21, 1004336348, 1177238915, 682003330};
  uint32_t user_rid = 1104, primary_rid = 513;
  std::vector<uint32_t> groups = {513, 1105};
  std::vector<std::vector<uint32_t>> extra = {{18, 1}};  // S-1-18-1 style: authority 5 below
  std::vector<uint32_t> resource_domain_sub;              // empty: none
  std::vector<uint32_t> resource_groups;
};

// NDR writer over one stream (alignment relative to its start).
struct Ndr {
  Bytes out;
  ByteWriter w{out};
  uint32_t next_ref = 0x00020000;
  void u16(uint16_t v) { w.u16(v); }
  void u32(uint32_t v) {
    w.align(4);
    w.u32(v);
  }
  uint32_t ref(bool present) { return present ? (next_ref += 4) : 0; }
  void string_header(const std::string& s) {
    u16(uint16_t(unicode::utf16_length(s) * 2));
    u16(uint16_t(unicode::utf16_length(s) * 2));
    u32(ref(true));
  }
  void string_data(const std::string& s) {
    Bytes units;
    unicode::utf8_to_utf16le(s, units);
    u32(uint32_t(units.size() / 2));
    u32(0);
    u32(uint32_t(units.size() / 2));
    w.bytes(units);
  }
  void sid(uint64_t authority, const std::vector<uint32_t>& sub) {
    u32(uint32_t(sub.size()));
    w.u8(1);
    w.u8(uint8_t(sub.size()));
    for (int shift = 40; shift >= 0; shift -= 8) w.u8(uint8_t(authority >> shift));
    for (uint32_t x : sub) w.u32(x);
  }
  void rids(const std::vector<uint32_t>& rids) {
    u32(uint32_t(rids.size()));
    for (uint32_t r : rids) {
      u32(r);
      u32(7);  // SE_GROUP_MANDATORY | ENABLED_BY_DEFAULT | ENABLED
    }
  }
};

Bytes build_logon_info(const LogonSpec& s) {
  Ndr n;
  n.u32(n.ref(true));
  n.w.zeros(48);  // six FILETIMEs
  n.string_header(s.account);
  for (int i = 0; i < 5; ++i) n.string_header("");
  n.u16(3);
  n.u16(0);
  n.u32(s.user_rid);
  n.u32(s.primary_rid);
  n.u32(uint32_t(s.groups.size()));
  n.u32(n.ref(!s.groups.empty()));
  n.u32(s.extra.empty() ? 0 : 0x20);
  n.w.zeros(16);
  n.string_header("DC1");
  n.string_header(s.domain);
  n.u32(n.ref(true));
  n.w.zeros(8 + 8 + 16 + 8);  // Reserved1, UAC + SubAuthStatus, two FILETIMEs, count + Reserved3
  n.u32(uint32_t(s.extra.size()));
  n.u32(n.ref(!s.extra.empty()));
  n.u32(n.ref(!s.resource_domain_sub.empty()));
  n.u32(uint32_t(s.resource_groups.size()));
  n.u32(n.ref(!s.resource_groups.empty()));
  n.string_data(s.account);
  for (int i = 0; i < 5; ++i) n.string_data("");
  if (!s.groups.empty()) n.rids(s.groups);
  n.string_data("DC1");
  n.string_data(s.domain);
  n.sid(5, s.domain_sub);
  if (!s.extra.empty()) {
    n.u32(uint32_t(s.extra.size()));
    for (size_t i = 0; i < s.extra.size(); ++i) {
      n.u32(n.ref(true));
      n.u32(7);
    }
    for (const auto& e : s.extra) n.sid(5, e);
  }
  if (!s.resource_domain_sub.empty()) n.sid(5, s.resource_domain_sub);
  if (!s.resource_groups.empty()) n.rids(s.resource_groups);
  n.w.align(8);
  Bytes out = {1, 0x10, 8, 0, 0xcc, 0xcc, 0xcc, 0xcc};
  ByteWriter w(out);
  w.u32(uint32_t(n.out.size()));
  w.u32(0);
  w.bytes(n.out);
  return out;
}

// A PACTYPE holding the given buffers (type, bytes), each 8-byte aligned.
Bytes build_pac(const std::vector<std::pair<uint32_t, Bytes>>& buffers) {
  Bytes out;
  ByteWriter w(out);
  w.u32(uint32_t(buffers.size()));
  w.u32(0);
  uint64_t offset = 8 + 16 * buffers.size();
  for (const auto& [type, data] : buffers) {
    w.u32(type);
    w.u32(uint32_t(data.size()));
    w.u64(offset);
    offset += (data.size() + 7) / 8 * 8;
  }
  for (const auto& b : buffers) {
    w.bytes(b.second);
    w.align(8);
  }
  return out;
}

std::vector<std::string> strings(const std::vector<PacSid>& sids) {
  std::vector<std::string> out;
  for (const auto& s : sids) out.push_back(s.to_string());
  return out;
}

}  // namespace

TEST_CASE("MS-PAC's example LOGON_INFO decodes to its documented values", "[kerberos][pac]") {
  Bytes b = from_hex(kSpecLogonInfo);
  auto info = parse_logon_info(b);
  REQUIRE(info);
  CHECK(info->account_name == "lzhu");
  CHECK(info->domain_name == "NTDEV");
  CHECK(info->domain_sid.to_string() == "S-1-5-21-397955417-626881126-188441444");
  CHECK(info->user_sid().to_string() == "S-1-5-21-397955417-626881126-188441444-2914711");
  CHECK(info->primary_group_rid == 513);
  REQUIRE(info->group_rids.size() == 26);
  CHECK(info->group_rids.front() == 3392609);
  CHECK(info->group_rids.back() == 3018354);
  REQUIRE(info->extra_sids.size() == 13);
  CHECK(info->extra_sids[0].to_string() == "S-1-5-21-773533881-1816936887-355810188-513");
  CHECK(info->extra_sids[11].to_string() == "S-1-5-21-397955417-626881126-188441444-3248111");
  CHECK_FALSE(info->resource_domain_sid);
  // The primary group is also in GroupIds: counted once.
  auto groups = info->group_sids();
  CHECK(groups.size() == 26 + 13);
  CHECK(groups[0].to_string() == "S-1-5-21-397955417-626881126-188441444-513");

  // Inside a PAC, next to the signatures it is found by its type.
  Bytes pac = build_pac({{10, Bytes(18, 0)}, {kPacLogonInfo, b}, {kPacServerChecksum, Bytes(16, 1)}});
  auto parsed = parse_pac(pac);
  REQUIRE(parsed);
  REQUIRE(parsed->logon_info);
  CHECK(parsed->logon_info->account_name == "lzhu");
}

TEST_CASE("a built LOGON_INFO round-trips with extra SIDs and resource groups", "[kerberos][pac]") {
  LogonSpec spec;
  spec.extra = {{21, 9, 9, 9, 1200}, {1000}};
  spec.resource_domain_sub = {21, 7, 7, 7};
  spec.resource_groups = {3000, 3001};
  auto info = parse_logon_info(build_logon_info(spec));
  REQUIRE(info);
  CHECK(info->account_name == "alice");
  CHECK(info->domain_name == "EXAMPLE");
  CHECK(info->user_sid().to_string() == "S-1-5-21-1004336348-1177238915-682003330-1104");
  CHECK(strings(info->group_sids()) ==
        std::vector<std::string>{"S-1-5-21-1004336348-1177238915-682003330-513",
                                 "S-1-5-21-1004336348-1177238915-682003330-1105", "S-1-5-21-9-9-9-1200",
                                 "S-1-5-1000", "S-1-5-21-7-7-7-3000", "S-1-5-21-7-7-7-3001"});
}

TEST_CASE("a PAC without LOGON_INFO (MIT's KDC) has no logon info", "[kerberos][pac]") {
  auto parsed = parse_pac(build_pac({{10, Bytes(20, 0)}, {kPacServerChecksum, Bytes(16, 0)}}));
  REQUIRE(parsed);
  CHECK_FALSE(parsed->logon_info);
}

TEST_CASE("every truncation of a LOGON_INFO or a PAC is refused with a reason", "[kerberos][pac]") {
  LogonSpec spec;
  spec.resource_domain_sub = {21, 7, 7, 7};
  spec.resource_groups = {3000};
  Bytes info = build_logon_info(spec);
  REQUIRE(parse_logon_info(info));
  // The NDR stream ends where the private header says; cut the bytes and
  // the length together so that the inner checks, not the header, fail.
  for (size_t n = 0; n < info.size(); ++n) {
    Bytes cut(info.begin(), info.begin() + n);
    if (n >= 16) store_le32(&cut[8], uint32_t(n - 16));
    auto r = parse_logon_info(cut);
    // Only trailing alignment padding may go unnoticed.
    if (r) CHECK(n >= info.size() - 7);
    else CHECK_FALSE(r.error().empty());
  }
  Bytes pac = build_pac({{kPacLogonInfo, info}});
  for (size_t n = 0; n < pac.size() - 7; ++n) {
    auto r = parse_pac(ByteSpan(pac.data(), n));
    REQUIRE_FALSE(r);
    CHECK_FALSE(r.error().empty());
  }
}

TEST_CASE("counts and offsets that lie are refused", "[kerberos][pac]") {
  LogonSpec spec;
  Bytes info = build_logon_info(spec);
  SECTION("GroupCount larger than the array") {
    // GroupCount: stream offset 4 + 48 + 6*8 + 2*2 + 2*4 = 112; +16 of headers.
    store_le32(&info[16 + 112], 3);
    auto r = parse_logon_info(info);
    REQUIRE_FALSE(r);
    CHECK(r.error().find("GroupIds: count 3 but the array holds 2") != std::string::npos);
  }
  SECTION("a huge GroupCount in both places") {
    store_le32(&info[16 + 112], 0x40000000);
    // The array's own count follows the six strings' data; find it by value.
    bool patched = false;
    for (size_t i = 16 + 200; i + 12 <= info.size(); i += 4)
      if (load_le32(&info[i]) == 2 && load_le32(&info[i + 4]) == 513) {
        store_le32(&info[i], 0x40000000);
        patched = true;
        break;
      }
    REQUIRE(patched);
    auto r = parse_logon_info(info);
    REQUIRE_FALSE(r);
    CHECK(r.error().find("do not fit") != std::string::npos);
  }
  SECTION("object length beyond the buffer") {
    store_le32(&info[8], uint32_t(info.size()));
    REQUIRE_FALSE(parse_logon_info(info));
  }
  SECTION("big-endian NDR") {
    info[1] = 0x00;
    REQUIRE_FALSE(parse_logon_info(info));
  }
  SECTION("a PAC buffer outside the PAC, or misaligned, or twice") {
    Bytes pac = build_pac({{kPacLogonInfo, info}});
    Bytes far = pac;
    store_le64(&far[16], 1u << 20);
    CHECK_FALSE(parse_pac(far));
    Bytes odd = pac;
    store_le64(&odd[16], 25);
    CHECK_FALSE(parse_pac(odd));
    Bytes big = pac;
    store_le32(&big[12], uint32_t(pac.size()));
    CHECK_FALSE(parse_pac(big));
    CHECK_FALSE(parse_pac(build_pac({{kPacLogonInfo, info}, {kPacLogonInfo, info}})));
    Bytes many = pac;
    store_le32(&many[0], 0xffffffff);
    CHECK_FALSE(parse_pac(many));
  }
}

