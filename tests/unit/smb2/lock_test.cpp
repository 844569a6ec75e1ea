#include <catch2/catch.hpp>

#include <vector>

#include "fixture.hpp"
#include "smb2/engine/async_engine.hpp"
#include "state/lock_table.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;


// Releases OWNER's locks where the test has no waiter to post the grants to.
template <typename Fixture>
void release_locks_of(Fixture& f, const void* owner, uint64_t dev, uint64_t ino) {
  std::vector<ringsmb::state::LockWaiter> granted;
  f.server.locks.release(owner, dev, ino, granted);
}
namespace {

constexpr uint32_t kShared = 0x1, kExclusive = 0x2, kUnlock = 0x4, kFailImmediately = 0x10;

struct El {
  uint64_t offset, length;
  uint32_t flags;
};

Bytes lock_body(FileId id, const std::vector<El>& els, int count_override = -1, uint32_t lock_sequence = 0) {
  Body body;
  body.w.u16(48);
  body.w.u16(uint16_t(count_override >= 0 ? count_override : int(els.size())));
  body.w.u32(lock_sequence);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  for (const El& e : els) {
    body.w.u64(e.offset);
    body.w.u64(e.length);
    body.w.u32(e.flags);
    body.w.u32(0);
  }
  return body.b;
}

NtStatus lock(Smb2Fixture& f, FileId id, const std::vector<El>& els) {
  Response r = f.call(handle_lock, wire::Command::Lock, lock_body(id, els));
  if (r.status == NtStatus::Success) {
    REQUIRE(r.body.size() == 4);
    REQUIRE(r.u16(0) == 4);
  }
  return r.status;
}

void cancel(Smb2Fixture& f, uint64_t async_id) {
  wire::Header h{};
  h.flags = wire::SMB2_FLAGS_ASYNC_COMMAND;
  h.async_id = async_id;
  cancel_request(f.conn, f.server, h);
}

}  // namespace

TEST_CASE("lock: exclusive and shared conflicts between opens", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f", "data");
  FileId a = f.open_file("f", FILE_READ_DATA | FILE_WRITE_DATA);
  FileId b = f.open_file("f", FILE_READ_DATA | FILE_WRITE_DATA);
  const auto* node = f.find(a)->node.get();

  REQUIRE(lock(f, a, {{0, 10, kExclusive | kFailImmediately}}) == NtStatus::Success);
  CHECK(lock(f, b, {{5, 10, kShared | kFailImmediately}}) == NtStatus::LockNotGranted);
  // Blocking: waits (the tests below), until CANCEL here.
  Response waiting = f.call(handle_lock, wire::Command::Lock, lock_body(b, {{5, 10, kExclusive}}));
  CHECK(waiting.status == NtStatus::Pending);
  CHECK(f.server.locks.waiting(node->device, node->inode) == 1);
  cancel(f, waiting.async_id);
  CHECK(f.server.locks.waiting(node->device, node->inode) == 0);
  f.conn.async.ready.clear();
  CHECK(lock(f, b, {{10, 10, kExclusive | kFailImmediately}}) == NtStatus::Success);  // adjacent
  CHECK(lock(f, a, {{2, 2, kExclusive | kFailImmediately}}) == NtStatus::LockNotGranted);  // own exclusive
  CHECK(lock(f, a, {{2, 2, kShared | kFailImmediately}}) == NtStatus::Success);  // stacks on own exclusive
  CHECK(lock(f, b, {{0, 0, kExclusive | kFailImmediately}}) == NtStatus::Success);  // zero length at a's start
  CHECK(f.server.locks.count(node->device, node->inode) == 4);

  REQUIRE(lock(f, a, {{0, 10, kUnlock}}) == NtStatus::Success);
  CHECK(lock(f, a, {{0, 10, kUnlock}}) == NtStatus::RangeNotLocked);
  CHECK(lock(f, b, {{2, 2, kUnlock}}) == NtStatus::RangeNotLocked);  // a's lock, not b's
  CHECK(lock(f, b, {{0, 2, kShared | kFailImmediately}}) == NtStatus::Success);

  // Closing releases what the open holds.
  release_locks_of(f, f.find(a), node->device, node->inode);
  release_locks_of(f, f.find(b), node->device, node->inode);
  CHECK(f.server.locks.count(node->device, node->inode) == 0);
}

TEST_CASE("lock: shared locks coexist; several locks are all or nothing", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f", "data");
  FileId a = f.open_file("f", FILE_READ_DATA);
  FileId b = f.open_file("f", FILE_READ_DATA);
  const auto* node = f.find(a)->node.get();
  REQUIRE(lock(f, a, {{0, 100, kShared | kFailImmediately}}) == NtStatus::Success);
  REQUIRE(lock(f, b, {{50, 100, kShared | kFailImmediately}}) == NtStatus::Success);
  CHECK(lock(f, b, {{200, 10, kExclusive | kFailImmediately}, {90, 1, kExclusive | kFailImmediately}}) ==
        NtStatus::LockNotGranted);
  CHECK(f.server.locks.count(node->device, node->inode) == 2);  // the first element was rolled back
  CHECK(lock(f, b, {{200, 10, kExclusive | kFailImmediately}, {300, 1, kShared | kFailImmediately}}) ==
        NtStatus::Success);
  CHECK(lock(f, b, {{200, 10, kUnlock}, {300, 1, kUnlock}}) == NtStatus::Success);
  // Unlocks are processed in order and stop at the first failure.
  CHECK(lock(f, b, {{50, 100, kUnlock}, {1, 1, kUnlock}}) == NtStatus::RangeNotLocked);
  CHECK(f.server.locks.count(node->device, node->inode) == 1);
  release_locks_of(f, f.find(a), node->device, node->inode);
}

TEST_CASE("lock: zero-length locks sit between two bytes", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f");
  FileId a = f.open_file("f", FILE_WRITE_DATA);
  FileId b = f.open_file("f", FILE_WRITE_DATA);
  const auto* node = f.find(a)->node.get();
  constexpr uint32_t X = kExclusive | kFailImmediately;
  struct Case {
    El first, second;
    NtStatus want;
  };
  const Case cases[] = {
      {{10, 0, X}, {10, 0, X}, NtStatus::Success},       {{10, 0, X}, {9, 1, X}, NtStatus::Success},
      {{10, 0, X}, {10, 1, X}, NtStatus::Success},       {{10, 0, X}, {9, 2, X}, NtStatus::LockNotGranted},
      {{10, 0, X}, {10, 2, X}, NtStatus::Success},       {{9, 3, X}, {10, 0, X}, NtStatus::LockNotGranted},
      {{10, 1, X}, {10, 0, X}, NtStatus::Success},
  };
  for (FileId second_owner : {a, b}) {
    for (const Case& c : cases) {
      REQUIRE(lock(f, a, {c.first}) == NtStatus::Success);
      CHECK(lock(f, second_owner, {c.second}) == c.want);
      if (c.want == NtStatus::Success)
        REQUIRE(lock(f, second_owner, {{c.second.offset, c.second.length, kUnlock}}) == NtStatus::Success);
      REQUIRE(lock(f, a, {{c.first.offset, c.first.length, kUnlock}}) == NtStatus::Success);
    }
  }
  CHECK(f.server.locks.count(node->device, node->inode) == 0);
}

TEST_CASE("lock: stacked exclusive and shared unlock exclusive first; unlocks stop at the first failure",
          "[smb2]") {
  Smb2Fixture f;
  f.write_file("f");
  FileId a = f.open_file("f", FILE_WRITE_DATA);
  FileId b = f.open_file("f", FILE_WRITE_DATA);
  const auto* node = f.find(a)->node.get();
  REQUIRE(lock(f, a, {{10, 10, kExclusive | kFailImmediately}}) == NtStatus::Success);
  REQUIRE(lock(f, a, {{10, 10, kShared | kFailImmediately}}) == NtStatus::Success);
  CHECK(lock(f, b, {{5, 10, kShared | kFailImmediately}}) == NtStatus::LockNotGranted);
  REQUIRE(lock(f, a, {{10, 10, kUnlock}}) == NtStatus::Success);
  CHECK(lock(f, b, {{5, 10, kShared | kFailImmediately}}) == NtStatus::Success);  // only the shared is left
  REQUIRE(lock(f, b, {{5, 10, kUnlock}}) == NtStatus::Success);
  // Unlock of an unheld range first, then a lock element: RANGE_NOT_LOCKED wins.
  CHECK(lock(f, a, {{9999, 1, kUnlock}, {9999, 1, 0}}) == NtStatus::RangeNotLocked);
  // A held range, then a bad element: the first unlock stays done.
  CHECK(lock(f, a, {{10, 10, kUnlock}, {9999, 1, 0}}) == NtStatus::InvalidParameter);
  CHECK(f.server.locks.count(node->device, node->inode) == 0);
}

TEST_CASE("lock: ranges up to the end of the 64-bit space", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f");
  FileId a = f.open_file("f", FILE_WRITE_DATA);
  const auto* node = f.find(a)->node.get();
  CHECK(lock(f, a, {{~0ull, 1, kExclusive | kFailImmediately}}) == NtStatus::Success);
  CHECK(lock(f, a, {{~0ull, 2, kExclusive | kFailImmediately}}) == NtStatus::InvalidLockRange);
  CHECK(lock(f, a, {{1ull << 63, 1ull << 63, kShared | kFailImmediately}}) == NtStatus::Success);
  CHECK(lock(f, a, {{(1ull << 63) + 1, 1ull << 63, kShared | kFailImmediately}}) == NtStatus::InvalidLockRange);
  CHECK(lock(f, a, {{~0ull, 2, kUnlock}}) == NtStatus::InvalidLockRange);
  release_locks_of(f, f.find(a), node->device, node->inode);
}

TEST_CASE("lock: validation", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f");
  f.mkdir("d");
  FileId a = f.open_file("f", FILE_READ_DATA);
  const auto* node = f.find(a)->node.get();

  SECTION("LockCount 0") {
    CHECK(f.call(handle_lock, wire::Command::Lock, lock_body(a, {{0, 1, kShared}}, 0)).status ==
          NtStatus::InvalidParameter);
  }
  SECTION("LockCount larger than the elements present") {
    CHECK(f.call(handle_lock, wire::Command::Lock, lock_body(a, {{0, 1, kShared | kFailImmediately}}, 3)).status ==
          NtStatus::InvalidParameter);
  }
  SECTION("mixed lock and unlock") {
    CHECK(lock(f, a, {{0, 1, kShared | kFailImmediately}, {5, 1, kUnlock}}) == NtStatus::InvalidParameter);
    REQUIRE(lock(f, a, {{0, 1, kShared | kFailImmediately}}) == NtStatus::Success);
    CHECK(lock(f, a, {{0, 1, kUnlock}, {5, 1, kShared | kFailImmediately}}) == NtStatus::InvalidParameter);
    CHECK(lock(f, a, {{0, 1, kUnlock | kFailImmediately}}) == NtStatus::InvalidParameter);
  }
  SECTION("bad flag combinations") {
    CHECK(lock(f, a, {{0, 1, kShared | kExclusive}}) == NtStatus::InvalidParameter);
    CHECK(lock(f, a, {{0, 1, 0}}) == NtStatus::InvalidParameter);
    CHECK(lock(f, a, {{0, 1, kFailImmediately}}) == NtStatus::InvalidParameter);
    // A blocking lock must be the only element.
    CHECK(lock(f, a, {{0, 1, kShared}, {5, 1, kShared | kFailImmediately}}) == NtStatus::InvalidParameter);
    CHECK(f.server.locks.count(node->device, node->inode) == 0);
  }
  SECTION("closed file, directory, no data access") {
    CHECK(lock(f, FileId{77, 77}, {{0, 1, kShared | kFailImmediately}}) == NtStatus::FileClosed);
    FileId d = f.open_dir("d");
    CHECK(lock(f, d, {{0, 1, kShared | kFailImmediately}}) == NtStatus::InvalidParameter);
    FileId attr = f.open_file("f", FILE_READ_ATTRIBUTES);
    CHECK(lock(f, attr, {{0, 1, kShared | kFailImmediately}}) == NtStatus::AccessDenied);
  }
  SECTION("truncated body") {
    Bytes b = lock_body(a, {{0, 1, kShared}});
    b.resize(30);
    CHECK(f.call(handle_lock, wire::Command::Lock, b).status == NtStatus::InvalidParameter);
  }
}

TEST_CASE("lock: READ and WRITE honour byte-range locks (MS-FSA 2.1.5.2, 2.1.5.3)", "[smb2]") {
  Smb2Fixture f;
  f.write_file("f", std::string(100, 'x'));
  FileId a = f.open_file("f", FILE_READ_DATA | FILE_WRITE_DATA);
  FileId b = f.open_file("f", FILE_READ_DATA | FILE_WRITE_DATA);
  const auto* node = f.find(a)->node.get();
  state::LockTable& t = f.server.locks;
  const void* oa = f.find(a);
  const void* ob = f.find(b);

  SECTION("exclusive: the owner reads and writes, others do neither") {
    REQUIRE(lock(f, a, {{10, 10, kExclusive | kFailImmediately}}) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, oa, 0, 100, true) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, oa, 15, 1, false) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, ob, 19, 1, false) == NtStatus::FileLockConflict);
    CHECK(t.check_io(node->device, node->inode, ob, 0, 11, true) == NtStatus::FileLockConflict);
    CHECK(t.check_io(node->device, node->inode, ob, 0, 10, true) == NtStatus::Success);   // adjacent
    CHECK(t.check_io(node->device, node->inode, ob, 20, 10, false) == NtStatus::Success);  // adjacent
    CHECK(t.check_io(node->device, node->inode, ob, 12, 0, false) == NtStatus::Success);   // zero length
  }
  SECTION("shared: everyone reads, nobody writes") {
    REQUIRE(lock(f, a, {{10, 10, kShared | kFailImmediately}}) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, oa, 10, 10, false) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, ob, 10, 10, false) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, oa, 10, 1, true) == NtStatus::FileLockConflict);
    CHECK(t.check_io(node->device, node->inode, ob, 19, 5, true) == NtStatus::FileLockConflict);
  }
  SECTION("zero-length locks and huge ranges") {
    REQUIRE(lock(f, a, {{10, 0, kExclusive | kFailImmediately}}) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, ob, 0, 100, true) == NtStatus::Success);
    REQUIRE(lock(f, a, {{~0ull - 5, 5, kExclusive | kFailImmediately}}) == NtStatus::Success);
    CHECK(t.check_io(node->device, node->inode, ob, ~0ull - 2, 100, false) == NtStatus::FileLockConflict);
  }
  release_locks_of(f, oa, node->device, node->inode);
  release_locks_of(f, ob, node->device, node->inode);
}

// MS-SMB2 3.3.5.14: LockSequenceNumber (low 4 bits) and LockSequenceIndex.
TEST_CASE("lock: a durable open answers a repeated lock sequence without applying it again", "[smb2][durable]") {
  Smb2Fixture f;  // SMB 3.1.1
  f.write_file("f", "data");
  FileId a = f.open_file("f", FILE_READ_DATA | FILE_WRITE_DATA);
  FileId b = f.open_file("f", FILE_READ_DATA | FILE_WRITE_DATA);
  f.find(a)->lock_sequences = std::make_unique<state::LockSequences>();  // what a durable grant gives
  auto lock_seq = [&](FileId id, El e, uint32_t index, uint32_t number) {
    return f.call(handle_lock, wire::Command::Lock, lock_body(id, {e}, -1, index << 4 | number)).status;
  };
  const El exclusive{0, 10, kExclusive | kFailImmediately}, unlock{0, 10, kUnlock};

  REQUIRE(lock_seq(a, exclusive, 1, 3) == NtStatus::Success);
  CHECK(lock_seq(a, exclusive, 1, 3) == NtStatus::Success);          // the replay: not applied again
  CHECK(lock_seq(a, exclusive, 1, 4) == NtStatus::LockNotGranted);   // another number: applied, conflicts
  CHECK(lock_seq(a, exclusive, 0, 3) == NtStatus::LockNotGranted);   // index 0 is never remembered
  CHECK(lock_seq(a, exclusive, 65, 3) == NtStatus::LockNotGranted);  // nor past 64
  CHECK(lock_seq(a, unlock, 2, 7) == NtStatus::Success);
  CHECK(lock_seq(a, unlock, 2, 7) == NtStatus::Success);             // replayed unlock: not RANGE_NOT_LOCKED
  CHECK(lock_seq(a, unlock, 2, 8) == NtStatus::RangeNotLocked);

  // An open that is not durable has no sequence array: every LOCK is applied.
  REQUIRE(lock_seq(b, exclusive, 1, 3) == NtStatus::Success);
  CHECK(lock_seq(b, exclusive, 1, 3) == NtStatus::LockNotGranted);
  release_locks_of(f, f.find(b), f.find(b)->node->device, f.find(b)->node->inode);
}

TEST_CASE("lock table: locks_of lists one open's locks, oldest first", "[smb2]") {
  state::LockTable t;
  int a = 0, b = 0;
  state::ByteRange mine[] = {{0, 10, true}, {100, 5, false}};
  REQUIRE(t.lock(1, 2, &a, mine) == NtStatus::Success);
  state::ByteRange theirs[] = {{200, 1, true}};
  REQUIRE(t.lock(1, 2, &b, theirs) == NtStatus::Success);
  auto locks = t.locks_of(1, 2, &a);
  REQUIRE(locks.size() == 2);
  CHECK(locks[0].offset == 0);
  CHECK(locks[0].exclusive);
  CHECK(locks[1].offset == 100);
  CHECK_FALSE(locks[1].exclusive);
  CHECK(t.locks_of(1, 2, &b).size() == 1);
  CHECK(t.locks_of(1, 3, &a).empty());
}
