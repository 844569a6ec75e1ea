#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/host_match.hpp"

using namespace ringsmb::config;
using List = std::vector<std::string>;

TEST_CASE("host entries: addresses, prefixes, networks", "[config][hosts]") {
  CHECK(host_list_matches(List{"192.168.1.7"}, "192.168.1.7"));
  CHECK_FALSE(host_list_matches(List{"192.168.1.7"}, "192.168.1.70"));
  CHECK(host_list_matches(List{"192.168.1."}, "192.168.1.70"));
  CHECK_FALSE(host_list_matches(List{"192.168.1."}, "192.168.10.1"));
  CHECK(host_list_matches(List{"127."}, "127.0.0.1"));
  CHECK(host_list_matches(List{"10.0.0.0/8"}, "10.200.3.4"));
  CHECK_FALSE(host_list_matches(List{"10.0.0.0/8"}, "11.0.0.1"));
  CHECK(host_list_matches(List{"10.1.2.0/255.255.255.0"}, "10.1.2.99"));
  CHECK_FALSE(host_list_matches(List{"10.1.2.0/255.255.255.0"}, "10.1.3.99"));
  CHECK(host_list_matches(List{"0.0.0.0/0"}, "203.0.113.9"));
  CHECK(host_list_matches(List{"ALL"}, "203.0.113.9"));
  CHECK(host_list_matches(List{"all"}, "::1"));
  CHECK(host_list_matches(List{"192.168.*.1"}, "192.168.44.1"));
  CHECK_FALSE(host_list_matches(List{"192.168.*.1"}, "192.168.44.2"));
}

TEST_CASE("host entries: IPv6 and IPv4-mapped clients", "[config][hosts]") {
  CHECK(host_list_matches(List{"::1"}, "::1"));
  CHECK(host_list_matches(List{"0:0::1"}, "::1"));
  CHECK(host_list_matches(List{"[::1]"}, "::1"));
  CHECK(host_list_matches(List{"fe80::/10"}, "fe80::1234"));
  CHECK_FALSE(host_list_matches(List{"fe80::/10"}, "2001:db8::1"));
  // A dual-stack listener reports IPv4 clients as ::ffff:a.b.c.d.
  CHECK(host_list_matches(List{"192.168.1."}, "::ffff:192.168.1.5"));
  CHECK(host_list_matches(List{"192.168.1.5"}, "::ffff:192.168.1.5"));
  CHECK(host_list_matches(List{"192.168.0.0/16"}, "::ffff:192.168.1.5"));
}

TEST_CASE("host names and netgroups never match", "[config][hosts]") {
  CHECK_FALSE(host_list_matches(List{"fileserver.example.com"}, "192.0.2.1"));
  CHECK_FALSE(host_list_matches(List{"@trusted"}, "192.0.2.1"));
  CHECK_FALSE(host_list_matches(List{"10.0.0.1"}, "not-an-address"));
}

TEST_CASE("EXCEPT", "[config][hosts]") {
  List l{"10.0.0.0/8", "EXCEPT", "10.1.0.0/16"};
  CHECK(host_list_matches(l, "10.2.3.4"));
  CHECK_FALSE(host_list_matches(l, "10.1.3.4"));
  CHECK_FALSE(host_list_matches(l, "192.0.2.1"));
  List nested{"ALL", "except", "10.", "EXCEPT", "10.0.0.1"};
  CHECK(host_list_matches(nested, "192.0.2.1"));
  CHECK_FALSE(host_list_matches(nested, "10.0.0.2"));
  CHECK(host_list_matches(nested, "10.0.0.1"));
}

TEST_CASE("hosts allow / deny combination (Samba's rules)", "[config][hosts]") {
  List none;
  CHECK(host_allowed(none, none, "192.0.2.1"));
  // Only allow: listed hosts only.
  CHECK(host_allowed(List{"192.0.2."}, none, "192.0.2.1"));
  CHECK_FALSE(host_allowed(List{"192.0.2."}, none, "198.51.100.1"));
  // Only deny: all but the listed.
  CHECK_FALSE(host_allowed(none, List{"192.0.2.1"}, "192.0.2.1"));
  CHECK(host_allowed(none, List{"192.0.2.1"}, "192.0.2.2"));
  // Both: allow wins; otherwise deny; otherwise allowed.
  CHECK(host_allowed(List{"192.0.2.1"}, List{"ALL"}, "192.0.2.1"));
  CHECK_FALSE(host_allowed(List{"192.0.2.1"}, List{"ALL"}, "192.0.2.2"));
  CHECK(host_allowed(List{"192.0.2.1"}, List{"10."}, "198.51.100.1"));
  // Loopback: allowed unless denied (and not allowed explicitly).
  CHECK(host_allowed(List{"192.0.2.1"}, none, "127.0.0.1"));
  CHECK(host_allowed(List{"192.0.2.1"}, none, "::1"));
  CHECK_FALSE(host_allowed(none, List{"127.0.0.1"}, "127.0.0.1"));
  CHECK_FALSE(host_allowed(List{"10.0.0.0/8"}, List{"ALL"}, "127.0.0.1"));
  CHECK(host_allowed(List{"127.0.0.1"}, List{"ALL"}, "127.0.0.1"));
  // An address we cannot read is refused when a list exists.
  CHECK_FALSE(host_allowed(none, List{"10."}, "?"));
}

TEST_CASE("host list validation", "[config][hosts]") {
  for (const auto& good : {List{"192.168.1.", "10.0.0.0/8", "::1", "fe80::/64", "ALL", "host-1.example", "@ng"},
                           List{"ALL", "EXCEPT", "10.0.0.1"}, List{"10.0.0.0/255.0.0.0", "192.168.*"}}) {
    INFO(good[0]);
    CHECK(check_host_list(good));
  }
  auto bad = [](List l) {
    auto r = check_host_list(l);
    REQUIRE_FALSE(r);
    return r.error();
  };
  CHECK(bad({"10.0.0.0/33"}) == "'10.0.0.0/33' is not a valid network (use 10.0.0.0/8 or 10.0.0.0/255.0.0.0)");
  CHECK(bad({"10.0.0.0/x"}).starts_with("'10.0.0.0/x' is not a valid network"));
  CHECK(bad({"fe80::/129"}).starts_with("'fe80::/129' is not a valid network"));
  CHECK(bad({"300.1.2.3"}) == "'300.1.2.3' is not a valid IPv4 address");
  CHECK(bad({"10.1"}) == "'10.1' is not a valid IPv4 address");
  CHECK(bad({"fe80:::1"}) == "'fe80:::1' is not a valid IPv6 address");
  CHECK(bad({"bad$host"}) == "'bad$host' is not an address, network or host name");
  CHECK(bad({"EXCEPT", "10."}) == "EXCEPT needs entries on both sides");
  CHECK(bad({"10.", "EXCEPT"}) == "EXCEPT needs entries on both sides");
}
