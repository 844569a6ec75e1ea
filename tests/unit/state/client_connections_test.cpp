// Each client's connections with a valid session, oldest first, by user
// (state/client_connections.hpp): where its lease breaks go.
#include <catch2/catch.hpp>

#include "state/client_connections.hpp"

using namespace ringsmb::state;

TEST_CASE("a client's lease breaks go to its oldest live connection of the user", "[lease]") {
  ClientConnections clients;
  Guid a{}, b{};
  a.fill(1);
  b.fill(2);
  CHECK_FALSE(clients.oldest(a, "alice"));
  clients.add(a, {0, 10}, 100, "alice");
  clients.add(b, {1, 11}, 101, "alice");
  clients.add(a, {1, 12}, 102, "alice");  // the same client again, on another worker
  REQUIRE(clients.oldest(a, "alice"));
  CHECK(clients.oldest(a, "alice")->conn_id == 10);
  CHECK(clients.oldest(b, "alice")->conn_id == 11);
  clients.remove(a, {0, 10});  // the first ends: the next one takes its breaks
  CHECK(clients.oldest(a, "alice")->conn_id == 12);
  CHECK(clients.oldest(a, "alice")->worker == 1);
  clients.remove(a, {1, 12});
  CHECK_FALSE(clients.oldest(a, "alice"));
  clients.remove(a, {1, 12});  // twice, or never added: nothing
  CHECK(clients.oldest(b, "alice")->conn_id == 11);
}

TEST_CASE("another user's session with the same ClientGuid takes no breaks", "[lease]") {
  ClientConnections clients;
  Guid a{};
  a.fill(1);
  clients.add(a, {0, 10}, 100, "mallory");  // older, with the victim's ClientGuid
  clients.add(a, {0, 11}, 101, "alice");
  CHECK(clients.oldest(a, "alice")->conn_id == 11);
  CHECK(clients.oldest(a, "mallory")->conn_id == 10);
  clients.rename(a, {0, 10}, 100, "alice");  // re-authenticated as alice
  CHECK(clients.oldest(a, "alice")->conn_id == 10);
  clients.remove_session(a, {0, 10}, 100);  // logged off: the connection no longer counts
  CHECK(clients.oldest(a, "alice")->conn_id == 11);
  CHECK_FALSE(clients.oldest(a, "mallory"));
}

TEST_CASE("a connection counts for each of its sessions until the last ends", "[lease]") {
  ClientConnections clients;
  Guid a{};
  a.fill(1);
  clients.add(a, {0, 10}, 100, "alice");
  clients.add(a, {0, 10}, 101, "alice");
  clients.add(a, {0, 12}, 102, "alice");
  clients.remove_session(a, {0, 10}, 100);
  CHECK(clients.oldest(a, "alice")->conn_id == 10);
  clients.remove_session(a, {0, 10}, 101);
  CHECK(clients.oldest(a, "alice")->conn_id == 12);
}
