#include "state/lease_break_queue.hpp"

#include "common/assert.hpp"

namespace ringsmb::state {

BreakNotice lease_break_notice(const Lease& l, uint32_t from, uint32_t to, bool ack_required) {
  BreakNotice b;
  b.to = l.holder;
  b.client = l.client_guid;
  b.session_id = l.session_id;
  b.is_oplock = l.is_oplock;
  b.key = l.key;
  b.version = l.version;
  b.epoch = l.epoch;
  b.from = from;
  b.to_state = to;
  b.ack_required = ack_required;
  b.persistent_id = l.persistent_id;
  b.volatile_id = l.volatile_id;
  return b;
}

bool break_needs_ack(const Lease& l, uint32_t state) {
  return l.is_oplock ? (state & kLeaseWrite) != 0 : (state & (kLeaseWrite | kLeaseHandle)) != 0;
}

void queue_break(Lease& l, uint32_t target) { l.break_required &= target; }

namespace {

// What a lease keeps (RINGSMB_ASSERT): H or W only with R, only the three
// bits; a break out goes to a subset of the state; never fewer than zero
// opens.
void check_lease(const Lease& l) {
  RINGSMB_ASSERT((l.state & ~kLeaseRead) == 0 || (l.state & kLeaseRead) != 0);
  RINGSMB_ASSERT((l.state & ~(kLeaseRead | kLeaseHandle | kLeaseWrite)) == 0);
  RINGSMB_ASSERT(!l.breaking || (l.breaking_to & ~l.state) == 0);
  RINGSMB_ASSERT(l.opens >= 0);
}

}  // namespace

bool continue_break(Lease& l, int64_t now_ms, std::vector<BreakNotice>& out) {
  uint32_t required = l.break_required & l.state;
  if (required == l.state) {  // nothing more was asked for
    check_lease(l);
    return false;
  }
  // In steps: H or W go first (down to what is required, keeping R), then R.
  uint32_t next = (l.state & ~kLeaseRead) ? (required | kLeaseRead) & l.state : required;
  if (l.is_oplock && next) next = kLeaseRead;  // an oplock steps through level II
  bool ack = break_needs_ack(l, l.state);
  out.push_back(lease_break_notice(l, l.state, next, ack));
  if (!ack) {
    l.state = next;
    return continue_break(l, now_ms, out);  // R -> none needs no acknowledgment
  }
  l.breaking = true;
  l.breaking_to = next;
  l.break_deadline_ms = now_ms + l.break_timeout_ms;
  check_lease(l);
  return true;
}

bool break_blocks_open(const Lease& l, bool share_conflict) {
  if (!l.breaking) return false;
  return (l.state & kLeaseWrite) || (share_conflict && (l.state & kLeaseHandle));
}

}  // namespace ringsmb::state
