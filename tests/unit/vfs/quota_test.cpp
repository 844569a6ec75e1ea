#include <catch2/catch.hpp>

#include "vfs/quota.hpp"
#include "vfs/temp_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

using namespace ringsmb::vfs;

TEST_CASE("free space under a user quota", "[vfs][quota]") {
  constexpr uint64_t MiB = 1 << 20, unit = 4096;
  const SpaceUnits fs{100 * MiB / unit, 60 * MiB / unit};
  UserQuota q;
  q.used_bytes = MiB;
  q.soft_limit_bytes = 4 * MiB;
  q.hard_limit_bytes = 8 * MiB;
  SpaceUnits s = narrow_to_quota(fs, q, unit);
  CHECK(s.total * unit == 4 * MiB);      // the soft limit is the disk
  CHECK(s.available * unit == 3 * MiB);  // what is left below it
  q.soft_limit_bytes = 0;                // only a hard limit: that one
  s = narrow_to_quota(fs, q, unit);
  CHECK(s.total * unit == 8 * MiB);
  CHECK(s.available * unit == 7 * MiB);
  q.used_bytes = 9 * MiB;  // over the limit: nothing left
  CHECK(narrow_to_quota(fs, q, unit).available == 0);
  q.soft_limit_bytes = q.hard_limit_bytes = 0;  // no limit: the file system's numbers
  s = narrow_to_quota(fs, q, unit);
  CHECK(s.total == fs.total);
  CHECK(s.available == fs.available);
  q.hard_limit_bytes = 1000 * MiB;  // a limit above the disk: never more than the disk
  s = narrow_to_quota(fs, q, unit);
  CHECK(s.total == fs.total);
  CHECK(s.available == fs.available);
}

TEST_CASE("a file system without user quotas has none", "[vfs][quota]") {
  ringsmb::vfs::test::TempDir d;
  int fd = open(d.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  // The test directory's file system (tmpfs or the build's) keeps no
  // user quotas here; where it does, this says nothing.
  if (!user_quota_state(fd)) {
    CHECK(get_user_quota(fd, 1000).error() == ringsmb::NtStatus::NotSupported);
    CHECK_FALSE(next_user_quota(fd, 0));
  }
  close(fd);
}
