#include "smb2/engine/channel_sequence.hpp"

namespace ringsmb::smb2 {
namespace {

// Counts the request in OPEN when 3.3.5.2.10 lets it run; false otherwise.
bool count_request(state::Open& open, uint16_t sequence, bool replay) {
  uint16_t ahead = uint16_t(sequence - open.channel_sequence);  // 16-bit arithmetic
  if (ahead == 0) {
    // A replay from the current channel while older ones are still
    // outstanding might overtake them.
    if (replay && open.outstanding_pre_requests) return false;
    ++open.outstanding_requests;
    return true;
  }
  if (ahead > 0x7FFF) return false;  // an older channel
  // A newer channel: what was outstanding becomes "previous".
  open.outstanding_pre_requests += open.outstanding_requests;
  open.outstanding_requests = 1;
  open.channel_sequence = sequence;
  return true;
}

}  // namespace

NtStatus enter_channel_sequence(Request& req) {
  const CommandSpec* spec = command_spec(req.hdr.command);
  state::Open* open = req.open;  // resolved by the processor; null: the command names none
  if (!spec || !open) return NtStatus::Success;
  // 3.3.5.2.10 is skipped for 2.0.2 and 2.1; IsReplayEligible exists in 3.x only.
  if (!req.conn.is_smb3()) return NtStatus::Success;
  open->replay_eligible = false;  // the client used the open: its CREATE is not replayed any more
  uint16_t sequence = uint16_t(req.hdr.status);  // ChannelSequence, in requests
  bool replay = req.hdr.flags & wire::SMB2_FLAGS_REPLAY_OPERATION;
  if (count_request(*open, sequence, replay)) {
    req.channel = {open->volatile_id, sequence, true};
    return NtStatus::Success;
  }
  return spec->modifies ? NtStatus::FileNotAvailable : NtStatus::Success;
}

void leave_channel_sequence(ConnState& conn, ChannelCount& c) {
  if (!c.counted) return;
  c.counted = false;
  auto it = conn.tables->opens.find(c.volatile_id);
  if (it == conn.tables->opens.end()) return;
  state::Open& open = *it->second;
  // Counted with the current sequence, or with one that has been passed
  // since. A request that came back to a sequence seen before (16-bit
  // wrap, smb2.replay.replay7) finds its counter empty: it was moved to
  // the previous ones then.
  if (c.sequence == open.channel_sequence && open.outstanding_requests)
    --open.outstanding_requests;
  else if (open.outstanding_pre_requests)
    --open.outstanding_pre_requests;
  else if (open.outstanding_requests)
    --open.outstanding_requests;
}

}  // namespace ringsmb::smb2
