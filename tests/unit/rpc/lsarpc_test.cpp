#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>

#include "rpc_client.hpp"

using namespace rpc_test;

namespace {

Bytes open_policy2_stub() {
  Bytes out;
  NdrWriter w(out);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  w.u32(24);  // LSAPR_OBJECT_ATTRIBUTES.Length
  w.pointer(false), w.pointer(false);
  w.u32(0);
  w.pointer(false);
  w.pointer(true);  // SecurityQualityOfService, as Windows sends it
  w.u32(12), w.u16(2), w.u8(1), w.u8(0);
  w.u32(0x02000000);  // MAXIMUM_ALLOWED
  return out;
}

Bytes open_policy_stub() {
  Bytes out;
  NdrWriter w(out);
  w.pointer(true);
  w.u16('\\');  // SystemName: one wchar_t
  w.u32(24);
  w.pointer(false), w.pointer(false);
  w.u32(0);
  w.pointer(false), w.pointer(false);
  w.u32(0x00000800);  // POLICY_LOOKUP_NAMES
  return out;
}

PolicyHandle open_policy(Client& c, uint16_t op = 44) {
  Reply r = c.call(op, op == 44 ? open_policy2_stub() : open_policy_stub());
  REQUIRE(r.type == PduType::Response);
  NdrReader rd(r.stub);
  PolicyHandle h = rd.handle();
  CHECK(rd.u32() == 0);
  CHECK_FALSE(h.is_null());
  return h;
}

Bytes lookup_names3_stub(const PolicyHandle& h, const std::vector<std::string>& names) {
  Bytes out;
  NdrWriter w(out);
  w.handle(h);
  w.u32(uint32_t(names.size()));
  w.u32(uint32_t(names.size()));
  put_unicode_strings(w, names);
  w.u32(0), w.pointer(false);  // TranslatedSids
  w.u16(1);                    // LsapLookupWksta
  w.u32(0);                    // MappedCount
  w.u32(0), w.u32(2);          // LookupOptions, ClientRevision
  return out;
}

Bytes lookup_sids2_stub(const PolicyHandle& h, const std::vector<Sid>& sids) {
  Bytes out;
  NdrWriter w(out);
  w.handle(h);
  w.u32(uint32_t(sids.size()));
  w.pointer(true);
  w.u32(uint32_t(sids.size()));
  for (const auto& s : sids) {
    w.pointer(true);
    w.defer([&w, &s] { w.sid(s); });
  }
  w.flush();
  w.u32(0), w.pointer(false);
  w.u16(1);
  w.u32(0);
  w.u32(0), w.u32(2);
  return out;
}

std::vector<std::pair<std::string, Sid>> read_domains(NdrReader& r) {
  std::vector<std::pair<std::string, Sid>> out;
  REQUIRE(r.pointer() != 0);
  uint32_t n = r.u32();
  uint32_t p = r.pointer();
  r.u32();  // MaxEntries
  if (!p) return out;
  REQUIRE(r.count(100) == n);
  std::vector<UnicodeStringHeader> hs;
  for (uint32_t i = 0; i < n; ++i) {
    hs.push_back(r.unicode_string_header());
    REQUIRE(r.pointer() != 0);
  }
  for (const auto& h : hs) {
    std::string name = r.unicode_string_body(h);
    out.emplace_back(name, r.sid());
  }
  return out;
}

}  // namespace

TEST_CASE("lsarpc: open, query account and primary domain, close", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("lsarpc", chunk);
    c.bind();
    PolicyHandle h = open_policy(c);
    for (uint16_t op : {uint16_t(7), uint16_t(46)}) {
      Reply r = c.call(op, handle_level_stub(h, 5));
      // The union arm (a struct with pointers) starts 4-aligned after the
      // 16-bit discriminant; MaximumLength leaves room for a NUL.
      REQUIRE(r.stub.size() > 12);
      CHECK(load_le16(&r.stub[8]) == 14);
      CHECK(load_le16(&r.stub[10]) == 16);
      NdrReader rd(r.stub);
      REQUIRE(rd.pointer() != 0);
      CHECK(rd.u16() == 5);
      auto hdr = rd.unicode_string_header();
      REQUIRE(rd.pointer() != 0);
      CHECK(rd.unicode_string_body(hdr) == "TESTSRV");
      CHECK(rd.sid() == derive_machine_sid("TESTSRV"));
      CHECK(rd.u32() == 0);
      CHECK(rd.remaining() == 0);
    }
    Reply primary = c.call(7, handle_level_stub(h, 3));
    NdrReader rp(primary.stub);
    REQUIRE(rp.pointer() != 0);
    CHECK(rp.u16() == 3);
    auto hdr = rp.unicode_string_header();
    CHECK(rp.pointer() == 0);  // standalone: no domain SID
    CHECK(rp.unicode_string_body(hdr) == "TESTGROUP");
    CHECK(rp.u32() == 0);
    Reply bad = c.call(7, handle_level_stub(h, 2));
    CHECK(load_le32(&bad.stub[4]) == uint32_t(NtStatus::InvalidParameter));
    // LsarClose zeroes the handle; a second close, or any use of the closed
    // handle, is refused by the runtime with a context-mismatch fault.
    Bytes close_stub(h.bytes.begin(), h.bytes.end());
    Reply closed = c.call(0, close_stub);
    REQUIRE(closed.stub.size() == 24);
    CHECK(PolicyHandle{}.bytes == std::array<uint8_t, 20>{});
    CHECK(load_le32(&closed.stub[20]) == 0);
    Reply again = c.call(0, close_stub);
    CHECK(again.type == PduType::Fault);
    CHECK(again.fault == kFaultContextMismatch);
    Reply stale = c.call(7, handle_level_stub(h, 5));
    CHECK(stale.fault == kFaultContextMismatch);
  }
}

TEST_CASE("lsarpc: LsarOpenPolicy with its one-character SystemName", "[rpc]") {
  Client c("lsarpc", 2);
  c.bind();
  open_policy(c, 6);
}

TEST_CASE("lsarpc: LookupNames3 maps users, Unix users and groups", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("lsarpc", chunk);
    c.bind();
    PolicyHandle h = open_policy(c);
    Reply r = c.call(68, lookup_names3_stub(h, {"alice", "TESTSRV\\bob", "Unix User\\bob", "Unix Group\\staff",
                                                "nosuchuser", "Everyone", "BUILTIN\\Administrators"}));
    REQUIRE(r.type == PduType::Response);
    NdrReader rd(r.stub);
    auto domains = read_domains(rd);
    uint32_t n = rd.u32();
    REQUIRE(n == 7);
    REQUIRE(rd.pointer() != 0);
    REQUIRE(rd.count(100) == n);
    struct Entry { uint16_t use; uint32_t sidp; uint32_t idx; };
    std::vector<Entry> es;
    for (uint32_t i = 0; i < n; ++i) {
      Entry e{rd.u16(), rd.pointer(), rd.u32()};
      rd.u32();  // Flags
      es.push_back(e);
    }
    std::vector<Sid> sids;
    for (const auto& e : es) sids.push_back(e.sidp ? rd.sid() : Sid{});
    CHECK(rd.u32() == 6);
    CHECK(rd.u32() == uint32_t(NtStatus::SomeNotMapped));
    REQUIRE(rd.ok());
    Sid machine = derive_machine_sid("TESTSRV");
    CHECK(sids[0] == machine.with_rid(2001));
    CHECK(es[0].use == 1);
    CHECK(domains[es[0].idx].first == "TESTSRV");
    CHECK(sids[1] == machine.with_rid(2002));
    CHECK(sids[2].to_string() == "S-1-22-1-1002");
    CHECK(domains[es[2].idx].first == "Unix User");
    CHECK(sids[3].to_string() == "S-1-22-2-50");
    CHECK(es[3].use == 2);
    CHECK(es[4].use == 8);
    CHECK(es[4].sidp == 0);
    CHECK(es[4].idx == 0xFFFFFFFF);
    CHECK(sids[5].to_string() == "S-1-1-0");
    CHECK(sids[6].to_string() == "S-1-5-32-544");
    CHECK(domains[es[6].idx].first == "BUILTIN");
  }
}

TEST_CASE("lsarpc: LookupSids2 names SIDs and reports the unmapped", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("lsarpc", chunk);
    c.bind();
    PolicyHandle h = open_policy(c);
    Sid machine = derive_machine_sid("TESTSRV");
    std::vector<Sid> in{machine.with_rid(2001), *Sid::parse("S-1-22-1-1002"), *Sid::parse("S-1-5-21-9-9-9-500"),
                        machine.with_rid(513), *Sid::parse("S-1-5-32-545")};
    Reply r = c.call(57, lookup_sids2_stub(h, in));
    NdrReader rd(r.stub);
    auto domains = read_domains(rd);
    uint32_t n = rd.u32();
    REQUIRE(n == in.size());
    REQUIRE(rd.pointer() != 0);
    REQUIRE(rd.count(100) == n);
    std::vector<std::pair<uint16_t, UnicodeStringHeader>> es;
    std::vector<uint32_t> idx;
    for (uint32_t i = 0; i < n; ++i) {
      uint16_t use = rd.u16();
      es.emplace_back(use, rd.unicode_string_header());
      idx.push_back(rd.u32());
      rd.u32();
    }
    std::vector<std::string> names;
    for (const auto& e : es) names.push_back(rd.unicode_string_body(e.second));
    CHECK(rd.u32() == 4);
    CHECK(rd.u32() == uint32_t(NtStatus::SomeNotMapped));
    REQUIRE(rd.ok());
    CHECK(names[0] == "alice");
    CHECK(domains[idx[0]].first == "TESTSRV");
    CHECK(domains[idx[0]].second == machine);
    CHECK(names[1] == "bob");
    CHECK(domains[idx[1]].first == "Unix User");
    CHECK(es[2].first == 8);
    CHECK(names[2] == "S-1-5-21-9-9-9-500");
    CHECK(idx[2] == 0xFFFFFFFF);
    CHECK(names[3] == "None");
    CHECK(es[3].first == 2);
    CHECK(names[4] == "Users");
    CHECK(es[4].first == 4);
  }
}

TEST_CASE("lsarpc: nothing mapped is STATUS_NONE_MAPPED", "[rpc]") {
  Client c("lsarpc");
  c.bind();
  PolicyHandle h = open_policy(c);
  Reply r = c.call(68, lookup_names3_stub(h, {"ghost"}));
  CHECK(load_le32(&r.stub[r.stub.size() - 4]) == uint32_t(NtStatus::NoneMapped));
  r = c.call(57, lookup_sids2_stub(h, {*Sid::parse("S-1-5-21-1-1-1-1")}));
  CHECK(load_le32(&r.stub[r.stub.size() - 4]) == uint32_t(NtStatus::NoneMapped));
  // The legacy and handle-less variants answer too.
  Bytes s1 = lookup_sids2_stub(h, {*Sid::parse("S-1-1-0")});
  Reply v1 = c.call(15, Bytes(s1.begin(), s1.end() - 8));
  CHECK(load_le32(&v1.stub[v1.stub.size() - 4]) == 0);
  Reply v3 = c.call(76, Bytes(s1.begin() + 20, s1.end()));
  CHECK(load_le32(&v3.stub[v3.stub.size() - 4]) == 0);
  Bytes n1 = lookup_names3_stub(h, {"alice"});
  Reply ln = c.call(14, Bytes(n1.begin(), n1.end() - 8));
  REQUIRE(ln.type == PduType::Response);
  CHECK(load_le32(&ln.stub[ln.stub.size() - 4]) == 0);
  CHECK(load_le32(&ln.stub[ln.stub.size() - 16]) == 2001);  // LSA_TRANSLATED_SID.RelativeId
}

TEST_CASE("lsarpc: LsarGetUserName", "[rpc]") {
  Client c("lsarpc", 0, "alice");
  c.bind();
  Bytes stub;
  NdrWriter w(stub);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  w.pointer(false);  // *UserName = NULL
  w.pointer(true);   // DomainName present ...
  w.pointer(false);  // ... pointing at NULL
  Reply r = c.call(45, stub);
  NdrReader rd(r.stub);
  REQUIRE(rd.pointer() != 0);
  CHECK(rd.unicode_string() == "alice");
  REQUIRE(rd.pointer() != 0);
  REQUIRE(rd.pointer() != 0);
  CHECK(rd.unicode_string() == "TESTSRV");
  CHECK(rd.u32() == 0);
  CHECK(rd.remaining() == 0);
}

TEST_CASE("lsarpc: truncated requests fault, bogus handles are refused", "[rpc]") {
  Client c("lsarpc");
  c.bind();
  PolicyHandle h = open_policy(c);
  const std::pair<uint16_t, Bytes> calls[] = {
      {44, open_policy2_stub()},
      {6, open_policy_stub()},
      {7, handle_level_stub(h, 5)},
      {68, lookup_names3_stub(h, {"alice", "bob"})},
      {57, lookup_sids2_stub(h, {*Sid::parse("S-1-5-32-544")})},
  };
  for (const auto& [op, stub] : calls) {
    for (size_t n = 0; n < stub.size(); ++n) {
      INFO("op " << op << " prefix " << n);
      CHECK(c.call(op, Bytes(stub.begin(), stub.begin() + n)).fault == kFaultNdr);
    }
  }
  PolicyHandle bogus;
  bogus.bytes[5] = 1;
  CHECK(c.call(68, lookup_names3_stub(bogus, {"alice"})).fault == kFaultContextMismatch);
  CHECK(c.call(57, lookup_sids2_stub(bogus, {*Sid::parse("S-1-1-0")})).fault == kFaultContextMismatch);
}

TEST_CASE("lsarpc: the handle table is bounded", "[rpc]") {
  Client c("lsarpc");
  c.bind();
  for (size_t i = 0; i < HandleTable::kMaxHandles; ++i) open_policy(c);
  Reply r = c.call(44, open_policy2_stub());
  CHECK(load_le32(&r.stub[20]) == uint32_t(NtStatus::InsufficientResources));
}

TEST_CASE("lsarpc: hostile counts and nested pointers fault", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("lsarpc", chunk);
    c.bind();
    PolicyHandle h = open_policy(c);
    SECTION("a SID count far beyond the data") {
      Bytes stub = lookup_sids2_stub(h, {*Sid::parse("S-1-1-0")});
      store_le32(&stub[20], 0x7FFFFFFF);
      CHECK(c.call(57, stub).fault == kFaultNdr);
    }
    SECTION("conformance that disagrees with Entries") {
      Bytes stub = lookup_sids2_stub(h, {*Sid::parse("S-1-1-0")});
      store_le32(&stub[28], 2);
      CHECK(c.call(57, stub).fault == kFaultNdr);
    }
    SECTION("more than 1000 names") {
      std::vector<std::string> names(1001, "x");
      CHECK(c.call(68, lookup_names3_stub(h, names)).fault == kFaultNdr);
    }
    SECTION("translated names sent in by the client") {
      Bytes stub = lookup_sids2_stub(h, {*Sid::parse("S-1-1-0")});
      // TranslatedNames.Names follows the SID: make it a non-NULL pointer.
      store_le32(&stub[stub.size() - 20], 0x00020000);
      CHECK(c.call(57, stub).fault == kFaultNdr);
    }
    SECTION("a string whose Length is odd") {
      Bytes stub = lookup_names3_stub(h, {"alice"});
      stub[28] = 9;
      CHECK(c.call(68, stub).fault == kFaultNdr);
    }
  }
}

TEST_CASE("lsarpc: domain SIDs a logon named resolve to DOMAIN\\name, and back", "[rpc]") {
  const Sid domain = *Sid::parse("S-1-5-21-771-772-773");
  known_domain_names().learn_user(domain, "EXAMPLE", 1104, "alice.ad");
  Client c("lsarpc");
  c.bind();
  PolicyHandle h = open_policy(c);
  std::vector<Sid> in{domain.with_rid(1104), domain.with_rid(513), domain.with_rid(1105)};
  Reply r = c.call(57, lookup_sids2_stub(h, in));
  NdrReader rd(r.stub);
  auto domains = read_domains(rd);
  REQUIRE(rd.u32() == 3);
  REQUIRE(rd.pointer() != 0);
  REQUIRE(rd.count(100) == 3);
  std::vector<std::pair<uint16_t, UnicodeStringHeader>> es;
  std::vector<uint32_t> idx;
  for (int i = 0; i < 3; ++i) {
    uint16_t use = rd.u16();
    es.emplace_back(use, rd.unicode_string_header());
    idx.push_back(rd.u32());
    rd.u32();
  }
  std::vector<std::string> names;
  for (const auto& e : es) names.push_back(rd.unicode_string_body(e.second));
  CHECK(rd.u32() == 2);
  CHECK(rd.u32() == uint32_t(NtStatus::SomeNotMapped));
  REQUIRE(rd.ok());
  CHECK(names[0] == "alice.ad");
  CHECK(es[0].first == 1);  // SidTypeUser
  REQUIRE(idx[0] < domains.size());
  CHECK(domains[idx[0]].first == "EXAMPLE");
  CHECK(domains[idx[0]].second == domain);
  CHECK(names[1] == "Domain Users");
  CHECK(es[1].first == 2);  // SidTypeGroup
  CHECK(idx[1] == idx[0]);
  CHECK(names[2] == domain.with_rid(1105).to_string());  // a group the server cannot name
  CHECK(es[2].first == 8);

  Reply n = c.call(68, lookup_names3_stub(h, {"EXAMPLE\\alice.ad"}));
  CHECK(load_le32(&n.stub[n.stub.size() - 4]) == 0);
  known_domain_names().clear();
  Reply gone = c.call(57, lookup_sids2_stub(h, {domain.with_rid(1104)}));
  CHECK(load_le32(&gone.stub[gone.stub.size() - 4]) == uint32_t(NtStatus::NoneMapped));
}

TEST_CASE("lsarpc: the domain's directory names the SIDs no logon named", "[rpc]") {
  const Sid domain = *Sid::parse("S-1-5-21-881-882-883");
  std::atomic<int> asked{0};
  auto backend = [&](const std::vector<Sid>& sids, const std::vector<std::string>& names)
      -> std::expected<std::vector<DomainAccountName>, std::string> {
    if (sids.empty() && names.empty()) return std::vector<DomainAccountName>{};  // the warm-up
    ++asked;
    std::vector<DomainAccountName> out;
    const DomainAccountName staff{"EXAMPLE", "nasstaff", true, domain, domain.with_rid(1105)};
    if (std::find(sids.begin(), sids.end(), staff.sid) != sids.end() ||
        std::find(names.begin(), names.end(), "nasstaff") != names.end())
      out.push_back(staff);
    return out;
  };
  DirectoryNames::Options o;
  o.domain = "EXAMPLE";
  o.dns_domain = "example.test";
  set_domain_directory(std::make_shared<DirectoryNames>(backend, o));
  Client c("lsarpc");
  c.bind();
  PolicyHandle h = open_policy(c);
  // The group and an unknown SID of the domain: SOME_NOT_MAPPED, one asking.
  Reply r = c.call(57, lookup_sids2_stub(h, {domain.with_rid(1105), domain.with_rid(99999)}));
  NdrReader rd(r.stub);
  auto domains = read_domains(rd);
  REQUIRE(rd.u32() == 2);
  REQUIRE(rd.pointer() != 0);
  REQUIRE(rd.count(100) == 2);
  std::vector<std::pair<uint16_t, UnicodeStringHeader>> es;
  std::vector<uint32_t> idx;
  for (int i = 0; i < 2; ++i) {
    uint16_t use = rd.u16();
    es.emplace_back(use, rd.unicode_string_header());
    idx.push_back(rd.u32());
    rd.u32();
  }
  std::string group = rd.unicode_string_body(es[0].second);
  std::string unmapped = rd.unicode_string_body(es[1].second);
  CHECK(rd.u32() == 1);
  CHECK(rd.u32() == uint32_t(NtStatus::SomeNotMapped));
  REQUIRE(rd.ok());
  CHECK(group == "nasstaff");
  CHECK(es[0].first == 2);  // SidTypeGroup
  REQUIRE(idx[0] < domains.size());
  CHECK(domains[idx[0]].first == "EXAMPLE");
  CHECK(es[1].first == 8);
  CHECK(unmapped == domain.with_rid(99999).to_string());  // the SID itself, as Windows names it
  CHECK(asked == 1);
  // The unknown SID alone: NONE_MAPPED, from what was kept.
  Reply none = c.call(57, lookup_sids2_stub(h, {domain.with_rid(99999)}));
  CHECK(load_le32(&none.stub[none.stub.size() - 4]) == uint32_t(NtStatus::NoneMapped));
  CHECK(asked == 1);
  // And the name to the SID.
  Reply n = c.call(68, lookup_names3_stub(h, {"EXAMPLE\\nasstaff"}));
  CHECK(load_le32(&n.stub[n.stub.size() - 4]) == 0);
  set_domain_directory(nullptr);
}
