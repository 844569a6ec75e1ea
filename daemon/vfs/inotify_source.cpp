#include "vfs/inotify_source.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "common/log.hpp"

namespace ringsmb::vfs {
namespace {

uint64_t read_proc_number(const char* path) {
  FILE* f = fopen(path, "re");
  if (!f) return 0;
  unsigned long long v = 0;
  if (fscanf(f, "%llu", &v) != 1) v = 0;
  fclose(f);
  return v;
}

// Room for many events per read(): each is 16 bytes plus its name.
constexpr size_t kReadBytes = 64 * 1024;
constexpr int kMaxReadsPerDispatch = 16;

}  // namespace

InotifyLimits read_inotify_limits() {
  return {read_proc_number("/proc/sys/fs/inotify/max_user_watches"),
          read_proc_number("/proc/sys/fs/inotify/max_user_instances"),
          read_proc_number("/proc/sys/fs/inotify/max_queued_events")};
}

InotifySource::~InotifySource() {
  if (fd_ >= 0) close(fd_);
}

bool InotifySource::open_fd() {
  if (fd_ >= 0) return true;
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return false;
  if (!on_open_ || !on_open_(fd)) {
    close(fd);
    errno = ENOSYS;
    return false;
  }
  fd_ = fd;
  return true;
}

std::expected<WatchHandle, int> InotifySource::watch(int dir_fd, uint32_t mask, ChangeSubscriber* sub, uint64_t tag) {
  if (!open_fd()) return std::unexpected(errno);
  // The directory is named by its descriptor, which was opened beneath the
  // share root: no path is resolved again. The kernel lets a process
  // through its own /proc/self/fd whatever its filesystem uid.
  char path[48];
  snprintf(path, sizeof path, "/proc/self/fd/%d", dir_fd);
  int wd = inotify_add_watch(fd_, path, mask | IN_MASK_ADD | IN_ONLYDIR);
  if (wd < 0) return std::unexpected(errno);
  KernelWatch& kw = by_wd_[wd];
  for (const Subscription& s : kw.subs)
    if (s.sub == sub) return std::unexpected(EEXIST);  // a loop through a bind mount
  kw.mask |= mask;
  WatchHandle h = next_handle_++;
  kw.subs.push_back({h, sub, tag, mask});
  wd_of_[h] = wd;
  ++sub_counts_[sub];
  return h;
}

void InotifySource::unwatch(WatchHandle h) {
  auto w = wd_of_.find(h);
  if (w == wd_of_.end()) return;
  int wd = w->second;
  wd_of_.erase(w);
  auto kw = by_wd_.find(wd);
  if (kw == by_wd_.end()) return;
  auto& subs = kw->second.subs;
  auto it = std::find_if(subs.begin(), subs.end(), [h](const Subscription& s) { return s.handle == h; });
  if (it == subs.end()) return;
  auto c = sub_counts_.find(it->sub);
  if (c != sub_counts_.end() && --c->second == 0) sub_counts_.erase(c);
  subs.erase(it);
  if (subs.empty()) {
    inotify_rm_watch(fd_, wd);  // the kernel's IN_IGNORED for it finds no entry
    by_wd_.erase(kw);
  }
}

// The kernel removed WD (its directory is gone, or the filesystem was
// unmounted): every subscription on it ends.
void InotifySource::forget_wd(int wd) {
  auto kw = by_wd_.find(wd);
  if (kw == by_wd_.end()) return;
  for (const Subscription& s : kw->second.subs) {
    wd_of_.erase(s.handle);
    auto c = sub_counts_.find(s.sub);
    if (c != sub_counts_.end() && --c->second == 0) sub_counts_.erase(c);
  }
  by_wd_.erase(kw);
}

void InotifySource::deliver(const inotify_event& ev, std::vector<ChangeSubscriber*>& touched) {
  auto kw = by_wd_.find(ev.wd);
  if (kw == by_wd_.end()) return;
  DirChange change;
  change.mask = ev.mask;
  change.cookie = ev.cookie;
  change.name = ev.len ? std::string_view(ev.name, strnlen(ev.name, ev.len)) : std::string_view();
  // A copy: a subscriber may watch or unwatch (a new subdirectory) meanwhile.
  std::vector<Subscription> subs = kw->second.subs;
  if (ev.mask & IN_IGNORED) forget_wd(ev.wd);
  // Each subscriber hears what it asked for (a watch shared with another
  // that asked for more does not widen it), and always of the directory's end.
  constexpr uint32_t kAlways = IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT;
  for (const Subscription& s : subs) {
    if (!subscribed(s.sub) || !(ev.mask & (s.mask | kAlways))) continue;
    if (!(ev.mask & IN_IGNORED) && !wd_of_.count(s.handle)) continue;  // unwatched meanwhile
    s.sub->on_change(s.tag, change);
    if (std::find(touched.begin(), touched.end(), s.sub) == touched.end()) touched.push_back(s.sub);
  }
}

void InotifySource::dispatch() {
  read_ready();
  deliver_read();
}

void InotifySource::read_ready() {
  if (fd_ < 0) return;
  alignas(inotify_event) char buf[kReadBytes];
  // Bounded, so that a flood of changes (a local process creating millions
  // of files) does not keep the worker from its connections; the reactor
  // reports the descriptor readable again at once.
  for (int reads = 0; reads < kMaxReadsPerDispatch; ++reads) {
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;  // counted: a signal storm cannot hold the worker either
    if (n <= 0) break;  // EAGAIN: read empty
    read_.insert(read_.end(), buf, buf + n);
  }
}

void InotifySource::deliver_read() {
  std::vector<char> events = std::exchange(read_, {});
  std::vector<ChangeSubscriber*> touched;
  for (size_t at = 0; at + sizeof(inotify_event) <= events.size();) {
    const auto* ev = reinterpret_cast<const inotify_event*>(events.data() + at);
    at += sizeof(inotify_event) + ev->len;
    if (ev->mask & IN_Q_OVERFLOW) {
      LOG_WARN("inotify: the kernel's event queue overflowed (fs.inotify.max_queued_events); "
               "watchers are told to re-read their directories");
      for (auto& [sub, count] : sub_counts_) {
        sub->on_lost_changes();
        if (std::find(touched.begin(), touched.end(), sub) == touched.end()) touched.push_back(sub);
      }
      continue;
    }
    deliver(*ev, touched);
  }
  // Subscribers live until the SMB2 layer drops them, never during a
  // dispatch: one whose last watch the kernel just removed still hears.
  for (ChangeSubscriber* s : touched) s->on_batch_end();
}

}  // namespace ringsmb::vfs
