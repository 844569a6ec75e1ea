// The descriptor budget, per-user open counts and per-address connection
// counts that bound what clients together make the process hold.
#include "state/resource_budget.hpp"

#include <catch2/catch.hpp>

using namespace ringsmb;

TEST_CASE("the descriptor budget keeps a reserve, and open files leave room for connections", "[state]") {
  state::ResourceBudget b;
  b.set_descriptor_limit(256, 0);
  CHECK(b.reserve() == 32);
  CHECK(b.usable_descriptors() == 224);
  CHECK(b.connection_fits(223));
  CHECK_FALSE(b.connection_fits(224));
  b.open_files = 100;
  CHECK(b.open_file_fits(91));        // 91 + 100 + 32 < 224
  CHECK_FALSE(b.open_file_fits(92));  // files may not eat the connections' reserve
  CHECK(b.connection_fits(123));      // ...which connections may still use
  b.set_descriptor_limit(1u << 20, 0);
  CHECK(b.reserve() == 1024);
}

TEST_CASE("what the daemon holds itself is not the clients'", "[state]") {
  state::ResourceBudget b;
  b.set_descriptor_limit(256, 40);  // rings, eventfds, listeners, log...
  CHECK(b.reserve() == 32);
  CHECK(b.usable_descriptors() == 184);  // 256 - 40 - 32: accept() never runs out first
  b.set_descriptor_limit(64, 40);        // too small for both: half of the 24 left
  CHECK(b.usable_descriptors() == 12);
  b.set_descriptor_limit(32, 40);
  CHECK(b.usable_descriptors() == 0);
  CHECK_FALSE(b.connection_fits(0));
}

TEST_CASE("an open charge counts against the process and the user for its life", "[state]") {
  state::ResourceBudget b;
  auto* alice = b.user_open_count("alice");
  CHECK(b.user_open_count("alice") == alice);
  {
    state::OpenCharge one(&b.open_files, alice);
    state::OpenCharge two(&b.open_files, alice);
    CHECK(b.open_files == 2);
    CHECK(*alice == 2);
    state::OpenCharge moved = std::move(two);
    CHECK(*alice == 2);
  }
  CHECK(b.open_files == 0);
  CHECK(*alice == 0);
}

TEST_CASE("connections per address are counted and bounded", "[state]") {
  state::ResourceBudget b;
  CHECK(b.add_connection_from("10.0.0.1", 2));
  CHECK(b.add_connection_from("10.0.0.1", 2));
  CHECK_FALSE(b.add_connection_from("10.0.0.1", 2));
  CHECK(b.add_connection_from("10.0.0.2", 2));
  b.remove_connection_from("10.0.0.1");
  CHECK(b.add_connection_from("10.0.0.1", 2));
  CHECK(b.add_connection_from("10.0.0.1", 0));  // 0: no limit
}
