// The registry of AD account names LSA lookups answer from.
#include <catch2/catch.hpp>

#include "rpc/domain_names.hpp"

using namespace ringsmb;
using namespace ringsmb::rpc;

namespace {
const Sid kDomain = *Sid::parse("S-1-5-21-1004336348-1177238915-682003330");
}

TEST_CASE("DomainNames: a logon names its user, its domain and the domain's well-known accounts", "[rpc]") {
  DomainNames names;
  CHECK_FALSE(names.by_sid(kDomain.with_rid(1104)));
  names.learn_user(kDomain, "EXAMPLE", 1104, "alice");
  auto alice = names.by_sid(kDomain.with_rid(1104));
  REQUIRE(alice);
  CHECK(alice->domain == "EXAMPLE");
  CHECK(alice->name == "alice");
  CHECK_FALSE(alice->is_group);
  CHECK(alice->domain_sid == kDomain);
  auto domain = names.by_sid(kDomain);
  REQUIRE(domain);
  CHECK(domain->name.empty());
  CHECK(domain->domain == "EXAMPLE");
  auto users = names.by_sid(kDomain.with_rid(513));
  REQUIRE(users);
  CHECK(users->name == "Domain Users");
  CHECK(users->is_group);
  // A group the PAC only gives by SID has no name to give.
  CHECK_FALSE(names.by_sid(kDomain.with_rid(1105)));
  // Another domain's SIDs stay unknown.
  CHECK_FALSE(names.by_sid(Sid::parse("S-1-5-21-1-2-3")->with_rid(513)));
  // And back: names to SIDs, the domain case-insensitively.
  auto back = names.by_name("example", "ALICE");
  REQUIRE(back);
  CHECK(back->sid == kDomain.with_rid(1104));
  REQUIRE(names.by_name("EXAMPLE", "domain admins"));
  CHECK(names.by_name("EXAMPLE", "domain admins")->sid == kDomain.with_rid(512));
  REQUIRE(names.by_name("EXAMPLE", ""));
  CHECK(names.by_name("EXAMPLE", "")->sid == kDomain);
  CHECK_FALSE(names.by_name("OTHER", "alice"));
}

TEST_CASE("DomainNames: a renamed account takes its new name; the registry stays bounded", "[rpc]") {
  DomainNames names;
  names.learn_user(kDomain, "EXAMPLE", 1104, "alice");
  names.learn_user(kDomain, "EXAMPLE", 1104, "alice.smith");
  CHECK(names.by_sid(kDomain.with_rid(1104))->name == "alice.smith");
  CHECK_FALSE(names.by_name("EXAMPLE", "alice"));
  for (uint32_t i = 0; i < DomainNames::kMaxAccounts + 10; ++i)
    names.learn_user(kDomain, "EXAMPLE", 5000 + i, "user" + std::to_string(i));
  CHECK_FALSE(names.by_sid(kDomain.with_rid(1104)));  // the oldest went first
  CHECK(names.by_sid(kDomain.with_rid(5000 + DomainNames::kMaxAccounts + 9)));
  // Nothing is learnt without a domain name or a domain SID.
  DomainNames empty;
  empty.learn_user(Sid{1, 5, {}}, "EXAMPLE", 1104, "alice");
  empty.learn_user(kDomain, "", 1104, "alice");
  CHECK_FALSE(empty.by_sid(kDomain.with_rid(1104)));
  CHECK_FALSE(empty.by_sid(kDomain));
}
