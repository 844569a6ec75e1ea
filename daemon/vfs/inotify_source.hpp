// The ChangeSource of one worker, on inotify (why inotify and not fanotify:
// docs/internals-sessions.md, "Change notification"). One inotify instance per worker, opened at the
// first watch, so a server nobody watches holds none and its request path
// makes no inotify call. The worker registers the descriptor with its
// reactor (on_open) and calls dispatch() when it is readable.
//
// The kernel gives one watch descriptor per directory and instance: two
// subscribers watching one directory share it (its mask is the union), and
// it is removed when the last one lets go.
#pragma once

#include <sys/inotify.h>

#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "vfs/change_source.hpp"

namespace ringsmb::vfs {

// The kernel's inotify limits (/proc/sys/fs/inotify), 0 where unreadable.
struct InotifyLimits {
  uint64_t max_user_watches = 0;
  uint64_t max_user_instances = 0;
  uint64_t max_queued_events = 0;
};
InotifyLimits read_inotify_limits();

class InotifySource final : public ChangeSource {
 public:
  // ON_OPEN gets the descriptor when the first watch opens it; it returns
  // false when nobody will tell us it is readable (then watches fail).
  explicit InotifySource(std::function<bool(int fd)> on_open) : on_open_(std::move(on_open)) {}
  ~InotifySource() override;
  InotifySource(const InotifySource&) = delete;
  InotifySource& operator=(const InotifySource&) = delete;

  std::expected<WatchHandle, int> watch(int dir_fd, uint32_t mask, ChangeSubscriber* sub, uint64_t tag) override;
  void unwatch(WatchHandle h) override;
  // Reads every queued event (until EAGAIN) and hands them out.
  void dispatch();
  // dispatch() in two steps: read_ready() reads and keeps the queued
  // events, deliver_read() hands out what was kept. Between them the
  // worker takes in the requests that arrived before the read (the
  // reactor's look_again), so a change reaches the CHANGE_NOTIFYs sent
  // before it happened.
  void read_ready();
  void deliver_read();
  size_t read_bytes() const { return read_.size(); }
  size_t kernel_watches() const { return by_wd_.size(); }

 private:
  struct Subscription {
    WatchHandle handle;
    ChangeSubscriber* sub;
    uint64_t tag;
    uint32_t mask;  // what this subscriber asked for: the kernel's mask is the union of all
  };
  struct KernelWatch {
    uint32_t mask = 0;
    std::vector<Subscription> subs;
  };
  bool open_fd();
  void deliver(const inotify_event& ev, std::vector<ChangeSubscriber*>& touched);
  void forget_wd(int wd);
  bool subscribed(ChangeSubscriber* sub) const { return sub_counts_.count(sub) != 0; }

  std::function<bool(int)> on_open_;
  // Events read and not handed out yet, whole, as the kernel wrote them
  // (each one aligned for inotify_event: vector storage is, and the kernel
  // pads every name to keep the next event aligned).
  std::vector<char> read_;
  int fd_ = -1;
  WatchHandle next_handle_ = 1;
  std::unordered_map<int, KernelWatch> by_wd_;
  std::unordered_map<WatchHandle, int> wd_of_;                 // handle -> wd
  std::unordered_map<ChangeSubscriber*, uint32_t> sub_counts_;  // live subscriptions per subscriber
};

}  // namespace ringsmb::vfs
