// The worker's tick (about once a second): login timeouts, deadtime, the
// deadlines of requests waiting for lease breaks, directory-lease changes
// to settle, kept durable opens and the frame buffer cache. It runs only
// while one of those may expire: otherwise the reactor sets no timer, and
// a worker whose connections are logged in and have nothing pending sleeps
// until a request or a post (an idle client costs no wake-up).
#include "common/large_buffer.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/engine/processor.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/leases/lease.hpp"
#include "transport/worker.hpp"

namespace ringsmb::transport {

bool Worker::wants_tick() {
  // Kept durable opens: their timeout (the worker that kept one was
  // ticking then, and sees it here). The process-wide frame buffer cache:
  // trimmed after kLargeBufferIdleMs.
  return active_since_tick_ || conns_want_tick_ || ctx_.durables.kept() != 0 ||
         large_buffer_cache_stats().buffers != 0;
}

void Worker::on_tick() {
  active_since_tick_ = false;
  int64_t now_ms = smb2::monotonic_ms();
  trim_large_buffers(now_ms);  // frame buffers nobody took for a while
  for (auto& [id, c] : conns_) {
    if (c->closing) continue;
    if (!c->state.async.waiting.empty()) smb2::expire_pending(c->state, ctx_, now_ms);
    smb2::settle_directory_changes(c->state, now_ms);  // one pointer test without a leased directory
  }
  metrics_.durable_expired += smb2::expire_durable_opens(ctx_, uint32_t(index_), now_ms);  // one relaxed load when none are kept
  int64_t now = now_s();
  expire_logins(now);
  expire_idle_connections(now);
  conns_want_tick_ = false;
  for (auto& [id, c] : conns_)
    if (!c->closing && conn_wants_tick(*c)) {
      conns_want_tick_ = true;
      break;
    }
}

// Whether C has something the tick must look after. Anything that starts
// one (a request, a posted task, a directory change, a new connection) is
// an event, after which the reactor asks wants_tick() again.
bool Worker::conn_wants_tick(const Conn& c) const {
  if (!c.state.logged_in) return true;  // the login timeout
  if (under_deadtime(c)) return true;
  return smb2::has_expiring_waits(c.state) || smb2::directory_changes_settling(c.state);
}

// "login timeout": a connection that has not completed NEGOTIATE and
// SESSION_SETUP in time holds a socket and up to kMaxFrameBeforeLogin
// bytes for nothing.
void Worker::expire_logins(int64_t now) {
  int64_t timeout_s = ctx_.config.global.login_timeout_s;
  for (auto& [id, c] : conns_)
    if (!c->closing && !c->state.logged_in && now - c->accepted_s >= timeout_s) drop(*c, "no login within the login timeout");
}

// Samba's deadtime: only connections with no open files are timed out.
bool Worker::under_deadtime(const Conn& c) const {
  return ctx_.config.global.deadtime_minutes && c.state.tables->opens.empty();
}

void Worker::expire_idle_connections(int64_t now) {
  const int64_t deadtime_s = int64_t(ctx_.config.global.deadtime_minutes) * 60;
  if (!deadtime_s) return;
  for (auto& [id, c] : conns_)
    if (!c->closing && under_deadtime(*c) && now - c->last_activity_s > deadtime_s) drop(*c, "idle");
}

}  // namespace ringsmb::transport
