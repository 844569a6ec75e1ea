// state::FileTable on its own: the share access check (MS-FSA 2.1.5.1.2.1)
// and the oplock / lease grants and breaks a CREATE gets (MS-FSA 2.1.5.17,
// MS-SMB2 3.3.5.9.8 and 3.3.5.9.11), without a file system or a connection.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "state/file_table.hpp"

using namespace ringsmb;
using namespace ringsmb::state;

namespace {

constexpr uint32_t kRead = 0x1, kWrite = 0x2, kReadAttributes = 0x80, kDelete = 0x10000;
constexpr uint32_t kShareRead = 1, kShareWrite = 2, kShareDelete = 4, kShareAll = 7;
constexpr uint64_t kDev = 8, kIno = 42;

// Owners stand for state::Open pointers; only their addresses matter.
struct Owners {
  int a = 0, b = 0, c = 0;
};

// The table keeps a file's node only while an open holds it (state::Open
// does, in the server): so do the tests.
std::vector<std::shared_ptr<FileNode>> held;

NtStatus try_open(FileTable& t, const void* owner, uint32_t access, uint32_t share) {
  auto r = t.open(kDev, kIno, owner, access, share);
  if (!r) return r.error();
  held.push_back(*r);
  return NtStatus::Success;
}

OpenOutcome keep(OpenOutcome o) {
  if (o.node) held.push_back(o.node);
  return o;
}

CacheRequest oplock_request(uint8_t level) {
  CacheRequest c;
  c.oplock_level = level;
  return c;
}

CacheRequest lease_request(uint8_t key_byte, uint32_t state) {
  CacheRequest c;
  c.oplock_level = kOplockLease;
  c.lease = std::make_shared<Lease>();
  c.lease->key[0] = key_byte;
  c.lease_state = state;
  return c;
}

}  // namespace

TEST_CASE("file table: a new open must share what the others do, and they what it does", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  REQUIRE(try_open(t, &o.a, kRead, kShareRead) == NtStatus::Success);
  CHECK(try_open(t, &o.b, kRead, kShareRead | kShareWrite) == NtStatus::Success);
  // A reads and B does not share read.
  CHECK(try_open(t, &o.c, kWrite, kShareWrite) == NtStatus::SharingViolation);
  // B writes, A did not share write.
  CHECK(try_open(t, &o.c, kWrite, kShareAll) == NtStatus::SharingViolation);
  // Delete access needs FILE_SHARE_DELETE from every other open.
  CHECK(try_open(t, &o.c, kDelete, kShareAll) == NtStatus::SharingViolation);
}

TEST_CASE("file table: opens for attributes alone take no part in sharing", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  REQUIRE(try_open(t, &o.a, kRead | kWrite | kDelete, 0) == NtStatus::Success);
  CHECK(try_open(t, &o.b, kReadAttributes, 0) == NtStatus::Success);
  CHECK(try_open(t, &o.c, kRead, kShareAll) == NtStatus::SharingViolation);
}

TEST_CASE("file table: a closed open stops conflicting; the last close says so", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  auto a = t.open(kDev, kIno, &o.a, kRead | kWrite, 0);
  REQUIRE(a);
  CHECK(try_open(t, &o.b, kRead, kShareAll) == NtStatus::SharingViolation);
  auto other = t.open(kDev, kIno + 1, &o.b, kRead, 0);  // another file: no conflict
  CHECK(other);
  CHECK(t.close(*a, &o.a));
  auto b = t.open(kDev, kIno, &o.b, kRead, kShareRead);
  REQUIRE(b);
  auto c = t.open(kDev, kIno, &o.c, kRead, kShareRead);
  REQUIRE(c);
  CHECK_FALSE(t.close(*b, &o.b));
  CHECK(t.close(*c, &o.c));
}

TEST_CASE("file table: delete pending refuses new opens", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  auto a = t.open(kDev, kIno, &o.a, kRead | kDelete, kShareAll);
  REQUIRE(a);
  t.set_delete_pending(*a, true);
  CHECK(t.delete_pending(kDev, kIno));
  CHECK(try_open(t, &o.b, kRead, kShareAll) == NtStatus::DeletePending);
}

TEST_CASE("file table: an oplock is granted to the only open; a second open breaks it", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  CacheRequest batch = oplock_request(kOplockBatch);
  OpenOutcome first = keep(t.open_cached(kDev, kIno, &o.a, kRead | kWrite, kShareAll, &batch));
  REQUIRE(first.status == NtStatus::Success);
  CHECK(first.grant.oplock_level == kOplockBatch);
  CHECK(first.breaks.empty());

  CacheRequest second_req = oplock_request(kOplockBatch);
  OpenOutcome second = keep(t.open_cached(kDev, kIno, &o.b, kRead, kShareAll, &second_req));
  REQUIRE(second.status == NtStatus::Success);
  REQUIRE(second.breaks.size() == 1);
  CHECK(second.breaks[0].is_oplock);
  CHECK(second.breaks[0].ack_required);  // breaking away from batch waits for the client
  CHECK(second.breaks[0].to_state == kLeaseRead);  // to level II
  // A batch oplock still breaking leaves nothing to grant.
  CHECK(second.grant.oplock_level == kOplockNone);
}

TEST_CASE("file table: a CREATE that can wait does so while a break is out", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  CacheRequest ex = oplock_request(kOplockExclusive);
  REQUIRE(keep(t.open_cached(kDev, kIno, &o.a, kRead | kWrite, kShareAll, &ex)).grant.oplock_level == kOplockExclusive);
  CacheRequest waiting = oplock_request(kOplockNone);
  waiting.can_wait = true;
  OpenOutcome w = keep(t.open_cached(kDev, kIno, &o.b, kRead, kShareAll, &waiting));
  CHECK(w.wait);
  CHECK(w.breaks.size() == 1);
  CHECK(t.open_count(w.node) == 1);  // not registered while it waits
}

TEST_CASE("file table: leases: what a second key gets and what the first keeps", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  CacheRequest first_req = lease_request(1, kLeaseRead | kLeaseWrite | kLeaseHandle);
  OpenOutcome first = keep(t.open_cached(kDev, kIno, &o.a, kRead | kWrite, kShareAll, &first_req));
  REQUIRE(first.status == NtStatus::Success);
  CHECK(first.grant.oplock_level == kOplockLease);
  CHECK(first.grant.lease_state == (kLeaseRead | kLeaseWrite | kLeaseHandle));

  // Another key: the first loses W (another opener now reads), keeps RH;
  // the newcomer cannot have W either.
  CacheRequest second_req = lease_request(2, kLeaseRead | kLeaseWrite | kLeaseHandle);
  OpenOutcome second = keep(t.open_cached(kDev, kIno, &o.b, kRead, kShareAll, &second_req));
  REQUIRE(second.status == NtStatus::Success);
  REQUIRE(second.breaks.size() == 1);
  CHECK_FALSE(second.breaks[0].is_oplock);
  CHECK(second.breaks[0].from == (kLeaseRead | kLeaseWrite | kLeaseHandle));
  CHECK(second.breaks[0].to_state == (kLeaseRead | kLeaseHandle));
  CHECK(second.breaks[0].ack_required);
  CHECK((second.grant.lease_state & kLeaseWrite) == 0);
  CHECK((second.grant.lease_state & kLeaseRead) != 0);
}

TEST_CASE("file table: a share conflict breaks only H, and the open still fails", "[state][file_table]") {
  held.clear();
  FileTable t;
  Owners o;
  CacheRequest first_req = lease_request(1, kLeaseRead | kLeaseHandle);
  REQUIRE(keep(t.open_cached(kDev, kIno, &o.a, kRead, kShareRead, &first_req)).status == NtStatus::Success);
  CacheRequest writer = lease_request(2, kLeaseRead);
  OpenOutcome w = keep(t.open_cached(kDev, kIno, &o.b, kWrite, kShareAll, &writer));
  CHECK(w.status == NtStatus::SharingViolation);
  REQUIRE(w.breaks.size() == 1);
  CHECK(w.breaks[0].to_state == kLeaseRead);  // RH -> R: the holder may close its cached handles
}

TEST_CASE("file table: a stream's hold on its file blocks only DELETE opens that it does not share",
          "[state][file_table][streams]") {
  held.clear();
  FileTable t;
  Owners o;
  // A stream open without FILE_SHARE_DELETE (smb2.streams.delete) ...
  REQUIRE(try_open(t, &o.a, kStreamHolder, kShareRead) == NtStatus::Success);
  // ... leaves the file's own share modes alone ...
  CHECK(try_open(t, &o.b, kRead | kWrite, 0) == NtStatus::Success);
  // ... but an open of the file with DELETE fails.
  CHECK(try_open(t, &o.c, kDelete, kShareAll) == NtStatus::SharingViolation);
}

TEST_CASE("file table: a stream hold that shares delete lets the file be deleted; the file's own opens never "
          "block a stream", "[state][file_table][streams]") {
  held.clear();
  FileTable t;
  Owners o;
  REQUIRE(try_open(t, &o.a, kRead | kWrite, 0) == NtStatus::Success);  // the file, exclusively
  CHECK(try_open(t, &o.b, kStreamHolder, kShareDelete) == NtStatus::Success);
  CHECK(try_open(t, &o.c, kDelete, kShareAll) == NtStatus::SharingViolation);  // o.a shares nothing
  FileTable t2;
  auto hold = t2.open(kDev, kIno, &o.a, kStreamHolder, kShareDelete);
  REQUIRE(hold);
  auto del = t2.open(kDev, kIno, &o.b, kDelete, kShareAll);
  REQUIRE(del);
  t2.set_delete_pending(*del, true);
  // The file's last open closing is not the last close: the stream holds it.
  CHECK_FALSE(t2.close(*del, &o.b));
  CHECK(t2.is_delete_pending(*hold));
  CHECK(t2.close(*hold, &o.a));  // the stream's close is the last: the file goes now
}

// A FileNode's known metadata (smb2::stored_meta, write_stored_meta): a
// value is learnt only when no write began since the count was read.
TEST_CASE("file node: metadata learnt only when no write began since the count", "[state]") {
  FileNode node;
  vfs::FileMeta meta, seen;
  meta.creation_time = 7;
  CHECK_FALSE(node.known_meta(seen));
  node.learn_no_meta(0);
  CHECK(node.no_stored_meta());
  const uint32_t before = node.meta_written();  // a write begins: nothing known
  CHECK_FALSE(node.known_meta(seen));
  node.meta_written();  // another begins before the first learns
  node.learn_meta(before, meta);
  CHECK_FALSE(node.known_meta(seen));
  node.learn_meta(node.meta_generation(), meta);
  REQUIRE(node.known_meta(seen));
  CHECK(seen.creation_time == 7u);
  CHECK_FALSE(node.no_stored_meta());
}

TEST_CASE("file table: a file's opens past the two kept in its node, closed in any order", "[state][file_table]") {
  // The first two opens live in the node, a third moves them all into a
  // vector: every open still counts for sharing and closes on its own.
  held.clear();
  FileTable t;
  int owners[5] = {};
  std::shared_ptr<FileNode> node;
  for (int i = 0; i < 5; ++i) {
    auto r = t.open(kDev, kIno, &owners[i], kRead, kShareRead);
    REQUIRE(r);
    node = *r;
    CHECK(t.open_count(node) == size_t(i + 1));
  }
  CHECK(node->opens.back().owner == &owners[4]);
  int writer = 0;
  CHECK(try_open(t, &writer, kWrite, kShareAll) == NtStatus::SharingViolation);
  CHECK_FALSE(t.close(node, &owners[1]));  // from the middle
  CHECK_FALSE(t.close(node, &owners[4]));  // the last
  CHECK(t.open_count(node) == 3);
  std::vector<const void*> left;
  for (const auto& r : node->opens) left.push_back(r.owner);
  CHECK(left == std::vector<const void*>{&owners[0], &owners[2], &owners[3]});
  CHECK_FALSE(t.close(node, &owners[0]));
  CHECK_FALSE(t.close(node, &owners[3]));
  CHECK(t.close(node, &owners[2]));  // the last one: the node leaves the table
  // A new open of the file gets a new node, with its opens in the node again.
  auto again = t.open(kDev, kIno, &owners[0], kRead | kWrite, 0);
  REQUIRE(again);
  CHECK(*again != node);
  CHECK(try_open(t, &owners[1], kRead, kShareAll) == NtStatus::SharingViolation);
  CHECK(t.close(*again, &owners[0]));
}

TEST_CASE("file table: an open after closes, in the node's room and past it", "[state][file_table]") {
  held.clear();
  FileTable t;
  int a = 0, b = 0, c = 0, d = 0;
  auto ra = t.open(kDev, kIno, &a, kRead, kShareAll);
  REQUIRE(ra);
  REQUIRE(t.open(kDev, kIno, &b, kRead, kShareAll));
  CHECK_FALSE(t.close(*ra, &a));  // one left in the node's room
  REQUIRE(t.open(kDev, kIno, &c, kRead, kShareAll));
  REQUIRE(t.open(kDev, kIno, &d, kRead, kShareRead));  // the third: past the room
  std::vector<const void*> owners;
  for (const auto& r : (*ra)->opens) owners.push_back(r.owner);
  CHECK(owners == std::vector<const void*>{&b, &c, &d});
  CHECK_FALSE(t.others_share_delete(*ra, &b));  // d does not share delete
  CHECK_FALSE(t.close(*ra, &d));
  CHECK(t.others_share_delete(*ra, &b));
  CHECK(t.open(kDev, kIno, &a, kRead, kShareAll));  // into the vector again
  CHECK(t.open_count(*ra) == 3);
  CHECK_FALSE(t.close(*ra, &a));
  CHECK_FALSE(t.close(*ra, &b));
  CHECK(t.close(*ra, &c));
}
