#include "io/uring_queued_send.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ringsmb::io {
namespace {

// One queued send on RING, submitted without waiting: the result of its
// CQE if one was posted by the time io_uring_enter returned, else
// kNoCqe (or kSubmitFailed).
constexpr int kNoCqe = 1 << 30, kSubmitFailed = kNoCqe + 1;
int queued_send_once(io_uring& ring, int fd, const uint8_t* data, size_t size) {
  io_uring_sqe* s = io_uring_get_sqe(&ring);
  prep_queued_send(s, fd, data, size);
  io_uring_sqe_set_data64(s, 1);
  if (io_uring_submit(&ring) != 1) return kSubmitFailed;
  io_uring_cqe* cqe = nullptr;
  if (io_uring_cq_ready(&ring) == 0 || io_uring_peek_cqe(&ring, &cqe) != 0) return kNoCqe;
  int res = cqe->res;
  io_uring_cqe_seen(&ring, cqe);
  return res;
}

size_t drain_socket(int fd) {
  static uint8_t sink[65536];
  size_t total = 0;
  ssize_t n;
  while ((n = recv(fd, sink, sizeof sink, MSG_DONTWAIT)) > 0) total += size_t(n);
  return total;
}

// On a socketpair FROM -> TO: a send with room posts nothing and arrives;
// one into a full socket fails with -EAGAIN at once; one that finds some
// room reports, at once, exactly the bytes that arrive.
bool queued_sends_behave(io_uring& ring, int from, int to) {
  static const uint8_t bytes[1 << 20] = {};
  if (queued_send_once(ring, from, bytes, 100) != kNoCqe || drain_socket(to) != 100) return false;
  size_t filled = 0;
  ssize_t n;
  while ((n = send(from, bytes, 65536, MSG_DONTWAIT)) > 0) filled += size_t(n);
  if (queued_send_once(ring, from, bytes, 4096) != -EAGAIN) return false;
  uint8_t some[16384];
  ssize_t freed = recv(to, some, sizeof some, MSG_DONTWAIT);
  if (freed <= 0) return false;
  int res = queued_send_once(ring, from, bytes, sizeof bytes);
  if (res != -EAGAIN && (res <= 0 || size_t(res) >= sizeof bytes)) return false;
  return size_t(freed) + drain_socket(to) == filled + size_t(std::max(res, 0));
}

}  // namespace

uint64_t QueuedSends::add(uint64_t conn_id, size_t size, unsigned sqe_pos) {
  const uint64_t tag = next_tag_++;
  queued_.push_back({tag, conn_id, size, sqe_pos});
  return tag;
}

void QueuedSends::note_submitted(unsigned khead) {
  size_t kept = 0;
  for (const Send& q : queued_) {
    if (int(khead - q.sqe_pos) > 0)
      taken_.push_back(q);
    else
      queued_[kept++] = q;
  }
  queued_.resize(kept);
}

std::vector<QueuedSends::Report> QueuedSends::take_reports(std::span<const Failure> failures) {
  std::vector<Report> reports;
  for (const Send& q : taken_) {
    auto f = std::find_if(failures.begin(), failures.end(), [&](const Failure& x) { return x.tag == q.tag; });
    reports.push_back({q.conn_id, f != failures.end() ? f->result : int(q.size)});
  }
  taken_.clear();
  return reports;
}

bool QueuedSends::take_failure(uint64_t tag, int result, Report& report) {
  auto it = std::find_if(taken_.begin(), taken_.end(), [&](const Send& q) { return q.tag == tag; });
  if (it == taken_.end()) return false;
  report = {it->conn_id, result};
  taken_.erase(it);
  return true;
}

bool queued_sends_work(unsigned flags) {
  io_uring ring;
  io_uring_params p{};
  p.flags = flags;
  if (io_uring_queue_init_params(8, &ring, &p) < 0) return false;
  int sv[2] = {-1, -1};
  bool ok = (p.features & IORING_FEAT_CQE_SKIP) &&
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0 &&
            queued_sends_behave(ring, sv[0], sv[1]);
  if (sv[0] >= 0) close(sv[0]);
  if (sv[1] >= 0) close(sv[1]);
  io_uring_queue_exit(&ring);
  return ok;
}

}  // namespace ringsmb::io
