#include <catch2/catch.hpp>

#include "rpc_client.hpp"

using namespace rpc_test;

namespace {

// NetrShareEnum level 1 request stub, as Windows sends NetShareEnumAll.
Bytes share_enum_stub(uint32_t level = 1) {
  Bytes out;
  NdrWriter w(out);
  w.unique_wstring("\\\\testsrv");
  w.flush();
  w.u32(level);
  w.u32(level);
  w.pointer(true);
  w.u32(0);           // EntriesRead
  w.pointer(false);   // Buffer
  w.u32(0xFFFFFFFF);  // PreferedMaximumLength
  w.pointer(true);
  w.u32(0);  // ResumeHandle
  return out;
}

Bytes header_bytes(uint8_t type, uint8_t flags, uint16_t frag_len, uint32_t call_id) {
  Bytes b{5, 0, type, flags, 0x10, 0, 0, 0};
  b.push_back(uint8_t(frag_len)), b.push_back(uint8_t(frag_len >> 8));
  b.push_back(0), b.push_back(0);
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(call_id >> (8 * i)));
  return b;
}

}  // namespace

TEST_CASE("Windows-style bind gets Windows' bind_ack bytes", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("\\PIPE\\srvsvc", chunk);
    auto srvsvc = srvsvc_interface().syntax;
    Bytes bind = build_bind(2, {{srvsvc, ndr20_syntax()}, {srvsvc, ndr64_syntax()}, {srvsvc, feature_syntax(3)}});
    REQUIRE(c.write(bind));
    Reply r = c.collect();
    // MS-RPCE 2.2.2 / C706 12.6.4.4, byte by byte.
    Bytes expected = header_bytes(12, 0x03, 116, 2);
    Bytes body{0xB8, 0x10, 0xB8, 0x10,  // max_xmit_frag, max_recv_frag: 4280
               0xF6, 0x53, 0x00, 0x00,  // assoc_group_id
               13, 0};                  // secondary address length, NUL included
    for (char ch : std::string("\\PIPE\\srvsvc")) body.push_back(uint8_t(ch));
    body.push_back(0);
    body.push_back(0);                   // pad to 4
    body.insert(body.end(), {3, 0, 0, 0});  // n_results
    body.insert(body.end(), {0, 0, 0, 0});  // acceptance
    auto ndr = ndr20_syntax().uuid.bytes;
    body.insert(body.end(), ndr.begin(), ndr.end());
    body.insert(body.end(), {2, 0, 0, 0});
    body.insert(body.end(), {2, 0, 2, 0});  // provider rejection: transfer syntaxes not supported
    body.insert(body.end(), 20, 0);
    body.insert(body.end(), {3, 0, 3, 0});  // negotiate_ack, both feature bits
    body.insert(body.end(), 20, 0);
    expected.insert(expected.end(), body.begin(), body.end());
    CHECK(r.raw == expected);
  }
}

TEST_CASE("bind: feature bits are answered with the supported subset", "[rpc]") {
  Client c("lsarpc");
  auto lsa = lsarpc_interface().syntax;
  REQUIRE(c.write(build_bind(1, {{lsa, ndr20_syntax()}, {lsa, feature_syntax(0xFF)}})));
  auto ack = parse_bind_ack(c.collect().raw);
  REQUIRE(ack);
  CHECK(ack->secondary_address == "\\PIPE\\lsass");
  REQUIRE(ack->results.size() == 2);
  CHECK(ack->results[1].result == kResultNegotiateAck);
  CHECK(ack->results[1].reason == 3);
}

TEST_CASE("bind: an interface the pipe does not serve is rejected", "[rpc]") {
  Client c("srvsvc");
  REQUIRE(c.write(build_bind(1, {{samr_interface().syntax, ndr20_syntax()}})));
  auto ack = parse_bind_ack(c.collect().raw);
  REQUIRE(ack);
  CHECK(ack->results[0].result == kResultProviderRejection);
  CHECK(ack->results[0].reason == kReasonAbstractSyntaxNotSupported);
  // And a request on that context faults instead of running.
  Reply r = c.call(15, share_enum_stub());
  CHECK(r.type == PduType::Fault);
}

TEST_CASE("bind: samr may be bound on the lsarpc pipe (one lsass endpoint)", "[rpc]") {
  Client c("LSARPC");
  REQUIRE(c.write(build_bind(1, {{samr_interface().syntax, ndr20_syntax()}})));
  auto ack = parse_bind_ack(c.collect().raw);
  REQUIRE(ack);
  CHECK(ack->results[0].result == kResultAcceptance);
}

TEST_CASE("bind: DCE/RPC authentication is refused with bind_nak", "[rpc]") {
  Client c("srvsvc");
  Bytes bind = build_bind(1, {{srvsvc_interface().syntax, ndr20_syntax()}}, 4280, PduType::Bind, 16);
  REQUIRE(c.write(bind));
  Reply r = c.collect();
  CHECK(r.type == PduType::BindNak);
  CHECK(load_le16(&r.raw[16]) == kNakAuthTypeNotRecognized);
}

TEST_CASE("bind: a second bind and alter_context", "[rpc]") {
  Client c("srvsvc");
  c.bind();
  auto s = srvsvc_interface().syntax;
  REQUIRE(c.write(build_bind(5, {{s, ndr20_syntax()}})));
  CHECK(c.collect().type == PduType::BindNak);
  // alter_context adds context 0 again and answers without an address.
  REQUIRE(c.write(build_bind(6, {{s, ndr20_syntax()}}, 4280, PduType::AlterContext)));
  Reply r = c.collect();
  CHECK(r.type == PduType::AlterContextResp);
  auto ack = parse_bind_ack(r.raw);
  REQUIRE(ack);
  CHECK(ack->secondary_address.empty());
  CHECK(ack->results[0].result == kResultAcceptance);
}

TEST_CASE("open: pipe names", "[rpc]") {
  auto cfg = test_config();
  RpcContext ctx{&cfg, "alice", false, std::make_shared<FakeAccounts>()};
  CHECK(RpcPipe::open("srvsvc", ctx));
  CHECK(RpcPipe::open("\\PIPE\\SrvSvc", ctx)->name() == "srvsvc");
  CHECK(RpcPipe::open("\\samr", ctx));
  CHECK(RpcPipe::open("WKSSVC", ctx));
  CHECK_FALSE(RpcPipe::open("spoolss", ctx));
  CHECK_FALSE(RpcPipe::open("", ctx));
}

TEST_CASE("request: unknown opnum faults with nca_s_op_rng_error", "[rpc]") {
  for (size_t chunk : kChunkSizes) {
    Client c("srvsvc", chunk);
    c.bind();
    Reply r = c.call(99, {});
    CHECK(r.type == PduType::Fault);
    CHECK(r.fault == kFaultOpRangeError);
    CHECK((r.flags & kPfcDidNotExecute) != 0);
    CHECK(r.raw.size() == 32);
  }
}

TEST_CASE("request: fragmented requests are reassembled", "[rpc]") {
  Client whole("srvsvc");
  whole.bind();
  Bytes stub = share_enum_stub();
  Reply expected = whole.call(15, stub);
  REQUIRE(expected.type == PduType::Response);
  for (size_t chunk : kChunkSizes) {
    Client c("srvsvc", chunk);
    c.bind();
    // Three fragments: 8 + 8 + the rest, with a lying alloc_hint.
    Bytes frags = build_request(9, 0, 15, ByteSpan(stub).first(8), kPfcFirstFrag, 0xFFFFFFFF);
    Bytes mid = build_request(9, 0, 15, ByteSpan(stub).subspan(8, 8), 0);
    Bytes last = build_request(9, 0, 15, ByteSpan(stub).subspan(16), kPfcLastFrag);
    frags.insert(frags.end(), mid.begin(), mid.end());
    frags.insert(frags.end(), last.begin(), last.end());
    REQUIRE(c.write(frags));
    Reply r = c.collect();
    CHECK(r.type == PduType::Response);
    CHECK(r.stub == expected.stub);
  }
}

TEST_CASE("request: responses are fragmented to max_recv_frag", "[rpc]") {
  for (size_t chunk : {size_t(0), size_t(100)}) {
    Client c("srvsvc", test_config(60), chunk);
    c.bind(1432);
    Reply r = c.call(15, share_enum_stub());
    REQUIRE(r.type == PduType::Response);
    CHECK(r.fragments > 2);
    // Every fragment fits and all but the last carry a multiple of 8.
    ByteReader rd(r.raw);
    size_t seen = 0;
    while (rd.remaining() > 0) {
      auto h = parse_header(rd.bytes(16));
      REQUIRE(h);
      CHECK(h->frag_length <= 1432);
      rd.skip(h->frag_length - 16);
      ++seen;
      if (seen < r.fragments) CHECK((h->frag_length - 24) % 8 == 0);
      CHECK(((h->flags & kPfcFirstFrag) != 0) == (seen == 1));
      CHECK(((h->flags & kPfcLastFrag) != 0) == (seen == r.fragments));
    }
    NdrReader nr(r.stub);
    CHECK(nr.u32() == 1);
  }
}

TEST_CASE("read: partial reads report more data", "[rpc]") {
  Client c("srvsvc");
  c.bind();
  REQUIRE(c.pipe->write(build_request(3, 0, 99, {})));
  bool more = false;
  Bytes a = c.pipe->read(10, more);
  CHECK(a.size() == 10);
  CHECK(more);
  Bytes b = c.pipe->read(100, more);
  CHECK(b.size() == 22);
  CHECK_FALSE(more);
  CHECK(c.pipe->read(100, more).empty());
  Bytes out;
  REQUIRE(c.pipe->transceive(build_request(4, 0, 99, {}), 1000, out, more));
  CHECK(out.size() == 32);
}

TEST_CASE("malformed PDUs: broken pipe or fault, never a crash", "[rpc]") {
  SECTION("frag_length below the header size breaks the pipe") {
    Client c("srvsvc");
    CHECK_FALSE(c.pipe->write(header_bytes(11, 3, 8, 1)));
  }
  SECTION("wrong version breaks the pipe") {
    Client c("srvsvc");
    Bytes b = header_bytes(0, 3, 16, 1);
    b[0] = 4;
    CHECK_FALSE(c.pipe->write(b));
  }
  SECTION("server-to-client PDU types break the pipe") {
    Client c("srvsvc");
    CHECK_FALSE(c.pipe->write(header_bytes(2, 3, 16, 1)));
  }
  SECTION("big-endian data representation breaks the pipe") {
    Client c("srvsvc");
    Bytes b = header_bytes(0, 3, 16, 1);
    b[4] = 0x00;
    CHECK_FALSE(c.pipe->write(b));
  }
  SECTION("request shorter than its own header faults") {
    Client c("srvsvc");
    c.bind();
    Bytes b = header_bytes(0, 3, 20, 7);
    b.resize(20);
    REQUIRE(c.write(b));
    CHECK(c.collect().type == PduType::Fault);
  }
  SECTION("bind whose frag_length cuts the context list is nak'ed") {
    Client c("srvsvc");
    Bytes bind = build_bind(1, {{srvsvc_interface().syntax, ndr20_syntax()}});
    bind[8] = 40;
    bind.resize(40);
    REQUIRE(c.write(bind));
    CHECK(c.collect().type == PduType::BindNak);
  }
}

TEST_CASE("malformed requests fault, never a crash", "[rpc]") {
  SECTION("request before bind faults") {
    Client c("srvsvc");
    CHECK(c.call(15, share_enum_stub()).type == PduType::Fault);
  }
  SECTION("middle fragment without a first one faults") {
    Client c("srvsvc");
    c.bind();
    REQUIRE(c.write(build_request(4, 0, 15, share_enum_stub(), kPfcLastFrag)));
    CHECK(c.collect().type == PduType::Fault);
  }
  SECTION("reassembly beyond the cap faults") {
    Client c("srvsvc");
    c.bind();
    Bytes chunk(60000, 0);
    bool faulted = false;
    REQUIRE(c.write(build_request(4, 0, 15, chunk, kPfcFirstFrag)));
    for (int i = 0; i < 20 && !faulted; ++i) {
      REQUIRE(c.write(build_request(4, 0, 15, chunk, 0)));
      faulted = c.pipe->pending_bytes() > 0;
    }
    CHECK(faulted);
    CHECK(c.collect().fault == kFaultProtoError);
  }
  SECTION("a request with an auth trailer faults") {
    Client c("srvsvc");
    c.bind();
    Bytes req = build_request(4, 0, 15, share_enum_stub());
    req[10] = 8;
    REQUIRE(c.write(req));
    CHECK(c.collect().fault == kFaultAccessDenied);
  }
  SECTION("shutdown, orphaned and co_cancel are absorbed") {
    Client c("srvsvc");
    c.bind();
    REQUIRE(c.write(build_request(4, 0, 15, share_enum_stub(), kPfcFirstFrag)));
    REQUIRE(c.write(header_bytes(19, 3, 16, 4)));
    REQUIRE(c.write(header_bytes(18, 3, 16, 4)));
    REQUIRE(c.write(header_bytes(17, 3, 16, 4)));
    CHECK(c.pipe->pending_bytes() == 0);
  }
}

TEST_CASE("decode errors fault with nca_s_fault_ndr", "[rpc]") {
  Client c("srvsvc");
  c.bind();
  Bytes stub = share_enum_stub();
  for (size_t n = 0; n < stub.size(); ++n) {
    Reply r = c.call(15, Bytes(stub.begin(), stub.begin() + n));
    INFO("prefix " << n);
    CHECK(r.fault == kFaultNdr);
  }
}
