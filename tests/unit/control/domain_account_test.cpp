#include <catch2/catch.hpp>

#include "control/domain_account.hpp"
#include "rpc/domain_names.hpp"

using namespace ringsmb;
using namespace ringsmb::control;

namespace {

kerberos::LogonInfo alice() {
  kerberos::LogonInfo info;
  info.account_name = "alice";
  info.domain_name = "EXAMPLE";
  info.domain_sid = {5, {21, 1, 2, 3}};
  info.user_rid = 1104;
  info.primary_group_rid = 513;
  info.group_rids = {513, 1105};
  return info;
}

}  // namespace

TEST_CASE("a domain account is looked up as winbind, then sssd, then locally names it", "[control]") {
  CHECK(domain_account_names(alice(), "EXAMPLE.TEST") ==
        std::vector<std::string>{"EXAMPLE\\alice", "alice@example.test", "alice"});
  kerberos::LogonInfo no_domain = alice();
  no_domain.domain_name.clear();
  CHECK(domain_account_names(no_domain, "") == std::vector<std::string>{"alice"});
  CHECK(principal_realm("alice@EXAMPLE.TEST") == "EXAMPLE.TEST");
  CHECK(principal_realm("cifs/nas@EXAMPLE.TEST") == "EXAMPLE.TEST");
  CHECK(principal_realm("alice") == "");
}

TEST_CASE("a session's SIDs: the user's first, then each group once", "[control]") {
  auto sids = session_sids(alice());
  REQUIRE(sids);
  CHECK(*sids == std::vector<std::string>{"S-1-5-21-1-2-3-1104", "S-1-5-21-1-2-3-513", "S-1-5-21-1-2-3-1105"});
  kerberos::LogonInfo crowded = alice();
  for (uint32_t rid = 2000; rid < 5000; ++rid) crowded.group_rids.push_back(rid);
  auto refused = session_sids(crowded);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("more than a session carries") != std::string::npos);
}

TEST_CASE("a logon tells LSA lookups its user's and domain's names", "[control]") {
  remember_domain_names(alice());
  auto user = rpc::known_domain_names().by_sid(*rpc::Sid::parse("S-1-5-21-1-2-3-1104"));
  REQUIRE(user);
  CHECK(user->domain == "EXAMPLE");
  CHECK(user->name == "alice");
  auto domain = rpc::known_domain_names().by_sid(*rpc::Sid::parse("S-1-5-21-1-2-3"));
  REQUIRE(domain);
  CHECK(domain->domain == "EXAMPLE");
  rpc::known_domain_names().clear();
}
