// queue_send on io_uring (io/uring_reactor.cpp): the SQE of a reply that
// goes out inside the io_uring_enter that waits for completions, the
// start-up check that this kernel runs it as the reactor relies on, and
// the book of such sends from their queue_send to their report.
#pragma once

#include <liburing.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ringsmb::io {

// A queued send: MSG_DONTWAIT makes the kernel try it once, at submission,
// and never leave it waiting for room (REQ_F_NOWAIT); MSG_WAITALL makes a
// short send a failure that reports the bytes it took; and a success posts
// no CQE (IOSQE_CQE_SKIP_SUCCESS). So once the io_uring_enter that
// submitted it returns, it is over: sent whole, or its CQE is posted.
inline void prep_queued_send(io_uring_sqe* s, int fd, const uint8_t* data, size_t size) {
  io_uring_prep_send(s, fd, data, size, MSG_DONTWAIT | MSG_WAITALL | MSG_NOSIGNAL);
  s->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

// Whether this kernel runs queued sends so (IORING_FEAT_CQE_SKIP, and on a
// socketpair: a send with room posts nothing and arrives; one into a full
// socket fails with -EAGAIN at once; one that finds some room reports, at
// once, exactly the bytes that arrive), on a ring made with FLAGS like the
// worker's.
bool queued_sends_work(unsigned flags);

// The queued sends of one ring. Each has a tag of its own (its CQE's
// user_data says which send it is, even when a connection's earlier send
// failed too). A send is `queued` until an io_uring_enter takes its SQE,
// then `taken`: over, and only its report is left.
class QueuedSends {
 public:
  struct Report {
    uint64_t conn_id = 0;
    int result = 0;  // as ReactorHandler::on_send has it
  };
  struct Failure {
    uint64_t tag = 0;
    int result = 0;  // its CQE's res
  };

  // A send of SIZE bytes for CONN_ID whose SQE is at position SQE_POS of
  // the submission queue (its tail before the SQE was added): its tag.
  uint64_t add(uint64_t conn_id, size_t size, unsigned sqe_pos);
  // After an io_uring_enter: the sends whose SQE the kernel took (the
  // queue's head is now KHEAD) are over.
  void note_submitted(unsigned khead);
  bool any_taken() const { return !taken_.empty(); }
  // Whether PRED holds for the connection of a send that the next
  // io_uring_enter will take.
  template <class Pred>
  bool any_queued(Pred pred) const {
    for (const Send& q : queued_)
      if (pred(q.conn_id)) return true;
    return false;
  }
  // The reports of every taken send, given the FAILURES that the CQEs in
  // the completion queue name (all there are, for the sends taken so far):
  // a failure's result, else all the send's bytes.
  std::vector<Report> take_reports(std::span<const Failure> failures);
  // A CQE of send TAG met while completions are handled: its report, when
  // it is a send taken since the last take_reports (else it was reported).
  bool take_failure(uint64_t tag, int result, Report& report);

 private:
  struct Send {
    uint64_t tag = 0;
    uint64_t conn_id = 0;
    size_t size = 0;
    unsigned sqe_pos = 0;
  };
  std::vector<Send> queued_, taken_;
  uint64_t next_tag_ = 1;
};

}  // namespace ringsmb::io
