#include <catch2/catch.hpp>

#include "rpc_client.hpp"

using namespace rpc_test;

namespace {

Bytes connect5_stub() {
  Bytes out;
  NdrWriter w(out);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  w.u32(0x00000031);  // SAM_SERVER_CONNECT | ENUMERATE_DOMAINS | LOOKUP_DOMAIN
  w.u32(1);
  w.u32(1);
  w.u32(3), w.u32(0);
  return out;
}

Bytes connect2_stub() {
  Bytes out;
  NdrWriter w(out);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  w.u32(0x00000031);
  return out;
}

PolicyHandle read_handle_reply(const Reply& r, size_t offset = 0, uint32_t want = 0) {
  REQUIRE(r.type == PduType::Response);
  REQUIRE(r.stub.size() == offset + 24);
  NdrReader rd(ByteSpan(r.stub).subspan(offset));
  PolicyHandle h = rd.handle();
  CHECK(rd.u32() == want);
  return h;
}

Bytes handle_then(const PolicyHandle& h, std::initializer_list<uint32_t> words) {
  Bytes out;
  NdrWriter w(out);
  w.handle(h);
  for (uint32_t v : words) w.u32(v);
  return out;
}

Bytes lookup_domain_stub(const PolicyHandle& h, const std::string& name) {
  Bytes out;
  NdrWriter w(out);
  w.handle(h);
  w.unicode_string(name);
  w.flush();
  return out;
}

Bytes open_domain_stub(const PolicyHandle& h, const Sid& sid) {
  Bytes out;
  NdrWriter w(out);
  w.handle(h);
  w.u32(0x00000200);  // DOMAIN_LOOKUP
  w.sid(sid);
  return out;
}

Bytes lookup_names_stub(const PolicyHandle& h, const std::vector<std::string>& names) {
  Bytes out;
  NdrWriter w(out);
  w.handle(h);
  w.u32(uint32_t(names.size()));
  w.u32(1000), w.u32(0), w.u32(uint32_t(names.size()));
  put_unicode_strings(w, names);
  return out;
}

std::vector<uint32_t> read_ulong_array(NdrReader& r) {
  std::vector<uint32_t> v;
  uint32_t n = r.u32();
  if (r.pointer() == 0) return v;
  REQUIRE(r.count(1000) == n);
  for (uint32_t i = 0; i < n; ++i) v.push_back(r.u32());
  return v;
}

struct Session {
  PolicyHandle server, domain;
};

Session open_machine_domain(Client& c) {
  Session s;
  Reply r = c.call(64, connect5_stub());
  NdrReader rd(r.stub);
  CHECK(rd.u32() == 1);
  CHECK(rd.u32() == 1);
  CHECK(rd.u32() == 3);
  s.server = read_handle_reply(r, 16);
  Reply d = c.call(5, lookup_domain_stub(s.server, "testsrv"));
  NdrReader dr(d.stub);
  REQUIRE(dr.pointer() != 0);
  Sid sid = dr.sid();
  CHECK(sid == derive_machine_sid("TESTSRV"));
  CHECK(dr.u32() == 0);
  s.domain = read_handle_reply(c.call(7, open_domain_stub(s.server, sid)));
  return s;
}

}  // namespace

TEST_CASE("samr: connect, find the domain, look a user up and read it", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("samr", chunk);
    REQUIRE(c.bind().type == PduType::BindAck);
    Session s = open_machine_domain(c);
    Reply ln = c.call(17, lookup_names_stub(s.domain, {"ALICE", "ghost"}));
    NdrReader lr(ln.stub);
    auto rids = read_ulong_array(lr);
    auto uses = read_ulong_array(lr);
    CHECK(lr.u32() == uint32_t(NtStatus::SomeNotMapped));
    REQUIRE(rids.size() == 2);
    CHECK(rids[0] == 2001);
    CHECK(uses[0] == 1);
    CHECK(rids[1] == 0);
    CHECK(uses[1] == 8);

    PolicyHandle user = read_handle_reply(c.call(34, handle_then(s.domain, {0x02000000, 2001})));
    Reply q = c.call(36, handle_level_stub(user, 21));
    NdrReader qr(q.stub);
    REQUIRE(qr.pointer() != 0);
    CHECK(qr.u16() == 21);
    for (int i = 0; i < 12; ++i) qr.u32();  // six OLD_LARGE_INTEGERs
    std::vector<UnicodeStringHeader> strs;
    for (int i = 0; i < 10; ++i) strs.push_back(qr.unicode_string_header());
    for (int i = 0; i < 3; ++i) CHECK(qr.unicode_string_header().referent == 0);  // Lm, Nt, PrivateData
    qr.u32();
    CHECK(qr.pointer() == 0);
    CHECK(qr.u32() == 2001);
    CHECK(qr.u32() == 513);
    CHECK((qr.u32() & 0x10) != 0);
    qr.u32();
    CHECK(qr.u16() == 168);
    REQUIRE(qr.pointer() != 0);
    for (int i = 0; i < 4; ++i) qr.u16();
    for (int i = 0; i < 4; ++i) CHECK(qr.u8() == 0);
    CHECK(qr.unicode_string_body(strs[0]) == "alice");
    for (int i = 1; i < 10; ++i) CHECK(qr.unicode_string_body(strs[i]).empty());
    CHECK(qr.count(1260) == 1260);
    CHECK(qr.u32() == 0);
    CHECK(qr.count(1260) == 21);
    for (int i = 0; i < 21; ++i) qr.u8();
    CHECK(qr.u32() == 0);
    CHECK(qr.ok());
    CHECK(qr.remaining() == 0);

    Reply other_level = c.call(36, handle_level_stub(user, 99));
    CHECK(load_le32(&other_level.stub[4]) == uint32_t(NtStatus::InvalidInfoClass));
    for (const auto& h : {user, s.domain, s.server}) {
      Reply cl = c.call(1, Bytes(h.bytes.begin(), h.bytes.end()));
      CHECK(load_le32(&cl.stub[20]) == 0);
    }
  }
}

TEST_CASE("samr: domains enumerate and BUILTIN resolves its aliases", "[rpc]") {
  Client c("samr");
  c.bind();
  PolicyHandle server = read_handle_reply(c.call(57, connect2_stub()));
  Reply e = c.call(6, handle_then(server, {0, 0xFFFFFFFF}));
  NdrReader er(e.stub);
  CHECK(er.u32() == 2);
  REQUIRE(er.pointer() != 0);
  CHECK(er.u32() == 2);
  REQUIRE(er.pointer() != 0);
  CHECK(er.count(10) == 2);
  std::vector<UnicodeStringHeader> hs;
  for (int i = 0; i < 2; ++i) {
    er.u32();
    hs.push_back(er.unicode_string_header());
  }
  CHECK(er.unicode_string_body(hs[0]) == "TESTSRV");
  CHECK(er.unicode_string_body(hs[1]) == "Builtin");
  CHECK(er.u32() == 2);
  CHECK(er.u32() == 0);

  PolicyHandle builtin = read_handle_reply(c.call(7, open_domain_stub(server, *Sid::parse("S-1-5-32"))));
  Reply ln = c.call(17, lookup_names_stub(builtin, {"Administrators", "alice"}));
  NdrReader lr(ln.stub);
  auto rids = read_ulong_array(lr);
  auto uses = read_ulong_array(lr);
  CHECK(rids == std::vector<uint32_t>{544, 0});
  CHECK(uses == std::vector<uint32_t>{4, 8});
  CHECK(lr.u32() == uint32_t(NtStatus::SomeNotMapped));

  Reply none = c.call(17, lookup_names_stub(builtin, {"ghost"}));
  CHECK(load_le32(&none.stub[none.stub.size() - 4]) == uint32_t(NtStatus::NoneMapped));
  Reply nodom = c.call(5, lookup_domain_stub(server, "ELSEWHERE"));
  CHECK(nodom.stub == Bytes{0, 0, 0, 0, 0xDF, 0, 0, 0xC0});
  read_handle_reply(c.call(7, open_domain_stub(server, *Sid::parse("S-1-5-21-1-2-3"))), 0,
                    uint32_t(NtStatus::NoSuchDomain));
  read_handle_reply(c.call(34, handle_then(builtin, {0, 544})), 0, uint32_t(NtStatus::NoSuchUser));
}

// SamrEnumerateUsersInDomain reply: (rid, name) pairs, then CountReturned and status.
struct UserList {
  uint32_t context = 0;
  std::vector<std::pair<uint32_t, std::string>> users;
  uint32_t count_returned = 0;
  uint32_t status = 0;
};

UserList read_user_list(const Reply& rep) {
  UserList out;
  NdrReader r(rep.stub);
  out.context = r.u32();
  if (r.pointer() != 0) {
    uint32_t n = r.u32();
    if (r.pointer() != 0) {
      REQUIRE(r.count(100) == n);
      std::vector<std::pair<uint32_t, UnicodeStringHeader>> hs;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t rid = r.u32();
        hs.emplace_back(rid, r.unicode_string_header());
      }
      for (const auto& [rid, h] : hs) out.users.emplace_back(rid, r.unicode_string_body(h));
    }
  }
  out.count_returned = r.u32();
  out.status = r.u32();
  CHECK(r.ok());
  CHECK(r.remaining() == 0);
  return out;
}

TEST_CASE("samr: users of the machine domain enumerate once per RID", "[rpc]") {
  Client c("samr");
  c.bind();
  Session s = open_machine_domain(c);
  UserList all = read_user_list(c.call(13, handle_then(s.domain, {0, 0x10, 0xFFFF})));
  CHECK(all.status == 0);
  REQUIRE(all.users.size() == 1);  // carol shares alice's Unix user, so her RID
  CHECK(all.users[0] == std::make_pair(2001u, std::string("alice")));
  CHECK(all.count_returned == 1);
  CHECK(all.context == 1);

  UserList resumed = read_user_list(c.call(13, handle_then(s.domain, {1, 0x10, 0xFFFF})));
  CHECK(resumed.users.empty());
  CHECK(resumed.status == 0);
  UserList far = read_user_list(c.call(13, handle_then(s.domain, {0xFFFFFFF0u, 0, 0xFFFF})));
  CHECK(far.users.empty());
  UserList trusts = read_user_list(c.call(13, handle_then(s.domain, {0, 0x40, 0xFFFF})));  // interdomain trusts
  CHECK(trusts.users.empty());

  PolicyHandle builtin = read_handle_reply(c.call(7, open_domain_stub(s.server, *Sid::parse("S-1-5-32"))));
  CHECK(read_user_list(c.call(13, handle_then(builtin, {0, 0x10, 0xFFFF}))).users.empty());
  UserList wrong = read_user_list(c.call(13, handle_then(s.server, {0, 0x10, 0xFFFF})));
  CHECK(wrong.status == uint32_t(NtStatus::InvalidHandle));
  Reply truncated = c.call(13, handle_then(s.domain, {0}));
  CHECK(truncated.type == PduType::Fault);
}

TEST_CASE("samr: anonymous and guest sessions cannot connect", "[rpc]") {
  for (auto [user, guest] : {std::pair<std::string, bool>{"", false}, {"nobody", true}}) {
    Client c("samr", 0, user, guest);
    c.bind();
    read_handle_reply(c.call(64, connect5_stub()), 16, uint32_t(NtStatus::AccessDenied));
    read_handle_reply(c.call(57, connect2_stub()), 0, uint32_t(NtStatus::AccessDenied));
  }
}

TEST_CASE("samr: truncated requests fault, handles of the wrong kind are refused", "[rpc]") {
  Client c("samr");
  c.bind();
  Session s = open_machine_domain(c);
  const std::pair<uint16_t, Bytes> calls[] = {
      {64, connect5_stub()},
      {57, connect2_stub()},
      {5, lookup_domain_stub(s.server, "testsrv")},
      {6, handle_then(s.server, {0, 100})},
      {7, open_domain_stub(s.server, derive_machine_sid("TESTSRV"))},
      {17, lookup_names_stub(s.domain, {"alice", "bob"})},
      {34, handle_then(s.domain, {0, 2001})},
      {36, handle_level_stub(s.domain, 21)},
  };
  for (const auto& [op, stub] : calls) {
    for (size_t n = 0; n < stub.size(); ++n) {
      INFO("op " << op << " prefix " << n);
      CHECK(c.call(op, Bytes(stub.begin(), stub.begin() + n)).fault == kFaultNdr);
    }
  }
  // A domain handle is not a server handle, nor a user handle.
  read_handle_reply(c.call(7, open_domain_stub(s.domain, derive_machine_sid("TESTSRV"))), 0,
                    uint32_t(NtStatus::InvalidHandle));
  Reply q = c.call(36, handle_level_stub(s.domain, 21));
  CHECK(q.stub == Bytes{0, 0, 0, 0, 0x08, 0, 0, 0xC0});
  CHECK(c.call(99, {}).fault == kFaultOpRangeError);
}
