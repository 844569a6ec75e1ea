#include <catch2/catch.hpp>

#include "rpc_client.hpp"

using namespace rpc_test;

namespace {

Bytes share_enum_stub(uint32_t level, bool resume = true) {
  Bytes out;
  NdrWriter w(out);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  w.u32(level);
  w.u32(level);
  w.pointer(true);
  w.u32(0);
  w.pointer(false);
  w.u32(0xFFFFFFFF);
  if (w.pointer(resume)) w.u32(0);
  return out;
}

Bytes get_info_stub(const std::string& share, uint32_t level) {
  Bytes out;
  NdrWriter w(out);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  w.wstring(share);
  w.u32(level);
  return out;
}

Bytes level_stub(uint32_t level) {
  Bytes out;
  NdrWriter w(out);
  w.unique_wstring("testsrv");
  w.flush();
  w.u32(level);
  return out;
}

struct ShareEntry {
  std::string name;
  uint32_t type = 0;
  std::string remark;
};

// Decodes a NetrShareEnum level 1 reply the way a client's NDR engine does.
std::vector<ShareEntry> decode_enum_level1(ByteSpan stub, uint32_t& total, uint32_t& werr) {
  NdrReader r(stub);
  CHECK(r.u32() == 1);  // Level
  CHECK(r.u32() == 1);  // discriminant
  REQUIRE(r.pointer() != 0);
  uint32_t entries = r.u32();
  REQUIRE(r.pointer() != 0);
  REQUIRE(r.count(1000) == entries);
  std::vector<ShareEntry> out(entries);
  std::vector<std::pair<uint32_t, uint32_t>> ptrs;
  for (auto& e : out) {
    uint32_t n = r.pointer();
    e.type = r.u32();
    ptrs.emplace_back(n, r.pointer());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (ptrs[i].first) out[i].name = r.wstring();
    if (ptrs[i].second) out[i].remark = r.wstring();
  }
  total = r.u32();
  if (r.pointer()) CHECK(r.u32() == 0);
  werr = r.u32();
  REQUIRE(r.ok());
  CHECK(r.remaining() == 0);
  return out;
}

}  // namespace

TEST_CASE("srvsvc: NetShareEnumAll level 1 decodes to the configured shares", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("srvsvc", chunk);
    REQUIRE(c.bind().type == PduType::BindAck);
    Reply r = c.call(15, share_enum_stub(1));
    REQUIRE(r.type == PduType::Response);
    uint32_t total = 0, werr = 1;
    auto shares = decode_enum_level1(r.stub, total, werr);
    CHECK(werr == 0);
    CHECK(total == 2);
    REQUIRE(shares.size() == 2);  // "secret" is not browseable
    CHECK(shares[0].name == "data");
    CHECK(shares[0].type == 0);
    CHECK(shares[0].remark == "Team data");
    CHECK(shares[1].name == "IPC$");
    CHECK(shares[1].type == 0x80000003);
  }
}

TEST_CASE("srvsvc: every enumeration level answers", "[rpc]") {
  Client c("srvsvc");
  c.bind();
  for (uint32_t level : {0u, 1u, 2u, 501u, 502u}) {
    Reply r = c.call(15, share_enum_stub(level, false));
    REQUIRE(r.type == PduType::Response);
    NdrReader rd(r.stub);
    CHECK(rd.u32() == level);
    CHECK(load_le32(&r.stub[r.stub.size() - 4]) == 0);
    CHECK(load_le32(&r.stub[r.stub.size() - 12]) == 2);  // TotalEntries, then a NULL ResumeHandle
  }
  Reply bad = c.call(15, share_enum_stub(1005));
  CHECK(load_le32(&bad.stub[bad.stub.size() - 4]) == 124);  // ERROR_INVALID_LEVEL
}

TEST_CASE("srvsvc: NetrShareGetInfo", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("srvsvc", chunk);
    c.bind();
    SECTION("level 2 of a hidden share shows its Windows path") {
      Reply r = c.call(16, get_info_stub("SECRET", 2));
      NdrReader rd(r.stub);
      CHECK(rd.u32() == 2);
      REQUIRE(rd.pointer() != 0);
      uint32_t name = rd.pointer();
      CHECK(rd.u32() == 0);
      uint32_t remark = rd.pointer();
      rd.u32(), rd.u32(), rd.u32();
      uint32_t path = rd.pointer();
      CHECK(rd.pointer() == 0);  // passwd
      REQUIRE((name && remark && path));
      CHECK(rd.wstring() == "secret");
      CHECK(rd.wstring() == "Team data");
      CHECK(rd.wstring() == "C:\\srv\\data");
      CHECK(rd.u32() == 0);
      CHECK(rd.ok());
    }
    SECTION("level 1005 and IPC$") {
      Reply r = c.call(16, get_info_stub("ipc$", 1005));
      const Bytes expected{0xED, 0x03, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
      CHECK(r.stub == expected);
    }
    SECTION("unknown share and level") {
      Reply r = c.call(16, get_info_stub("nope", 1));
      CHECK(load_le32(&r.stub[r.stub.size() - 4]) == 2310);  // NERR_NetNameNotFound
      r = c.call(16, get_info_stub("data", 7));
      CHECK(load_le32(&r.stub[r.stub.size() - 4]) == 124);
    }
  }
}

TEST_CASE("srvsvc: NetrServerGetInfo levels 100, 101, 102", "[rpc]") {
  Client c("srvsvc", 5);
  c.bind();
  Reply r = c.call(21, level_stub(101));
  NdrReader rd(r.stub);
  CHECK(rd.u32() == 101);
  REQUIRE(rd.pointer() != 0);
  CHECK(rd.u32() == 500);  // PLATFORM_ID_NT
  REQUIRE(rd.pointer() != 0);
  rd.u32(), rd.u32();
  CHECK((rd.u32() & 0x8003) == 0x8003);
  REQUIRE(rd.pointer() != 0);
  CHECK(rd.wstring() == "TESTSRV");
  CHECK(rd.wstring() == "ringsmb test");
  CHECK(rd.u32() == 0);
  CHECK(rd.ok());
  CHECK(rd.remaining() == 0);
  for (uint32_t level : {100u, 102u}) {
    Reply ok = c.call(21, level_stub(level));
    CHECK(load_le32(&ok.stub[ok.stub.size() - 4]) == 0);
  }
  Reply bad = c.call(21, level_stub(103));
  CHECK(load_le32(&bad.stub[bad.stub.size() - 4]) == 124);
}

TEST_CASE("wkssvc: NetrWkstaGetInfo level 100", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("wkssvc", chunk);
    c.bind();
    Reply r = c.call(0, level_stub(100));
    NdrReader rd(r.stub);
    CHECK(rd.u32() == 100);
    REQUIRE(rd.pointer() != 0);
    CHECK(rd.u32() == 500);
    REQUIRE(rd.pointer() != 0);
    REQUIRE(rd.pointer() != 0);
    rd.u32(), rd.u32();
    CHECK(rd.wstring() == "TESTSRV");
    CHECK(rd.wstring() == "TESTGROUP");
    CHECK(rd.u32() == 0);
    CHECK(rd.ok());
    for (uint32_t level : {101u, 102u}) {
      Reply ok = c.call(0, level_stub(level));
      CHECK(load_le32(&ok.stub[ok.stub.size() - 4]) == 0);
    }
    CHECK(c.call(1, {}).fault == kFaultOpRangeError);
  }
}

TEST_CASE("srvsvc/wkssvc: every truncated request faults cleanly", "[rpc]") {
  Client c("srvsvc");
  c.bind();
  for (const Bytes& stub : {share_enum_stub(2), get_info_stub("data", 502), level_stub(102)}) {
    uint16_t op = stub.size() == share_enum_stub(2).size() ? 15 : stub == level_stub(102) ? 21 : 16;
    for (size_t n = 0; n < stub.size(); ++n) {
      INFO("op " << op << " prefix " << n);
      CHECK(c.call(op, Bytes(stub.begin(), stub.begin() + n)).fault == kFaultNdr);
    }
  }
}

TEST_CASE("srvsvc: NetrShareEnumSticky lists the configured shares without IPC$", "[rpc]") {
  Client c("srvsvc");
  c.bind();
  uint32_t total = 0, werr = 1;
  auto all = decode_enum_level1(c.call(15, share_enum_stub(1)).stub, total, werr);
  CHECK(total == 2);
  auto sticky = decode_enum_level1(c.call(36, share_enum_stub(1)).stub, total, werr);
  CHECK(werr == 0);
  REQUIRE(sticky.size() == 1);
  CHECK(total == 1);
  CHECK(sticky[0].name == "data");
  CHECK(load_le32(&c.call(36, share_enum_stub(501)).stub.back() - 3) == 124u);  // no level 501 here
  CHECK(load_le32(&c.call(15, share_enum_stub(501)).stub.back() - 3) == 0u);
  CHECK(all.back().name == "IPC$");
}

TEST_CASE("srvsvc: NetrShareCheck finds a shared path", "[rpc]") {
  Client c("srvsvc");
  c.bind();
  auto check = [&](const std::string& device) {
    Bytes out;
    NdrWriter w(out);
    w.unique_wstring("\\\\testsrv");
    w.flush();
    w.wstring(device);
    Reply r = c.call(20, out);
    REQUIRE(r.stub.size() == 8);
    return std::make_pair(load_le32(&r.stub[0]), load_le32(&r.stub[4]));
  };
  CHECK(check("C:\\srv\\data") == std::make_pair(0u, 0u));  // STYPE_DISKTREE
  CHECK(check("c:\\SRV\\DATA") == std::make_pair(0u, 0u));
  CHECK(check("C:\\srv").second == 2311u);  // NERR_DeviceNotShared
  CHECK(check("") == std::make_pair(0x80000003u, 0u));  // IPC$, whose path is empty
  Bytes truncated;
  NdrWriter w(truncated);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  CHECK(c.call(20, truncated).fault == kFaultNdr);
}

TEST_CASE("srvsvc: anonymous and guest sessions see no share paths", "[rpc]") {
  for (auto [user, guest] : {std::pair<std::string, bool>{"", false}, {"nobody", true}}) {
    Client c("srvsvc", 0, user, guest);
    c.bind();
    for (uint32_t level : {2u, 502u}) {
      Reply e = c.call(15, share_enum_stub(level));
      NdrReader r(e.stub);
      CHECK(r.u32() == level);
      CHECK(r.u32() == level);
      CHECK(r.pointer() == 0);
      CHECK(r.u32() == 0);
      CHECK(r.pointer() != 0);
      CHECK(r.u32() == 0);
      CHECK(r.u32() == 5);  // ERROR_ACCESS_DENIED
      CHECK(r.remaining() == 0);
      Reply g = c.call(16, get_info_stub("data", level));
      CHECK(g.stub == Bytes{uint8_t(level), uint8_t(level >> 8), 0, 0, 0, 0, 0, 0, 5, 0, 0, 0});
    }
    Reply e501 = c.call(15, share_enum_stub(501));
    CHECK(load_le32(&e501.stub[e501.stub.size() - 4]) == 5u);
    Reply g501 = c.call(16, get_info_stub("data", 501));
    CHECK(load_le32(&g501.stub[g501.stub.size() - 4]) == 0u);
    uint32_t total = 0, werr = 1;
    auto shares = decode_enum_level1(c.call(15, share_enum_stub(1)).stub, total, werr);
    CHECK(werr == 0);
    CHECK(shares.size() == 2);
  }
}

TEST_CASE("srvsvc: share paths (levels 2 and 502) only to admin users", "[rpc]") {
  for (const std::string user : {"carol", "bob"}) {  // logged in, not named by "admin users"
    Client c("srvsvc", 0, user, false);
    c.bind();
    for (uint32_t level : {2u, 502u}) {
      Reply e = c.call(15, share_enum_stub(level));
      CHECK(load_le32(&e.stub[e.stub.size() - 4]) == 5u);  // ERROR_ACCESS_DENIED
      CHECK(load_le32(&e.stub[8]) == 0u);                   // no share array
      Reply g = c.call(16, get_info_stub("data", level));
      CHECK(g.stub == Bytes{uint8_t(level), uint8_t(level >> 8), 0, 0, 0, 0, 0, 0, 5, 0, 0, 0});
    }
    for (uint32_t level : {0u, 1u, 501u}) {  // no paths in these: every logged-in user
      Reply e = c.call(15, share_enum_stub(level));
      CHECK(load_le32(&e.stub[e.stub.size() - 4]) == 0u);
    }
  }
  config::Config cfg = test_config();
  cfg.global.admin_users = {"CAROL"};  // names compare without case
  Client admin("srvsvc", cfg, 0, "carol");
  admin.bind();
  for (uint32_t level : {2u, 502u}) {
    Reply e = admin.call(15, share_enum_stub(level, false));
    CHECK(load_le32(&e.stub[e.stub.size() - 4]) == 0u);
    CHECK(load_le32(&e.stub[e.stub.size() - 12]) == 2u);  // TotalEntries
  }
}

TEST_CASE("srvsvc: the caller's own home is listed, [homes] only when browseable", "[rpc][homes]") {
  for (bool browseable : {false, true}) {
    config::Config cfg = test_config();
    config::ShareConfig homes;
    homes.name = "homes";
    homes.browseable = browseable;
    cfg.homes = homes;
    Client c("srvsvc", cfg, 0, "alice", "alice");
    REQUIRE(c.bind().type == PduType::BindAck);
    uint32_t total = 0, werr = 1;
    auto shares = decode_enum_level1(c.call(15, share_enum_stub(1)).stub, total, werr);
    std::vector<std::string> names;
    for (const auto& s : shares) names.push_back(s.name);
    std::vector<std::string> want = browseable ? std::vector<std::string>{"data", "homes", "alice", "IPC$"}
                                               : std::vector<std::string>{"data", "alice", "IPC$"};
    CHECK(names == want);
  }
}
