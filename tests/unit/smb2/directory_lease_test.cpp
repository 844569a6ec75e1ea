// Directory leases broken by local changes (smb2/leases/directory_lease.hpp): a
// connection's watch of its leased directory, fed by a real inotify source
// read by hand, breaks the lease for an entry a local process creates,
// removes or renames, after the event settled; the server's own change of
// an entry (recorded by break_directory_leases) breaks nothing more.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "fixture.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/leases/lease.hpp"
#include "vfs/file_info.hpp"
#include "vfs/inotify_source.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t R = state::kLeaseRead, H = state::kLeaseHandle;

struct LeasedDirFixture : Smb2Fixture {
  vfs::InotifySource source{[](int) { return true; }};  // dispatch() is called by hand
  QueuedPoster poster;
  state::UniqueFd dir_fd;
  uint64_t dev = 0, ino = 0;
  std::shared_ptr<state::Lease> lease;
  std::shared_ptr<state::FileNode> node;
  int owner = 0;

  LeasedDirFixture() {
    conn.changes = &source;
    server.poster = &poster;
    mkdir("d");
    dir_fd.reset(::open((dir() / "d").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dir_fd);
    auto st = vfs::stat_fd(dir_fd.get());
    REQUIRE(st);
    dev = st->device;
    ino = st->file_id;
    // An RH directory lease held by another client, as CREATE grants it.
    state::CacheRequest c;
    c.oplock_level = state::kOplockLease;
    c.lease = server.leases.find_or_create(guid(7), guid(1));
    c.lease_state = R | H;
    c.lease_version = 2;
    c.directory = c.directory_leases = true;
    c.holder = conn.address;
    auto out = server.files.open_cached(dev, ino, &owner, 0x1, 7, &c);
    REQUIRE(out.grant.lease_state == (R | H));
    lease = out.grant.lease;
    node = out.node;
  }
  // The watches go while the source they unwatch from still exists.
  ~LeasedDirFixture() {
    conn.dir_lease_watches.reset();
    server.files.close_cached(node, &owner);
  }
  static state::Guid guid(uint8_t b) {
    state::Guid g{};
    g.fill(b);
    return g;
  }
  void watch() {
    conn.dir_lease_watches = std::make_shared<DirLeaseWatches>(conn, server);
    conn.dir_lease_watches->add(5, dir_fd.get(), dev, ino);
    REQUIRE(conn.dir_lease_watches->directories() == 1);
  }
};

}  // namespace

TEST_CASE("a local process creating an entry breaks the directory lease once the event settled",
          "[smb2][lease][directory]") {
  LeasedDirFixture f;
  f.watch();
  f.write_file("d/local.txt");  // a local process, not through SMB
  f.source.dispatch();
  REQUIRE(f.conn.dir_lease_watches->settling());
  int64_t now = monotonic_ms();
  f.conn.dir_lease_watches->settle(now);  // not settled yet: judged at a later tick
  CHECK_FALSE(f.lease->breaking);
  f.conn.dir_lease_watches->settle(now + DirLeaseWatches::kSettleMs);
  CHECK(f.lease->breaking);  // RH -> none, out to the holder
  CHECK(f.lease->breaking_to == 0);
  CHECK(f.poster.tasks.size() == 1);
  CHECK_FALSE(f.conn.dir_lease_watches->settling());
}

TEST_CASE("the server's own change of an entry does not break the directory lease again",
          "[smb2][lease][directory]") {
  LeasedDirFixture f;
  f.watch();
  f.write_file("d/mine.txt");
  // What CREATE does after creating the entry through an open whose
  // ParentLeaseKey names the lease: its own change, no break.
  state::Guid parent = LeasedDirFixture::guid(1);
  break_directory_leases(f.server, f.dir_fd.get(), "mine.txt", LeasedDirFixture::guid(7), &parent);
  CHECK_FALSE(f.lease->breaking);
  f.source.dispatch();
  f.conn.dir_lease_watches->settle(monotonic_ms() + DirLeaseWatches::kSettleMs);
  CHECK_FALSE(f.lease->breaking);  // its IN_CREATE was the server's own
  CHECK(f.poster.tasks.empty());
  // A local process renames it: the old name's event is taken for the
  // server's (recent), the new name's is not.
  REQUIRE(std::rename((f.dir() / "d" / "mine.txt").c_str(), (f.dir() / "d" / "renamed.txt").c_str()) == 0);
  f.source.dispatch();
  f.conn.dir_lease_watches->settle(monotonic_ms() + DirLeaseWatches::kSettleMs);
  CHECK(f.lease->breaking);
}

TEST_CASE("the watch of a leased directory ends with the last open holding the lease", "[smb2][lease][directory]") {
  LeasedDirFixture f;
  f.watch();
  f.conn.dir_lease_watches->add(6, f.dir_fd.get(), f.dev, f.ino);  // a second open of it: one kernel watch
  CHECK(f.source.kernel_watches() == 1);
  f.conn.dir_lease_watches->remove(5);
  CHECK(f.source.kernel_watches() == 1);
  f.conn.dir_lease_watches->remove(6);
  CHECK(f.source.kernel_watches() == 0);
  CHECK(f.conn.dir_lease_watches->directories() == 0);
}
