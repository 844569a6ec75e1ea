// The order of a break and the reply of the request that caused it
// (smb2/leases/lease.hpp post_breaks with the causing connection): the
// break for another connection is posted to that connection's worker, and
// the causing connection sends no reply until that worker has handed the
// notification to its socket (or the connection is gone).
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "smb2/engine/chain.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/server_context.hpp"
#include "smb2/leases/lease.hpp"
#include "transport/direct_tcp.hpp"
#include "wire/smb2_header.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;

namespace {

// Keeps each posted task with its address; the test runs them as the
// workers would.
struct AddressedPoster : ConnPoster {
  std::vector<std::pair<state::ConnAddress, ConnTask>> tasks;
  void post(const state::ConnAddress& to, ConnTask task) override { tasks.emplace_back(to, std::move(task)); }
  // Takes the tasks posted so far (the caller destroys them when done).
  std::vector<std::pair<state::ConnAddress, ConnTask>> take() { return std::exchange(tasks, {}); }
};

struct BreakOrderFixture {
  ServerContext server;
  AddressedPoster poster;
  ConnState cause, holder;
  BreakOrderFixture() {
    server.poster = &poster;
    cause.address = {0, 10};
    holder.address = {1, 20};
    cause.framing = holder.framing = &transport::direct_tcp_framing();
  }
  ~BreakOrderFixture() { server.poster = nullptr; }
  // An RH -> R lease break for the holder's connection.
  state::BreakNotice notice() const {
    state::BreakNotice b;
    b.to = holder.address;
    b.from = state::kLeaseRead | state::kLeaseHandle;
    b.to_state = state::kLeaseRead;
    b.ack_required = true;
    return b;
  }
};

bool is_break(const Bytes& out) {
  wire::Header h{};
  return out.size() > 4 + wire::kHeaderSize && wire::parse_header(ByteSpan(out).subspan(4), h) &&
         h.command == wire::Command::OplockBreak;
}

}  // namespace

TEST_CASE("break order: the causing connection's replies wait until the break is handed to its socket",
          "[smb2][lease][break]") {
  BreakOrderFixture f;
  post_breaks(f.server, {f.notice()}, f.cause);
  CHECK(f.cause.breaks_unsent == 1);  // the transport holds its replies
  auto posted = f.poster.take();
  REQUIRE(posted.size() == 1);
  CHECK(posted[0].first.worker == 1);
  CHECK(posted[0].first.conn_id == 20);
  Bytes out;
  posted[0].second(f.holder, out);  // on the holder's worker
  CHECK(is_break(out));
  CHECK(f.holder.send_at_once);  // sent inline, not with the reactor's next wait
  CHECK(f.poster.tasks.empty());  // not told yet: the worker flushes after the task
  posted.clear();  // the worker is done with the task
  auto told = f.poster.take();
  REQUIRE(told.size() == 1);
  CHECK(told[0].first.worker == 0);
  CHECK(told[0].first.conn_id == 10);
  Bytes cause_out;
  told[0].second(f.cause, cause_out);
  CHECK(f.cause.breaks_unsent == 0);
}

TEST_CASE("break order: a break whose connection is gone frees the causing connection's replies",
          "[smb2][lease][break]") {
  BreakOrderFixture f;
  post_breaks(f.server, {f.notice(), f.notice()}, f.cause);
  CHECK(f.cause.breaks_unsent == 2);
  f.poster.take();  // dropped without running, as for a connection that ended
  auto told = f.poster.take();
  REQUIRE(told.size() == 2);
  Bytes out;
  for (auto& [to, task] : told) task(f.cause, out);
  CHECK(f.cause.breaks_unsent == 0);
}

TEST_CASE("break order: a break for the causing connection itself follows its responses",
          "[smb2][lease][break]") {
  BreakOrderFixture f;
  state::BreakNotice b = f.notice();
  b.to = f.cause.address;
  post_breaks(f.server, {b}, f.cause);
  CHECK(f.cause.breaks_unsent == 0);
  CHECK(f.poster.tasks.empty());
  REQUIRE(f.cause.async.ready.size() == 1);
  CHECK(f.cause.async.ready[0].message.size() > wire::kHeaderSize);
}

TEST_CASE("break order: without a causing connection nothing waits", "[smb2][lease][break]") {
  BreakOrderFixture f;
  post_breaks(f.server, {f.notice()});
  CHECK(f.cause.breaks_unsent == 0);
  auto posted = f.poster.take();
  REQUIRE(posted.size() == 1);
  posted.clear();
  CHECK(f.poster.tasks.empty());  // nobody to tell
}
