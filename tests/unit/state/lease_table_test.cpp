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
  std::vector<BreakNotice> more;
  CHECK(o.files.ack_lease(first.grant.lease, R | W, wake, more, o.now) == NtStatus::RequestNotAccepted);  // more than offered
  CHECK(o.files.ack_lease(first.grant.lease, R | H, wake, more, o.now) == NtStatus::Success);
  CHECK(wake.size() == 1);
  CHECK(o.files.ack_lease(first.grant.lease, R | H, wake, more, o.now) == NtStatus::Unsuccessful);  // no break out

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
  std::vector<BreakNotice> more;
  auto acked = o.files.ack_oplock(batch.node, o.owner(0), kOplockLevelII, wake, more, o.now);
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
  std::vector<BreakNotice> more;
  CHECK(o.files.ack_oplock(ex.node, o.owner(0), kOplockNone, wake, more, o.now).error() == NtStatus::InvalidOplockProtocol);
  auto other = o.open(o.oplock_request(kOplockNone));  // breaks exclusive to level II
  auto acked = o.files.ack_oplock(ex.node, o.owner(0), kOplockExclusive, wake, more, o.now);
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

TEST_CASE("a lease break not acknowledged in time ends the lease; an oplock keeps the level offered", "[lease]") {
  Opener o;
  auto first = o.open(o.lease_request(1, R | W | H));
  auto second = o.open(o.lease_request(2, R | H));
  REQUIRE(second.wait);
  CHECK(o.files.expire_breaks(second.node, o.now + 100).empty());
  CHECK(o.files.expire_breaks(second.node, o.now + 600).size() == 1);
  CHECK(first.grant.lease->state == kLeaseNone);  // smb2.lease.timeout reads it back as NONE
  CHECK_FALSE(first.grant.lease->breaking);
  std::vector<Waiter> wake;
  std::vector<BreakNotice> breaks;
  CHECK(o.files.ack_lease(first.grant.lease, R | H, wake, breaks, o.now + 700) == NtStatus::Unsuccessful);

  Opener p;
  auto batch = p.open(p.oplock_request(kOplockBatch));
  REQUIRE(batch.grant.oplock_level == kOplockBatch);
  auto other = p.open(p.oplock_request(kOplockNone));
  REQUIRE(other.wait);
  CHECK(p.files.expire_breaks(other.node, p.now + 600).size() == 1);
  CHECK(batch.grant.lease->state == R);  // level II, as offered
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

TEST_CASE("a break queued behind an unacknowledged one follows its acknowledgment, in steps", "[lease][break-queue]") {
  Opener o;  // smb2.lease.breaking3
  auto held = o.open(o.lease_request(1, R | W | H));
  auto plain = o.open(o.oplock_request(kOplockNone));  // takes W: waits
  REQUIRE(plain.wait);
  REQUIRE(plain.breaks.size() == 1);
  CHECK(plain.breaks[0].to_state == (R | H));
  auto c = o.oplock_request(kOplockNone);
  c.overwrite = true;  // wants nothing left, while the first break is out
  auto over = o.open(c);
  CHECK(over.wait);
  CHECK(over.breaks.empty());  // queued, not sent
  REQUIRE(held.node->waiters.size() == 2);

  std::vector<Waiter> wake;
  std::vector<BreakNotice> more;
  REQUIRE(o.files.ack_lease(held.grant.lease, R | H, wake, more, o.now) == NtStatus::Success);
  REQUIRE(more.size() == 1);  // H goes first, R stays
  CHECK(more[0].from == (R | H));
  CHECK(more[0].to_state == R);
  CHECK(more[0].ack_required);
  CHECK(wake.empty());  // the waiters wait for the whole break
  CHECK(held.grant.lease->breaking);

  more.clear();
  REQUIRE(o.files.ack_lease(held.grant.lease, R, wake, more, o.now) == NtStatus::Success);
  REQUIRE(more.size() == 1);
  CHECK(more[0].from == R);
  CHECK(more[0].to_state == 0);
  CHECK_FALSE(more[0].ack_required);
  CHECK(wake.size() == 2);
  CHECK(held.grant.lease->state == 0);
  CHECK_FALSE(held.grant.lease->breaking);
}

TEST_CASE("re-breaks keep the epoch of the break they follow", "[lease][break-queue]") {
  Opener o;  // smb2.lease.v2_breaking3
  auto c1 = o.lease_request(1, R | W | H);
  c1.lease_version = 2;
  c1.lease_epoch = 0x11;
  auto held = o.open(c1);
  auto plain = o.open(o.oplock_request(kOplockNone));
  REQUIRE(plain.breaks.size() == 1);
  CHECK(plain.breaks[0].epoch == 0x13);
  auto c = o.oplock_request(kOplockNone);
  c.overwrite = true;
  o.open(c);
  std::vector<Waiter> wake;
  std::vector<BreakNotice> more;
  o.files.ack_lease(held.grant.lease, R | H, wake, more, o.now);
  o.files.ack_lease(held.grant.lease, R, wake, more, o.now);
  REQUIRE(more.size() == 2);
  CHECK(more[0].epoch == 0x13);
  CHECK(more[1].epoch == 0x13);
}

TEST_CASE("an overwrite breaks an RH lease to none and does not wait", "[lease][break-queue]") {
  Opener o;  // smb2.lease.breaking4
  auto held = o.open(o.lease_request(1, R | H));
  auto c = o.oplock_request(kOplockNone);
  c.overwrite = true;
  auto first = o.open(c);
  REQUIRE(first.status == NtStatus::Success);
  CHECK_FALSE(first.wait);
  REQUIRE(first.breaks.size() == 1);
  CHECK(first.breaks[0].to_state == 0);
  CHECK(first.breaks[0].ack_required);
  auto second = o.open(c);  // still breaking: nothing more is sent, nothing waits
  CHECK(second.status == NtStatus::Success);
  CHECK_FALSE(second.wait);
  CHECK(second.breaks.empty());
  CHECK(held.grant.lease->state == (R | H));
  CHECK(held.grant.lease->breaking);
}

TEST_CASE("a timed-out lease break leaves nothing queued behind it to break", "[lease][break-queue]") {
  Opener o;
  auto held = o.open(o.lease_request(1, R | W | H));
  auto plain = o.open(o.oplock_request(kOplockNone));
  REQUIRE(plain.wait);
  auto c = o.oplock_request(kOplockNone);
  c.overwrite = true;
  o.open(c);
  std::vector<BreakNotice> more;
  auto wake = o.files.expire_breaks(held.node, o.now + 600, &more);
  CHECK(more.empty());  // NONE already: the overwrite queued behind needs no further step
  CHECK(wake.size() == 2);
  CHECK(held.grant.lease->state == 0);
  CHECK_FALSE(held.grant.lease->breaking);
}

TEST_CASE("a timed-out oplock break is followed by the break queued behind it", "[oplock][break-queue]") {
  Opener o;
  auto held = o.open(o.oplock_request(kOplockBatch));
  auto plain = o.open(o.oplock_request(kOplockNone));
  REQUIRE(plain.wait);
  auto c = o.oplock_request(kOplockNone);
  c.overwrite = true;
  o.open(c);
  std::vector<BreakNotice> more;
  auto wake = o.files.expire_breaks(held.node, o.now + 600, &more);
  REQUIRE(more.size() == 1);  // level II -> none: no acknowledgment, the waiters go on
  CHECK(more[0].to_state == 0);
  CHECK(wake.size() == 2);
  CHECK(held.grant.lease->state == 0);
}

TEST_CASE("FILE_READ_EA is no stat open: it breaks W", "[lease]") {
  Opener o;
  auto held = o.open(o.lease_request(1, R | W | H));
  constexpr uint32_t kReadEa = 0x8;
  auto ea = o.open(o.oplock_request(kOplockNone), kReadEa);
  REQUIRE(ea.breaks.size() == 1);  // smb2.lease.statopen4
  CHECK(ea.breaks[0].to_state == (R | H));
}

TEST_CASE("an open that will delete the file on close takes H from other leases", "[lease]") {
  Opener o;
  auto held = o.open(o.lease_request(1, R | H));
  auto c = o.oplock_request(kOplockNone);
  c.delete_on_close = true;
  constexpr uint32_t kDelete = 0x10000;
  auto del = o.open(c, kDelete);
  REQUIRE(del.breaks.size() == 1);  // smb2.lease.unlink
  CHECK(del.breaks[0].from == (R | H));
  CHECK(del.breaks[0].to_state == R);
  CHECK(del.breaks[0].ack_required);
  CHECK_FALSE(del.wait);  // no share conflict: the open goes on
}

TEST_CASE("a rename waits while another lease's H breaks, and runs again after the acknowledgment",
          "[lease][rename]") {
  Opener o;
  auto mine = o.open(o.lease_request(1, R | H));
  auto other = o.open(o.lease_request(2, R | H, 2));
  REQUIRE(other.grant.lease_state == (R | H));
  Waiter w{{0, 1}, 77};
  bool wait = false;
  auto breaks = o.files.break_handles_for_rename(mine.node, o.owner(0), o.now, 500, &w, false, wait);
  REQUIRE(breaks.size() == 1);
  CHECK(breaks[0].key == guid(2));
  CHECK(breaks[0].to_state == R);
  CHECK(wait);  // smb2.lease.rename_wait
  std::vector<Waiter> wake;
  std::vector<BreakNotice> further;
  REQUIRE(o.files.ack_lease(other.grant.lease, R, wake, further, o.now + 10) == NtStatus::Success);
  REQUIRE(wake.size() == 1);
  CHECK(wake[0].async_id == 77);
  // Run again: nothing left to break or wait for.
  CHECK(o.files.break_handles_for_rename(mine.node, o.owner(0), o.now, 500, &w, true, wait).empty());
  CHECK_FALSE(wait);
  // Without a waiter (past the async limits) the break goes out and nothing waits.
  Opener p;
  auto a = p.open(p.lease_request(1, R | H));
  p.open(p.lease_request(2, R | H, 2));
  CHECK(p.files.break_handles_for_rename(a.node, p.owner(0), p.now, 500, nullptr, false, wait).size() == 1);
  CHECK_FALSE(wait);
}

TEST_CASE("breaks go to a connection that still has an open of the lease", "[lease]") {
  Opener o;
  auto on_a = o.lease_request(1, R);
  on_a.holder = {0, 10};
  auto a = o.open(on_a);
  auto on_b = o.lease_request(1, R | W | H);  // the same client and key, another connection
  on_b.holder = {1, 20};
  auto b = o.open(on_b);
  REQUIRE(b.grant.lease_state == (R | W | H));
  CHECK(a.grant.lease->holder.conn_id == 20);  // last used there
  o.files.close_cached(b.node, o.owner(1));   // its open on B closes
  CHECK(a.grant.lease->holder.worker == 0);   // smb2.lease.v2_complex1
  CHECK(a.grant.lease->holder.conn_id == 10);
  auto contender = o.open(o.lease_request(2, R, 3));
  REQUIRE(contender.breaks.size() == 1);
  CHECK(contender.breaks[0].to.conn_id == 10);
}

TEST_CASE("an open that waited goes on waiting through the steps of the break", "[lease][break-queue]") {
  Opener o;
  auto held = o.open(o.lease_request(1, R | W | H));
  auto first = o.oplock_request(kOplockNone);
  REQUIRE(o.open(first).wait);
  auto c = o.oplock_request(kOplockNone);
  c.overwrite = true;
  REQUIRE(o.open(c).wait);
  std::vector<Waiter> wake;
  std::vector<BreakNotice> more;
  o.files.ack_lease(held.grant.lease, R | H, wake, more, o.now);  // RH -> R is out
  // Woken early (the holder closed another handle): it waits again ...
  first.waited = true;
  CHECK(o.open(first).wait);
  // ... while a new open that takes neither W nor a conflicting H does not.
  CHECK_FALSE(o.open(o.oplock_request(kOplockNone)).wait);
}

TEST_CASE("directories get RH at most, and only where directory leasing is on", "[lease][directory]") {
  Opener o;
  auto c = o.lease_request(1, R | W | H);
  c.directory = true;
  auto off = o.open(c, 0x1);  // FILE_LIST_DIRECTORY
  CHECK(off.grant.oplock_level == kOplockNone);
  CHECK_FALSE(o.files.directory_leases_held());

  Opener p;
  auto d = p.lease_request(1, R | W | H);
  d.directory = true;
  d.directory_leases = true;
  auto on = p.open(d, 0x1);
  CHECK(on.grant.oplock_level == kOplockLease);
  CHECK(on.grant.lease_state == (R | H));
  CHECK(p.files.directory_leases_held());
  p.files.close_cached(on.node, p.owner(0));
  CHECK_FALSE(p.files.directory_leases_held());
}

TEST_CASE("a change of a directory's entries breaks its leases, but not the changer's parent lease",
          "[lease][directory]") {
  Opener o;
  auto d = o.lease_request(1, R | H, 7);
  d.directory = true;
  d.directory_leases = true;
  auto held = o.open(d, 0x1);
  REQUIRE(held.grant.lease_state == (R | H));
  Guid other_client = guid(8), holder_client = guid(7), key = guid(1);

  auto own = o.files.break_directory(1, 42, holder_client, &key, o.now, 500);
  CHECK(own.empty());  // the holder's own change, named by its ParentLeaseKey
  CHECK(o.files.break_directory(1, 43, other_client, nullptr, o.now, 500).empty());  // another directory

  auto breaks = o.files.break_directory(1, 42, other_client, &key, o.now, 500);
  REQUIRE(breaks.size() == 1);
  CHECK(breaks[0].from == (R | H));
  CHECK(breaks[0].to_state == 0);
  CHECK(breaks[0].ack_required);
  CHECK(o.files.break_directory(1, 42, other_client, nullptr, o.now, 500).empty());  // already breaking
  std::vector<Waiter> wake;
  std::vector<BreakNotice> more;
  CHECK(o.files.ack_lease(held.grant.lease, 0, wake, more, o.now) == NtStatus::Success);
  CHECK(more.empty());
  // The holder opens the directory again and gets RH back.
  auto again = o.open(d, 0x1);
  CHECK(again.grant.lease_state == (R | H));
}

TEST_CASE("stat opens: READ_CONTROL is one for a lease, not for an oplock; no access is none", "[state][lease]") {
  constexpr uint32_t kSynchronize = 0x00100000, kReadAttributes = 0x80, kWriteAttributes = 0x100,
                     kReadControl = 0x00020000, kReadEa = 0x8, kReadData = 0x1;
  CHECK(ringsmb::state::is_stat_open(kReadAttributes | kSynchronize));
  CHECK(ringsmb::state::is_oplock_stat_open(kReadAttributes | kWriteAttributes));
  CHECK(ringsmb::state::is_stat_open(kReadControl));
  CHECK_FALSE(ringsmb::state::is_oplock_stat_open(kReadControl));   // smb2.oplock.statopen1
  CHECK_FALSE(ringsmb::state::is_stat_open(0));                     // no access asked: not a stat open
  CHECK_FALSE(ringsmb::state::is_oplock_stat_open(0));
  CHECK_FALSE(ringsmb::state::is_stat_open(kReadAttributes | kReadEa));  // smb2.lease.statopen4
  CHECK_FALSE(ringsmb::state::is_stat_open(kReadData));
}

TEST_CASE("a handle only a lease keeps: H until the break of H is acknowledged", "[lease]") {
  Opener o;
  auto held = o.open(o.lease_request(1, R | H), kReadData);
  REQUIRE(held.grant.lease_state == (R | H));
  auto plain = o.open(o.oplock_request(kOplockNone), kReadData);
  CHECK(o.files.handle_cached(held.node, o.owner(0)));
  CHECK_FALSE(o.files.handle_cached(plain.node, o.owner(1)));  // no lease: a handle the client holds

  // An ancestor's rename breaks H (no owner of its own on this file) and
  // waits; the lease still caches the handle while the break is out.
  bool wait = false;
  Waiter renamer{{0, 7}, 99};
  auto breaks = o.files.break_handles_for_rename(held.node, nullptr, o.now, 500, &renamer, false, wait);
  REQUIRE(breaks.size() == 1);
  CHECK(breaks[0].to_state == R);
  CHECK(wait);
  CHECK(o.files.handle_cached(held.node, o.owner(0)));
  std::vector<Waiter> wake;
  std::vector<BreakNotice> more;
  REQUIRE(o.files.ack_lease(held.grant.lease, R, wake, more, o.now) == NtStatus::Success);
  CHECK(wake.size() == 1);
  CHECK_FALSE(o.files.handle_cached(held.node, o.owner(0)));  // kept after the break: a real handle now
}
