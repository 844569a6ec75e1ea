#include <catch2/catch.hpp>

#include "control/home_shares.hpp"

using namespace ringsmb;
using namespace ringsmb::control;

namespace {

// Accounts alice -> alice_u, bob -> bob_u; Unix users with homes: alice_u,
// bob_u, carol (a Unix user without an SMB account).
AccountLookup fake_accounts() {
  return {[](const std::string& a) -> std::optional<std::string> {
            if (a == "alice" || a == "ALICE") return "alice_u";
            if (a == "bob") return "bob_u";
            return std::nullopt;
          },
          [](const std::string& u) -> std::optional<std::string> {
            if (u == "alice_u") return "/home/alice";
            if (u == "bob_u") return "/home/bob";
            if (u == "carol") return "/home/carol";
            return std::nullopt;
          }};
}

config::Config with_homes(std::vector<std::string> valid_users) {
  config::Config cfg;
  config::ShareConfig h;
  h.name = "homes";
  h.valid_users = std::move(valid_users);
  h.recycle.enabled = true;
  h.recycle.repository = ".recycle/%U";
  cfg.homes = h;
  config::ShareConfig data;
  data.name = "data";
  data.path = "/srv/data/%U";
  data.comment = "%S of %U";
  cfg.shares.push_back(data);
  return cfg;
}

Caller alice() { return {"alice", "alice_u", false}; }

}  // namespace

TEST_CASE("homes: one's own name, and 'homes', reach one's home directory", "[control][homes]") {
  auto cfg = with_homes({"%S"});
  auto own = resolve_share(cfg, "alice", alice(), fake_accounts());
  REQUIRE(own);
  CHECK(own->is_home);
  CHECK_FALSE(own->is_foreign_home);
  CHECK(own->share.name == "alice");
  CHECK(own->share.path == "/home/alice");
  CHECK(own->share.valid_users == std::vector<std::string>{"alice"});
  CHECK(own->share.recycle.repository == ".recycle/alice");
  CHECK(own->share.comment == "Home directory of alice");
  auto via_homes = resolve_share(cfg, "HOMES", alice(), fake_accounts());
  REQUIRE(via_homes);
  CHECK(via_homes->share.path == "/home/alice");
}

TEST_CASE("homes: another user's home exists only where valid users name the caller", "[control][homes]") {
  CHECK_FALSE(resolve_share(with_homes({"%S"}), "bob", alice(), fake_accounts())->share.valid_users.empty());
  // Resolved, but valid users (bob) keeps alice out: the control plane answers BAD_NETWORK_NAME.
  auto foreign = resolve_share(with_homes({"%S"}), "bob", alice(), fake_accounts());
  CHECK(foreign->is_foreign_home);
  CHECK(foreign->share.valid_users == std::vector<std::string>{"bob"});
  CHECK(foreign->share.path == "/home/bob");
  // No valid users: nobody else's home exists for the caller.
  CHECK_FALSE(resolve_share(with_homes({}), "bob", alice(), fake_accounts()));
  // A Unix user without an SMB account has a home too, as in Samba.
  CHECK(resolve_share(with_homes({"%S", "alice"}), "carol", alice(), fake_accounts())->share.path == "/home/carol");
  CHECK_FALSE(resolve_share(with_homes({"%S"}), "nobody-here", alice(), fake_accounts()));
  // Guests and anonymous callers have no home.
  CHECK_FALSE(resolve_share(with_homes({"%S"}), "homes", Caller{"guest", "nobody", true}, fake_accounts()));
  CHECK_FALSE(resolve_share(config::Config{}, "alice", alice(), fake_accounts()));
}

TEST_CASE("named shares win over homes and expand %U %S", "[control][homes]") {
  auto cfg = with_homes({"%S"});
  auto data = resolve_share(cfg, "DATA", alice(), fake_accounts());
  REQUIRE(data);
  CHECK_FALSE(data->is_home);
  CHECK(data->share.path == "/srv/data/alice");
  CHECK(data->share.comment == "data of alice");
  CHECK(own_home_share(cfg, alice(), fake_accounts()) == "alice");
  CHECK(own_home_share(cfg, Caller{"", "", true}, fake_accounts()).empty());
  CHECK(own_home_share(config::Config{}, alice(), fake_accounts()).empty());
}

TEST_CASE("%H without a home refuses rather than naming another directory", "[control][homes]") {
  config::Config cfg;
  config::ShareConfig s;
  s.name = "mine";
  s.path = "%H/data";
  cfg.shares.push_back(s);
  CHECK(resolve_share(cfg, "mine", alice(), fake_accounts())->share.path == "/home/alice/data");
  CHECK_FALSE(resolve_share(cfg, "mine", Caller{"dave", "dave", false}, fake_accounts()));
}
