// Channel sequence verification (MS-SMB2 3.3.5.2.10, smb2/engine/channel_sequence.hpp):
// which requests a stale channel may run, how the open's outstanding
// request counts move, and the end of Open.IsReplayEligible. Requests are
// built by hand; the checks run as the processor runs them, before the handler.
#include "smb2/engine/channel_sequence.hpp"

#include <catch2/catch.hpp>

#include "fixture.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;
using wire::Command;

namespace {

// The body of COMMAND naming ID where the dispatch table says it is.
Bytes body_naming(Command command, FileId id) {
  const CommandSpec* spec = command_spec(command);
  Bytes b(size_t(spec->file_id_at) + 16 + 8, 0);
  store_le16(b.data(), spec->structure_size);
  store_le64(b.data() + spec->file_id_at, id.persistent);
  store_le64(b.data() + spec->file_id_at + 8, id.volatile_id);
  return b;
}

struct Checker {
  Smb2Fixture& f;
  FileId id;
  // Runs the check for COMMAND from channel SEQUENCE and gives the count back at once
  // (the request completes), unless KEEP (it stays outstanding: its count is returned).
  NtStatus run(Command command, uint16_t sequence, bool replay = false, ChannelCount* keep = nullptr) {
    Bytes body = body_naming(command, id);
    Bytes pdu(wire::kHeaderSize, 0);
    pdu.insert(pdu.end(), body.begin(), body.end());
    wire::Header hdr{};
    hdr.command = command;
    hdr.status = sequence;  // ChannelSequence in a request
    hdr.flags = replay ? uint32_t(wire::SMB2_FLAGS_REPLAY_OPERATION) : 0;
    hdr.session_id = 1;
    hdr.tree_id = 1;
    CompoundState compound;
    ByteSpan span(pdu);
    Request req{f.conn, f.server, hdr, span, span.subspan(wire::kHeaderSize), false, compound};
    req.session = f.session;
    req.tree = f.tree;
    req.open = req.find_open(req.body_file_id());  // as the processor resolves it
    NtStatus st = enter_channel_sequence(req);
    if (keep)
      *keep = req.channel;
    else
      leave_channel_sequence(f.conn, req.channel);
    return st;
  }
};

}  // namespace

TEST_CASE("a WRITE from an older channel is refused, one from a newer one moves the open on",
          "[smb2][channel_sequence]") {
  Smb2Fixture f;
  Checker c{f, f.open_file("a.txt")};
  constexpr auto ok = NtStatus::Success, stale = NtStatus::FileNotAvailable;
  // smbtorture's smb2.replay.channel-sequence table, without its random rows.
  const std::pair<uint16_t, NtStatus> table[] = {
      {0, ok},          {0x8000, stale}, {0x8001, stale}, {0xFFFF, stale}, {0x7FFF, ok}, {0x7FFE, stale},
      {0, stale},       {0x8000, ok},    {0xFFFF, ok},    {0, ok},         {1, ok},      {0, stale},
      {1, ok},          {0xFFFF, stale},
  };
  for (bool replay : {false, true})
    for (Command command : {Command::Write, Command::SetInfo, Command::Ioctl}) {
      f.find(c.id)->channel_sequence = 0;
      for (auto [sequence, want] : table) {
        INFO("sequence " << sequence << " replay " << replay << " command " << int(command));
        CHECK(c.run(command, sequence, replay) == want);
      }
    }
  state::Open& open = *f.find(c.id);
  CHECK(open.outstanding_requests == 0);
  CHECK(open.outstanding_pre_requests == 0);
}

TEST_CASE("a stale channel may still READ, uncounted", "[smb2][channel_sequence]") {
  Smb2Fixture f;
  Checker c{f, f.open_file("a.txt")};
  REQUIRE(c.run(Command::Write, 10) == NtStatus::Success);
  ChannelCount held;
  CHECK(c.run(Command::Read, 5, false, &held) == NtStatus::Success);
  CHECK_FALSE(held.counted);
  CHECK(f.find(c.id)->channel_sequence == 10);
}

TEST_CASE("a replay waits until the older channel's requests are done", "[smb2][channel_sequence]") {
  Smb2Fixture f;
  Checker c{f, f.open_file("a.txt")};
  ChannelCount old_request;
  REQUIRE(c.run(Command::Write, 0, false, &old_request) == NtStatus::Success);  // outstanding on channel 0
  REQUIRE(c.run(Command::Write, 1) == NtStatus::Success);                      // channel 1 takes over
  state::Open& open = *f.find(c.id);
  CHECK(open.outstanding_pre_requests == 1);
  CHECK(c.run(Command::Write, 1, true) == NtStatus::FileNotAvailable);  // might overtake the old WRITE
  CHECK(c.run(Command::Write, 1, false) == NtStatus::Success);           // not a replay: runs
  leave_channel_sequence(f.conn, old_request);
  CHECK(open.outstanding_pre_requests == 0);
  CHECK(c.run(Command::Write, 1, true) == NtStatus::Success);
}

TEST_CASE("a request outstanding across a wrap of the sequence is given back once",
          "[smb2][channel_sequence]") {
  // smb2.replay.replay7: a CHANGE_NOTIFY from channel 0, then channels
  // 30000, 60000 and 0 again; the notify's count must not go negative.
  Smb2Fixture f;
  Checker c{f, f.open_dir("d")};
  ChannelCount notify;
  REQUIRE(c.run(Command::ChangeNotify, 0, false, &notify) == NtStatus::Success);
  for (uint16_t sequence : {uint16_t(30000), uint16_t(60000), uint16_t(0)})
    REQUIRE(c.run(Command::QueryInfo, sequence) == NtStatus::Success);
  leave_channel_sequence(f.conn, notify);
  state::Open& open = *f.find(c.id);
  CHECK(open.outstanding_requests == 0);
  CHECK(open.outstanding_pre_requests == 0);
  CHECK_FALSE(notify.counted);
}

TEST_CASE("a request on an open ends its replay eligibility; SMB 2.1 counts nothing",
          "[smb2][channel_sequence]") {
  Smb2Fixture f;
  Checker c{f, f.open_file("a.txt")};
  state::Open& open = *f.find(c.id);
  open.replay_eligible = true;
  f.conn.dialect = 0x0210;
  CHECK(c.run(Command::Write, 0x9000) == NtStatus::Success);
  CHECK(open.replay_eligible);
  CHECK(open.channel_sequence == 0);
  f.conn.dialect = 0x0311;
  CHECK(c.run(Command::QueryInfo, 0) == NtStatus::Success);
  CHECK_FALSE(open.replay_eligible);
}
