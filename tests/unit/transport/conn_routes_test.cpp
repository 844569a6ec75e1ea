// ConnRoutes: where a connection lives once it moved to a bulk worker.
#include <catch2/catch.hpp>

#include "transport/conn_routes.hpp"

using namespace ringsmb::transport;

TEST_CASE("ConnRoutes names the worker a connection moved to until it is erased", "[transport]") {
  ConnRoutes routes;
  auto* bulk = reinterpret_cast<Worker*>(uintptr_t(0x1000));  // only compared, never used
  auto* other = reinterpret_cast<Worker*>(uintptr_t(0x2000));
  CHECK(routes.moved_to(7) == nullptr);  // nothing moved: the address's own worker
  routes.set(7, bulk);
  routes.set(8, other);
  CHECK(routes.moved_to(7) == bulk);
  CHECK(routes.moved_to(8) == other);
  CHECK(routes.moved_to(9) == nullptr);
  routes.set(7, other);  // moved again: replaced, still one entry
  CHECK(routes.moved_to(7) == other);
  routes.erase(7);
  CHECK(routes.moved_to(7) == nullptr);
  CHECK(routes.moved_to(8) == other);
  routes.erase(8);
  routes.erase(8);  // twice: no harm, the count stays right
  CHECK(routes.moved_to(8) == nullptr);
  routes.set(8, bulk);
  CHECK(routes.moved_to(8) == bulk);  // the count did not go below zero
}
