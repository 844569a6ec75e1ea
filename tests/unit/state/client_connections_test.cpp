// Each client's connections, oldest first (state/client_connections.hpp):
// where its lease breaks go.
#include <catch2/catch.hpp>

#include "state/client_connections.hpp"

using namespace ringsmb::state;

TEST_CASE("a client's lease breaks go to its oldest live connection", "[lease]") {
  ClientConnections clients;
  Guid a{}, b{};
  a.fill(1);
  b.fill(2);
  CHECK_FALSE(clients.oldest(a));
  clients.add(a, {0, 10});
  clients.add(b, {1, 11});
  clients.add(a, {1, 12});  // the same client again, on another worker
  REQUIRE(clients.oldest(a));
  CHECK(clients.oldest(a)->conn_id == 10);
  CHECK(clients.oldest(b)->conn_id == 11);
  clients.remove(a, {0, 10});  // the first ends: the next one takes its breaks
  CHECK(clients.oldest(a)->conn_id == 12);
  CHECK(clients.oldest(a)->worker == 1);
  clients.remove(a, {1, 12});
  CHECK_FALSE(clients.oldest(a));
  clients.remove(a, {1, 12});  // twice, or never added: nothing
  CHECK(clients.oldest(b)->conn_id == 11);
}
