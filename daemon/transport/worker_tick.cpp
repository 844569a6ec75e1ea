// When a worker's tick (Worker::on_tick, once a second) has work: while
// something it looks after may expire. Otherwise the reactor sets no
// timer and an idle server's workers sleep until a connection or a post.
#include "common/large_buffer.hpp"
#include "transport/worker.hpp"

namespace ringsmb::transport {

bool Worker::wants_tick() {
  // Connections: login timeout, deadtime, async requests' and leases'
  // deadlines, directory changes. Kept durable opens: their timeout (the
  // worker that kept one was ticking then, and sees it here). The
  // process-wide frame buffer cache: trimmed after kLargeBufferIdleMs.
  return !conns_.empty() || ctx_.durables.kept() != 0 || large_buffer_cache_stats().buffers != 0;
}

}  // namespace ringsmb::transport
