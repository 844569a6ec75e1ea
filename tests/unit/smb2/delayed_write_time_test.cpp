// smb2/delayed_write_time: what LastWriteTime a query through a written
// handle shows (the time before its first write until the update is due,
// then the file's own; after writes past the update, the update's time
// until CLOSE sets the close time), on a scratch file. The 2 s delay
// passes on a manual clock (manual_clock.hpp).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smb2/files/delayed_write_time.hpp"
#include "smb2/manual_clock.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/temp_dir.hpp"

using namespace ringsmb;

namespace {

constexpr uint64_t kDay = 864000000000ull;  // FILETIME units

struct WrittenFile {
  smb2::test::ManualClock clock;
  vfs::test::TempDir dir;
  state::Open open;
  uint64_t old_time = vfs::filetime_now() - kDay;
  WrittenFile() {
    dir.write_file("f", "x");
    open.fd = state::UniqueFd(::open((dir.path() / "f").c_str(), O_RDWR | O_CLOEXEC));
    set_on_disk(old_time);  // a day old: a write visibly moves it
    smb2::write_time_seen(open, old_time);
  }
  void set_on_disk(uint64_t filetime) {
    struct timespec ts[2] = {{0, UTIME_OMIT}, vfs::filetime_to_timespec(filetime)};
    REQUIRE(futimens(open.fd.get(), ts) == 0);
  }
  void write() {
    smb2::note_write(open);
    REQUIRE(pwrite(open.fd.get(), "y", 1, 0) == 1);
  }
  uint64_t shown() {
    auto st = vfs::stat_fd(open.fd.get());
    REQUIRE(st);
    smb2::show_write_time(open, *st);
    return st->last_write_time;
  }
  uint64_t on_disk() { return vfs::stat_fd(open.fd.get())->last_write_time; }
  void let_update_come() { clock.advance(smb2::kWriteTimeUpdateDelayMs); }
};

}  // namespace

TEST_CASE("delayed write time: held after a write until due, then the file's own", "[smb2][timestamps]") {
  WrittenFile f;
  f.write();
  CHECK(f.on_disk() > f.old_time);  // the kernel moved it...
  CHECK(f.shown() == f.old_time);   // ...the handle does not show it yet
  f.let_update_come();
  const uint64_t updated = f.shown();
  CHECK(updated == f.on_disk());
  CHECK(updated > f.old_time);
  smb2::write_time_at_close(f.open);  // nothing written since: the time stays
  CHECK(f.on_disk() == updated);
}

TEST_CASE("delayed write time: writes after the update show at close", "[smb2][timestamps]") {
  WrittenFile f;
  f.write();
  f.let_update_come();
  // The file's own time, set apart from any the next write can get (a write
  // within the kernel's timestamp tick would otherwise keep it unchanged).
  f.set_on_disk(f.old_time + kDay / 2);
  const uint64_t updated = f.shown();
  CHECK(updated == f.old_time + kDay / 2);
  f.write();
  CHECK(f.on_disk() != updated);
  CHECK(f.shown() == updated);
  const uint64_t before_close = vfs::filetime_now();
  smb2::write_time_at_close(f.open);
  CHECK(f.on_disk() >= before_close);
}

TEST_CASE("delayed write time: FLUSH or SET_INFO bring it forward; an explicit time shows", "[smb2][timestamps]") {
  WrittenFile f;
  f.write();
  smb2::update_write_time_now(f.open);
  CHECK(f.shown() > f.old_time);
  const uint64_t set = f.old_time + kDay / 2;
  struct timespec ts[2] = {{0, UTIME_OMIT}, vfs::filetime_to_timespec(set)};
  REQUIRE(futimens(f.open.fd.get(), ts) == 0);
  smb2::write_time_was_set(f.open, set);
  CHECK(f.shown() == set);
}

TEST_CASE("delayed write time: an update the kernel's coarse clock did not show sets the time", "[smb2][timestamps]") {
  WrittenFile f;
  f.write();
  const uint64_t written = f.on_disk();
  f.open.write_time.shown = written;  // as if created and written in one clock tick
  smb2::update_write_time_now(f.open);
  CHECK(f.shown() > written);
}

TEST_CASE("delayed write time: a frozen handle (-1) holds nothing", "[smb2][timestamps]") {
  WrittenFile f;
  f.open.frozen_write_time = f.old_time;
  f.write();
  CHECK(f.shown() == f.on_disk());
  CHECK(f.open.write_time.phase == state::DelayedWriteTime::Phase::Idle);
}
