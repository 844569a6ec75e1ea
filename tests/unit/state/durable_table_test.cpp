// The table of durable opens kept without their connection, and the
// CreateGuid index (state/durable_table.hpp): take by persistent id under
// a check, by lease, expiry per worker and deadline. No sockets, no threads.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include "state/durable_table.hpp"

using namespace ringsmb;
using namespace ringsmb::state;

namespace {

Guid guid(uint8_t b) {
  Guid g{};
  g.fill(b);
  return g;
}

KeptOpen kept(uint64_t id, uint32_t worker, int64_t deadline_ms, std::shared_ptr<Lease> lease = nullptr) {
  KeptOpen k;
  k.open = std::make_unique<Open>();
  k.open->persistent_id = k.open->volatile_id = id;
  k.open->lease = std::move(lease);
  k.owner = "alice";
  k.worker = worker;
  k.deadline_ms = deadline_ms;
  return k;
}

NtStatus accept(const KeptOpen&) { return NtStatus::Success; }

}  // namespace

TEST_CASE("a kept open is taken once, by its persistent id", "[durable]") {
  DurableTable t;
  t.keep(kept(7, 0, 1000));
  CHECK(t.kept() == 1);
  auto missing = t.take(8, accept);
  REQUIRE_FALSE(missing);
  CHECK(missing.error() == NtStatus::ObjectNameNotFound);
  auto k = t.take(7, accept);
  REQUIRE(k);
  CHECK(k->open->persistent_id == 7);
  CHECK(t.kept() == 0);
  auto again = t.take(7, accept);
  REQUIRE_FALSE(again);
  CHECK(again.error() == NtStatus::ObjectNameNotFound);
}

TEST_CASE("a refused take leaves the open kept, with the check's status", "[durable]") {
  DurableTable t;
  t.keep(kept(7, 0, 1000));
  auto refused = t.take(7, [](const KeptOpen& k) {
    return k.owner == "bob" ? NtStatus::Success : NtStatus::AccessDenied;
  });
  REQUIRE_FALSE(refused);
  CHECK(refused.error() == NtStatus::AccessDenied);
  CHECK(t.kept() == 1);
  CHECK(t.take(7, [](const KeptOpen& k) { return k.owner == "alice" ? NtStatus::Success : NtStatus::AccessDenied; }));
}

TEST_CASE("expiry takes only the worker's opens past their deadline", "[durable]") {
  DurableTable t;
  t.keep(kept(1, 0, 1000));
  t.keep(kept(2, 0, 5000));
  t.keep(kept(3, 1, 1000));
  CHECK(t.expire(999, 0).empty());
  auto due = t.expire(1000, 0);
  REQUIRE(due.size() == 1);
  CHECK(due[0].open->persistent_id == 1);
  CHECK(t.kept() == 2);
  auto other = t.expire(1000, 1);
  REQUIRE(other.size() == 1);
  CHECK(other[0].open->persistent_id == 3);
  CHECK(t.expire(10000, 0).size() == 1);
  CHECK(t.kept() == 0);
}

TEST_CASE("every kept open of a lease is taken with it", "[durable]") {
  DurableTable t;
  auto lease = std::make_shared<Lease>();
  auto other = std::make_shared<Lease>();
  t.keep(kept(1, 0, 1000, lease));
  t.keep(kept(2, 0, 1000, lease));
  t.keep(kept(3, 0, 1000, other));
  auto taken = t.take_lease(lease.get());
  CHECK(taken.size() == 2);
  CHECK(t.kept() == 1);
  CHECK(t.take(3, accept));
}

TEST_CASE("the CreateGuid index answers only the client that made the open", "[durable]") {
  DurableTable t;
  t.index_create_guid(guid(1), guid(9), 42);
  CHECK(t.find_create_guid(guid(1), guid(9)) == std::optional<uint64_t>(42));
  CHECK_FALSE(t.find_create_guid(guid(2), guid(9)));
  CHECK_FALSE(t.find_create_guid(guid(1), guid(8)));
  t.unindex_create_guid(guid(9), 41);  // another open's id: kept
  CHECK(t.find_create_guid(guid(1), guid(9)));
  t.unindex_create_guid(guid(9), 42);
  CHECK_FALSE(t.find_create_guid(guid(1), guid(9)));
}

TEST_CASE("for_each_kept visits every kept open once, and takes none", "[durable]") {
  DurableTable t;
  int visited = 0;
  t.for_each_kept([&](const KeptOpen&) { ++visited; });
  CHECK(visited == 0);
  for (uint64_t id = 1; id <= 40; ++id) t.keep(kept(id, 0, 1000));
  uint64_t sum = 0;
  t.for_each_kept([&](const KeptOpen& k) {
    ++visited;
    sum += k.open->persistent_id;
  });
  CHECK(visited == 40);
  CHECK(sum == 40 * 41 / 2);
  CHECK(t.kept() == 40);
}

TEST_CASE("take_all empties the table", "[durable]") {
  DurableTable t;
  for (uint64_t id = 1; id <= 40; ++id) t.keep(kept(id, uint32_t(id % 3), 1000));
  CHECK(t.kept() == 40);
  CHECK(t.take_all().size() == 40);
  CHECK(t.kept() == 0);
}

TEST_CASE("the AppInstanceId index answers the same user's opens of the same share and path from other clients",
          "[durable]") {
  DurableTable t;
  Guid app = guid(9), first_client = guid(1), second_client = guid(2);
  t.index_app_instance(app, {first_client, "alice", "share", "dir/File.txt", 7, 70});
  CHECK(t.find_app_instance(app, first_client, "alice", "share", "dir/file.txt").empty());  // the same client
  CHECK(t.find_app_instance(app, second_client, "bob", "share", "dir/file.txt").empty());  // another user
  CHECK(t.find_app_instance(app, second_client, "alice", "other", "dir/file.txt").empty());  // another share
  CHECK(t.find_app_instance(app, second_client, "alice", "share", "dir/file2.txt").empty());  // another file
  CHECK(t.find_app_instance(guid(8), second_client, "alice", "share", "dir/file.txt").empty());  // another application
  auto found = t.find_app_instance(app, second_client, "alice", "share", "DIR/FILE.TXT");  // names compare without case
  REQUIRE(found.size() == 1);
  CHECK(found[0].persistent_id == 7);
  CHECK(found[0].volatile_id == 70);
  t.unindex_app_instance(app, 8);  // not its open: stays
  CHECK(t.find_app_instance(app, second_client, "alice", "share", "dir/file.txt").size() == 1);
  t.unindex_app_instance(app, 7);
  CHECK(t.find_app_instance(app, second_client, "alice", "share", "dir/file.txt").empty());
}

TEST_CASE("live_at names the connection a live open is on", "[durable]") {
  DurableTable t;
  CHECK_FALSE(t.live_at(5));
  t.set_live(5, {3, 42});
  auto at = t.live_at(5);
  REQUIRE(at);
  CHECK(at->worker == 3);
  CHECK(at->conn_id == 42);
  t.clear_live(5);
  CHECK_FALSE(t.live_at(5));
}

TEST_CASE("kept opens of one share root share one descriptor, counted once while any needs it", "[durable]") {
  DurableTable t;
  std::atomic<uint32_t> open_files{0};
  int tmp = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int var = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(tmp >= 0);
  REQUIRE(var >= 0);
  auto first = t.share_root(tmp, &open_files);
  auto second = t.share_root(tmp, &open_files);
  REQUIRE(first);
  CHECK(first == second);  // one descriptor, not one per kept open
  CHECK(first->fd.get() != tmp);  // its own: the tree's may close first
  CHECK(open_files == 1);
  auto other = t.share_root(var, &open_files);
  CHECK(other != first);
  CHECK(open_files == 2);
  first.reset();
  second.reset();
  CHECK(open_files == 1);  // given back with the last kept open beneath it
  auto again = t.share_root(tmp, &open_files);
  CHECK(open_files == 2);
  close(tmp);
  close(var);
}
