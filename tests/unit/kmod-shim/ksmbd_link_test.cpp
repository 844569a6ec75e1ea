// The kernel side of kmod-shim without a kernel: which ksmbd netlink
// families ringsmb-ctld accepts (and the sentences it stops with), and the
// decoding of the datagrams ksmbd.ko sends, whole and cut at every length.
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "kmod-shim/ksmbd_abi.hpp"
#include "kmod-shim/ksmbd_link.hpp"

using namespace ringsmb;
using namespace ringsmb::kmod;

namespace {

constexpr int kFamily = 0x1c;

void append(Bytes& b, const void* p, size_t n) {
  auto* c = static_cast<const uint8_t*>(p);
  b.insert(b.end(), c, c + n);
}

// One generic-netlink message as the kernel builds it: nlmsghdr, genlmsghdr,
// then ATTRS (type, payload) padded to 4 bytes each.
Bytes genl_message(int type, uint8_t cmd, const std::vector<std::pair<uint16_t, Bytes>>& attrs) {
  Bytes body;
  genlmsghdr g{cmd, abi::kFamilyVersion, 0};
  append(body, &g, sizeof g);
  for (const auto& [attr_type, payload] : attrs) {
    nlattr a{uint16_t(NLA_HDRLEN + payload.size()), attr_type};
    append(body, &a, sizeof a);
    append(body, payload.data(), payload.size());
    body.resize(NLA_ALIGN(body.size()));
  }
  nlmsghdr h{uint32_t(NLMSG_HDRLEN + body.size()), uint16_t(type), 0, 0, 0};
  Bytes msg;
  append(msg, &h, sizeof h);
  append(msg, body.data(), body.size());
  msg.resize(NLMSG_ALIGN(msg.size()));
  return msg;
}

Bytes filled(size_t n, uint8_t v) { return Bytes(n, v); }

}  // namespace

TEST_CASE("ksmbd family check: version 1 with the 16 events (or more) is accepted", "[kmod]") {
  CHECK(check_family(1, abi::kMinMaxAttr).has_value());
  CHECK(check_family(1, 17).has_value());  // a newer module (LOGIN_REQUEST_EXT): still this ABI
}

TEST_CASE("ksmbd family check: another ABI version or too few events stop ctld with a sentence", "[kmod]") {
  auto v2 = check_family(2, 17);
  REQUIRE_FALSE(v2);
  CHECK(v2.error().find("version 2") != std::string::npos);
  CHECK(v2.error().find("speaks version 1") != std::string::npos);
  auto v0 = check_family(0, 15);
  REQUIRE_FALSE(v0);
  CHECK(v0.error().find("version 0") != std::string::npos);
  auto old = check_family(1, 11);
  REQUIRE_FALSE(old);
  CHECK(old.error().find("too old") != std::string::npos);
}

TEST_CASE("ksmbd datagram: each request's command attribute, other families and attributes skipped", "[kmod]") {
  Bytes d = genl_message(kFamily, abi::kLoginRequest, {{abi::kUnspec, filled(3, 9)}, {abi::kLoginRequest, filled(116, 1)}});
  Bytes other = genl_message(kFamily + 1, abi::kShareConfigRequest, {{abi::kShareConfigRequest, filled(132, 2)}});
  Bytes tree = genl_message(kFamily, abi::kTreeConnectRequest, {{abi::kTreeConnectRequest, filled(264, 3)}});
  Bytes no_attr = genl_message(kFamily, abi::kRpcRequest, {{abi::kLoginRequest, filled(8, 4)}});
  d.insert(d.end(), other.begin(), other.end());
  d.insert(d.end(), tree.begin(), tree.end());
  d.insert(d.end(), no_attr.begin(), no_attr.end());
  std::vector<KernelEvent> out;
  parse_datagram(d, kFamily, out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].event == abi::kLoginRequest);
  CHECK(out[0].payload == filled(116, 1));
  CHECK(out[1].event == abi::kTreeConnectRequest);
  CHECK(out[1].payload == filled(264, 3));
}

TEST_CASE("ksmbd datagram: an error message (the kernel refusing an answer) is no event", "[kmod]") {
  nlmsgerr e{};
  e.error = -EINVAL;
  Bytes d;
  nlmsghdr h{uint32_t(NLMSG_HDRLEN + sizeof e), NLMSG_ERROR, 0, 0, 0};
  append(d, &h, sizeof h);
  append(d, &e, sizeof e);
  Bytes rpc = genl_message(kFamily, abi::kRpcRequest, {{abi::kRpcRequest, filled(12, 5)}});
  d.insert(d.end(), rpc.begin(), rpc.end());
  std::vector<KernelEvent> out;
  parse_datagram(d, kFamily, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].event == abi::kRpcRequest);
}

TEST_CASE("ksmbd datagram: cut at every length, only whole messages come out", "[kmod]") {
  Bytes first = genl_message(kFamily, abi::kShareConfigRequest, {{abi::kShareConfigRequest, filled(132, 6)}});
  Bytes second = genl_message(kFamily, abi::kLogoutRequest, {{abi::kLogoutRequest, filled(115, 7)}});
  Bytes d = first;
  d.insert(d.end(), second.begin(), second.end());
  for (size_t cut = 0; cut <= d.size(); ++cut) {
    std::vector<KernelEvent> out;
    parse_datagram(ByteSpan(d.data(), cut), kFamily, out);
    size_t whole = cut >= d.size() ? 2 : cut >= first.size() ? 1 : 0;
    INFO("cut at " << cut);
    REQUIRE(out.size() == whole);
    if (whole >= 1) CHECK(out[0].payload == filled(132, 6));
    if (whole == 2) CHECK(out[1].payload == filled(115, 7));
  }
}

TEST_CASE("ksmbd datagram: lengths that lie end the walk without reading past the datagram", "[kmod]") {
  Bytes d = genl_message(kFamily, abi::kLoginRequest, {{abi::kLoginRequest, filled(116, 1)}});
  SECTION("a message longer than the datagram") {
    uint32_t len = uint32_t(d.size() + 4);
    std::memcpy(d.data(), &len, sizeof len);
  }
  SECTION("a message shorter than its header") {
    uint32_t len = 8;
    std::memcpy(d.data(), &len, sizeof len);
  }
  SECTION("an attribute longer than its message") {
    uint16_t len = 0xFFF0;
    std::memcpy(d.data() + NLMSG_HDRLEN + GENL_HDRLEN, &len, sizeof len);
  }
  SECTION("an attribute shorter than its header") {
    uint16_t len = 2;
    std::memcpy(d.data() + NLMSG_HDRLEN + GENL_HDRLEN, &len, sizeof len);
  }
  std::vector<KernelEvent> out;
  parse_datagram(d, kFamily, out);
  CHECK(out.empty());
}
