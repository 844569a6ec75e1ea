// Grant, contention, break and acknowledgment rules of oplocks and leases
// (MS-SMB2 3.3.5.9.8/3.3.5.9.11/3.3.5.22, MS-FSA 2.1.5.17), on the file
// table alone: no sockets, no threads.
#include <catch2/catch.hpp>

#include "state/file_table.hpp"

using namespace ringsmb;
using namespace ringsmb::state;

namespace {

constexpr uint32_t R = kLeaseRead, H = kLeaseHandle, W = kLeaseWrite;
constexpr uint32_t kReadData = 0x1, kWriteData = 0x2, kReadAttributes = 0x80, kShareAll = 7;

Guid guid(uint8_t b) {
  Guid g{};
  g.fill(b);
  return g;
}

struct Opener {
  FileTable files;
  LeaseTable leases;
  int owners[16] = {};
  int next = 0;
  int64_t now = 1000;

  CacheRequest lease_request(uint8_t key, uint32_t state, uint8_t client = 1) {
    CacheRequest c;
    c.oplock_level = kOplockLease;
    c.lease = leases.find_or_create(guid(client), guid(key));
    c.lease_state = state;
    c.can_wait = true;
    c.waiter = {{0, client}, uint64_t(next + 1)};
    c.holder = {0, client};
    c.now_ms = now;
    c.break_timeout_ms = 500;
    return c;
  }
  CacheRequest oplock_request(uint8_t level) {
    CacheRequest c;
    c.oplock_level = level;
    c.can_wait = true;
    c.waiter = {{0, 9}, uint64_t(next + 1)};
    c.now_ms = now;
    c.break_timeout_ms = 500;
    return c;
  }
  OpenOutcome open(CacheRequest c, uint32_t access = kReadData | kWriteData, uint32_t share = kShareAll) {
    return files.open_cached(1, 42, &owners[next++], access, share, &c);
  }
  const void* owner(int i) { return &owners[i]; }
};

}  // namespace

TEST_CASE("a lone lease gets what it asks for; W, H and WH alone get nothing", "[lease]") {
  uint32_t asks[] = {0, R, H, W, R | H, R | W, H | W, R | H | W};
  uint32_t gets[] = {0, R, 0, 0, R | H, R | W, 0, R | H | W};
  for (size_t i = 0; i < 8; ++i) {
    Opener o;
    auto out = o.open(o.lease_request(1, asks[i]));
    REQUIRE(out.status == NtStatus::Success);
    CHECK(out.grant.oplock_level == kOplockLease);
    CHECK(out.grant.lease_state == gets[i]);
    CHECK(out.breaks.empty());
  }
}

TEST_CASE("a second key breaks W away and waits for the acknowledgment", "[lease]") {
  Opener o;
  auto first = o.open(o.lease_request(1, R | W | H));
  REQUIRE(first.grant.lease_state == (R | W | H));
  auto second = o.open(o.lease_request(2, R | W | H));
  REQUIRE(second.wait);
  REQUIRE(second.breaks.size() == 1);
  CHECK(second.breaks[0].from == (R | W | H));
  CHECK(second.breaks[0].to_state == (R | H));
  CHECK(second.breaks[0].ack_required);
  REQUIRE(second.node->waiters.size() == 1);

  std::vector<Waiter> wake;
  CHECK(o.files.ack_lease(first.grant.lease, R | W, wake) == NtStatus::RequestNotAccepted);  // more than offered
  CHECK(o.files.ack_lease(first.grant.lease, R | H, wake) == NtStatus::Success);
  CHECK(wake.size() == 1);
  CHECK(o.files.ack_lease(first.grant.lease, R | H, wake) == NtStatus::Unsuccessful);  // no break out

  auto retry = o.open(o.lease_request(2, R | W | H));
  REQUIRE(retry.status == NtStatus::Success);
  CHECK_FALSE(retry.wait);
  CHECK(retry.breaks.empty());
  CHECK(retry.grant.lease_state == (R | H));
}

TEST_CASE("an R-only lease breaks to none without an acknowledgment on overwrite", "[lease]") {
  Opener o;
  auto held = o.open(o.lease_request(1, R));
  auto c = o.oplock_request(kOplockNone);
  c.overwrite = true;
  auto out = o.open(c);
  REQUIRE(out.status == NtStatus::Success);
  REQUIRE(out.breaks.size() == 1);
  CHECK(out.breaks[0].to_state == 0);
  CHECK_FALSE(out.breaks[0].ack_required);
  CHECK_FALSE(out.wait);
}

TEST_CASE("upgrades only while the lease is alone; asking for less keeps more", "[lease]") {
  Opener o;
  auto a = o.open(o.lease_request(1, R | H));
  auto b = o.open(o.lease_request(1, R | W | H));
  CHECK(b.grant.lease_state == (R | W | H));
  CHECK(b.grant.lease == a.grant.lease);
  auto c = o.open(o.lease_request(1, R));
  CHECK(c.grant.lease_state == (R | W | H));
  CHECK(c.breaks.empty());
}

TEST_CASE("a lease key names one file", "[lease]") {
  Opener o;
  auto held = o.open(o.lease_request(1, R));  // keeps the node alive, as an Open does
  auto c = o.lease_request(1, R);
  auto out = o.files.open_cached(1, 43, &o.owners[5], kReadData, kShareAll, &c);
  CHECK(out.status == NtStatus::InvalidParameter);
}

TEST_CASE("stat opens neither break leases nor take W away", "[lease]") {
  Opener o;
  auto stat = o.oplock_request(kOplockNone);
  auto s = o.open(stat, kReadAttributes);
  REQUIRE(s.status == NtStatus::Success);
  auto l = o.open(o.lease_request(1, R | W | H));
  CHECK(l.grant.lease_state == (R | W | H));
  auto s2 = o.open(stat, kReadAttributes);
  CHECK(s2.breaks.empty());
  CHECK_FALSE(s2.wait);
}

TEST_CASE("oplocks: batch falls to level II, an H lease leaves no oplock", "[oplock]") {
  Opener o;
  auto batch = o.open(o.oplock_request(kOplockBatch));
  CHECK(batch.grant.oplock_level == kOplockBatch);
  auto second = o.open(o.oplock_request(kOplockBatch));
  REQUIRE(second.wait);
  REQUIRE(second.breaks.size() == 1);
  CHECK(second.breaks[0].is_oplock);
  CHECK(lease_bits_to_oplock(second.breaks[0].to_state) == kOplockLevelII);
  std::vector<Waiter> wake;
  auto acked = o.files.ack_oplock(batch.node, o.owner(0), kOplockLevelII, wake);
  REQUIRE(acked);
  CHECK(*acked == kOplockLevelII);
  auto retry = o.open(o.oplock_request(kOplockBatch));
  CHECK(retry.grant.oplock_level == kOplockLevelII);

  Opener p;
  auto rh = p.open(p.lease_request(1, R | H));
  auto op = p.open(p.oplock_request(kOplockExclusive));
  CHECK(op.grant.oplock_level == kOplockNone);
  CHECK(op.breaks.empty());
}

TEST_CASE("an acknowledgment without a break, or above the level offered, is refused", "[oplock]") {
  Opener o;
  auto ex = o.open(o.oplock_request(kOplockExclusive));
  std::vector<Waiter> wake;
  CHECK(o.files.ack_oplock(ex.node, o.owner(0), kOplockNone, wake).error() == NtStatus::InvalidOplockProtocol);
  auto other = o.open(o.oplock_request(kOplockNone));  // breaks exclusive to level II
  auto acked = o.files.ack_oplock(ex.node, o.owner(0), kOplockExclusive, wake);
  CHECK(acked.error() == NtStatus::InvalidOplockProtocol);
}

TEST_CASE("sharing conflicts break H only; without H the open fails at once", "[lease]") {
  Opener o;
  auto rw = o.open(o.lease_request(1, R | W), kReadData | kWriteData, 0);
  REQUIRE(rw.grant.lease_state == (R | W));
  auto out = o.open(o.lease_request(2, R), kReadData, kShareAll);
  CHECK(out.status == NtStatus::SharingViolation);
  CHECK(out.breaks.empty());

  Opener q;  // RWH loses only H to a conflicting open, which then fails
  auto rwh = q.open(q.lease_request(1, R | W | H), kReadData, 0);
  auto refused = q.open(q.lease_request(2, R), kReadData, kShareAll);
  REQUIRE(refused.breaks.size() == 1);
  CHECK(refused.breaks[0].to_state == (R | W));

  Opener p;
  auto rh = p.open(p.lease_request(1, R | H), kReadData, 0);
  auto blocked = p.open(p.lease_request(2, R), kReadData, kShareAll);
  REQUIRE(blocked.wait);
  REQUIRE(blocked.breaks.size() == 1);
  CHECK(blocked.breaks[0].to_state == R);
  // The holder closes its cached handle: the waiter is woken and succeeds.
  auto closed = p.files.close_cached(rh.node, p.owner(0));
  CHECK(closed.wake.size() == 1);
  auto retry = p.open(p.lease_request(2, R), kReadData, kShareAll);
  CHECK(retry.status == NtStatus::Success);
}

TEST_CASE("a break not acknowledged in time counts as acknowledged", "[lease]") {
  Opener o;
  auto first = o.open(o.lease_request(1, R | W | H));
  auto second = o.open(o.lease_request(2, R | H));
  REQUIRE(second.wait);
  CHECK(o.files.expire_breaks(second.node, o.now + 100).empty());
  CHECK(o.files.expire_breaks(second.node, o.now + 600).size() == 1);
  CHECK(first.grant.lease->state == (R | H));
  CHECK_FALSE(first.grant.lease->breaking);
}

TEST_CASE("writes end other opens' read caching; one's own lease stays", "[lease]") {
  Opener o;
  auto a = o.open(o.lease_request(1, R | H));
  auto b = o.open(o.lease_request(2, R | H));
  auto breaks = o.files.break_readers(b.node, o.owner(1), o.now, 500);
  REQUIRE(breaks.size() == 1);
  CHECK(breaks[0].key == guid(1));
  CHECK(breaks[0].to_state == 0);
  CHECK(breaks[0].ack_required);  // it held H
  CHECK(b.grant.lease->state == (R | H));
}

TEST_CASE("v2 leases carry an epoch that moves with every change", "[lease]") {
  Opener o;
  auto c = o.lease_request(1, R | W | H);
  c.lease_version = 2;
  c.lease_epoch = 4;
  auto a = o.open(c);
  CHECK(a.grant.epoch == 5);
  auto b = o.open(o.lease_request(2, R));
  REQUIRE(b.breaks.size() == 1);
  CHECK(b.breaks[0].version == 2);
  CHECK(b.breaks[0].epoch == 6);
}

TEST_CASE("a delete-only open conflicting with a batch oplock breaks it to level II", "[oplock]") {
  Opener o;
  auto batch = o.open(o.oplock_request(kOplockBatch), 0x1F01FF, 0);
  REQUIRE(batch.grant.oplock_level == kOplockBatch);
  auto del = o.open(o.oplock_request(kOplockNone), 0x10000, kShareAll);
  REQUIRE(del.breaks.size() == 1);
  CHECK(lease_bits_to_oplock(del.breaks[0].to_state) == kOplockLevelII);
  CHECK(del.wait);
}
