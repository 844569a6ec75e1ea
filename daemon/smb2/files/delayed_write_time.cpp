// The delayed LastWriteTime update (smb2/files/delayed_write_time.hpp).
#include "smb2/files/delayed_write_time.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include "smb2/engine/clock.hpp"
#include "vfs/file_meta.hpp"

namespace ringsmb::smb2 {
namespace {

using Phase = state::DelayedWriteTime::Phase;

uint64_t disk_write_time(int fd) {
  auto st = vfs::stat_fd(fd);
  return st ? st->last_write_time : 0;
}

// Sets the file's LastWriteTime to the current time, read from the precise
// clock (the kernel's own stamp is a clock tick behind); the time set, or
// 0 when it could not be set.
uint64_t set_write_time_now(int fd) {
  uint64_t now = vfs::filetime_now();
  struct timespec ts[2] = {{0, UTIME_OMIT}, vfs::filetime_to_timespec(now)};
  return futimens(fd, ts) == 0 ? now : 0;
}

bool held(const state::Open& open) { return !open.frozen_write_time && !open.stream && !open.is_directory; }

}  // namespace

void note_write(state::Open& open) {
  if (!held(open)) return;
  auto& t = open.write_time;
  switch (t.phase) {
    case Phase::Idle:
      t.shown = t.last_seen ? t.last_seen : disk_write_time(open.fd.get());
      if (!t.shown) return;  // nothing known to hold
      t.phase = Phase::Pending;
      t.due_ms = monotonic_ms() + kWriteTimeUpdateDelayMs;
      return;
    case Phase::Pending:
      if (monotonic_ms() < t.due_ms) return;
      [[fallthrough]];  // the update came before this write: it showed the writes so far
    case Phase::Due:
    case Phase::Updated:
      if (uint64_t before = disk_write_time(open.fd.get())) {
        t.shown = before;
        t.phase = Phase::Dirty;
      }
      return;
    case Phase::Dirty: return;
  }
}

void show_write_time(state::Open& open, vfs::FileStat& st) {
  if (!held(open)) return;
  auto& t = open.write_time;
  switch (t.phase) {
    case Phase::Idle:
    case Phase::Updated: t.last_seen = st.last_write_time; return;
    case Phase::Pending:
      if (monotonic_ms() < t.due_ms) {
        st.last_write_time = t.shown;
        return;
      }
      [[fallthrough]];
    case Phase::Due:
      // The writes did not move the kernel's coarse mtime past the time
      // shown before them: the update sets the current time.
      if (st.last_write_time <= t.shown)
        if (uint64_t now = set_write_time_now(open.fd.get())) st.last_write_time = now;
      t.phase = Phase::Updated;
      t.last_seen = st.last_write_time;
      return;
    case Phase::Dirty: st.last_write_time = t.shown; return;
  }
}

void update_write_time_now(state::Open& open) {
  if (!held(open)) return;
  auto& t = open.write_time;
  if (t.phase == Phase::Pending) {
    t.phase = Phase::Due;
  } else if (t.phase == Phase::Dirty) {
    set_write_time_now(open.fd.get());
    t.phase = Phase::Updated;
  }
}

void write_time_was_set(state::Open& open, uint64_t time) {
  auto& t = open.write_time;
  t.last_seen = time;
  if (t.phase != Phase::Idle) t.phase = Phase::Updated;
}

void write_time_at_close(state::Open& open) {
  if (held(open) && open.write_time.phase == Phase::Dirty) set_write_time_now(open.fd.get());
  open.write_time.phase = Phase::Idle;
}

}  // namespace ringsmb::smb2
