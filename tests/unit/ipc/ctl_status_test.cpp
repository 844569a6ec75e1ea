#include <catch2/catch.hpp>

#include <cstring>

#include "ipc/ctl_codec.hpp"
#include "ipc/ctl_status.hpp"

using namespace ringsmb;
using namespace ringsmb::ipc;
using namespace ringsmb::ipc::abi;

namespace {

// Aligned copies, as a receive buffer is.
struct Wire {
  std::vector<uint32_t> words;
  size_t len = 0;
  explicit Wire(const Bytes& b) : words((b.size() + 3) / 4 + 1), len(b.size()) { memcpy(words.data(), b.data(), len); }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words.data()); }
};

ServerStatus decode_all(const std::vector<Bytes>& datagrams, Cmd cmd, uint32_t seq) {
  ServerStatus out;
  for (size_t i = 0; i < datagrams.size(); ++i) {
    Wire w(datagrams[i]);
    REQUIRE(datagrams[i].size() <= kMaxMessage);
    auto m = parse_message(w.data(), w.len);
    REQUIRE(m);
    CHECK(m->cmd == cmd);
    CHECK(m->seq == seq);
    CHECK_FALSE(m->is_request);
    CHECK(m->u32(ATTR_STATUS) == 0);
    CHECK(m->u32(ATTR_MORE_ENTRIES) == (i + 1 < datagrams.size() ? 1u : 0u));
    REQUIRE(decode_list_reply(w.data(), w.len, *m, out));
  }
  return out;
}

}  // namespace

TEST_CASE("LIST_* replies round-trip every kind of entry", "[ipc][status]") {
  ServerStatus s;
  s.connections = {{1, "127.0.0.1", 0x0311}, {(1ull << 48) | 2, "::1", 0}};
  s.sessions = {{0x11, 1, "alice", "127.0.0.1", 0x0311, SESSION_SIGNED | SESSION_ENCRYPTED}};
  s.trees = {{0x11, 3, "media", "alice", "127.0.0.1"}};
  s.open_files = {{0x11, 3, "media", "dir/a file.txt", "alice", "127.0.0.1"}, {0x11, 3, "media", "", "alice", "x"}};

  auto c = decode_all(encode_list_replies(CMD_LIST_CONNECTIONS, 7, s), CMD_LIST_CONNECTIONS, 7);
  REQUIRE(c.connections.size() == 2);
  CHECK(c.connections[1].connection_id == ((1ull << 48) | 2));
  CHECK(c.connections[1].client_address == "::1");
  CHECK(c.connections[0].dialect == 0x0311);
  CHECK(c.sessions.empty());

  auto se = decode_all(encode_list_replies(CMD_LIST_SESSIONS, 8, s), CMD_LIST_SESSIONS, 8);
  REQUIRE(se.sessions.size() == 1);
  CHECK(se.sessions[0].user == "alice");
  CHECK(se.sessions[0].flags == (SESSION_SIGNED | SESSION_ENCRYPTED));

  auto t = decode_all(encode_list_replies(CMD_LIST_TREE_CONNECTS, 9, s), CMD_LIST_TREE_CONNECTS, 9);
  REQUIRE(t.trees.size() == 1);
  CHECK(t.trees[0].share == "media");
  CHECK(t.trees[0].tree_id == 3);

  auto o = decode_all(encode_list_replies(CMD_LIST_OPEN_FILES, 10, s), CMD_LIST_OPEN_FILES, 10);
  REQUIRE(o.open_files.size() == 2);
  CHECK(o.open_files[0].path == "dir/a file.txt");
  CHECK(o.open_files[1].path.empty());
}

TEST_CASE("an empty list is one datagram without entries", "[ipc][status]") {
  auto d = encode_list_replies(CMD_LIST_OPEN_FILES, 1, {});
  REQUIRE(d.size() == 1);
  CHECK(decode_all(d, CMD_LIST_OPEN_FILES, 1).open_files.empty());
}

TEST_CASE("a long list is split into datagrams below the message limit", "[ipc][status]") {
  ServerStatus s;
  for (int i = 0; i < 400; ++i)
    s.open_files.push_back({uint64_t(i), 1, "share", std::string(300, 'p') + std::to_string(i), "bob", "10.0.0.1"});
  s.open_files.push_back({1, 1, "share", std::string(9000, 'x'), "bob", "10.0.0.1"});  // longer than the policy allows
  auto d = encode_list_replies(CMD_LIST_OPEN_FILES, 5, s);
  CHECK(d.size() > 1);
  auto back = decode_all(d, CMD_LIST_OPEN_FILES, 5);
  REQUIRE(back.open_files.size() == 401);
  CHECK(back.open_files[399].path == std::string(300, 'p') + "399");
  CHECK(back.open_files[400].path.size() == 4095);
}

TEST_CASE("an entry without its required attributes is rejected", "[ipc][status]") {
  MsgBuilder b(CMD_LIST_SESSIONS, 3, false);
  b.u32(ATTR_STATUS, 0).begin_nest(ATTR_ENTRY).u64(ATTR_SESSION_ID, 1).end_nest();
  ByteSpan w = b.wire();
  Wire wire(Bytes(w.begin(), w.end()));
  auto m = parse_message(wire.data(), wire.len);
  REQUIRE(m);
  ServerStatus out;
  CHECK_FALSE(decode_list_reply(wire.data(), wire.len, *m, out));

  SECTION("and one whose attribute has the wrong size") {
    MsgBuilder bad(CMD_LIST_CONNECTIONS, 3, false);
    bad.u32(ATTR_STATUS, 0).begin_nest(ATTR_ENTRY);
    bad.u32(ATTR_CONNECTION_ID, 1).str(ATTR_CLIENT_ADDRESS, "a").u32(ATTR_DIALECT, 0x311).end_nest();  // u64 sent as u32
    ByteSpan bw = bad.wire();
    Wire bwire(Bytes(bw.begin(), bw.end()));
    auto bm = parse_message(bwire.data(), bwire.len);
    REQUIRE(bm);
    CHECK_FALSE(decode_list_reply(bwire.data(), bwire.len, *bm, out));
  }
}

TEST_CASE("dialect names", "[ipc][status]") {
  CHECK(dialect_name(0x0311) == "3.1.1");
  CHECK(dialect_name(0x0202) == "2.0.2");
  CHECK(dialect_name(0) == "-");
  CHECK(dialect_name(0x0999) == "0x0999");
}

TEST_CASE("GET_METRICS text is cut at line ends into pieces that fit ATTR_TEXT", "[ipc][status]") {
  std::string text;
  for (int i = 0; i < 700; ++i) text += "ringsmb_metric_" + std::to_string(i) + "{label=\"value\"} " + std::to_string(i * 7) + "\n";
  auto datagrams = encode_text_replies(CMD_GET_METRICS, 11, text);
  REQUIRE(datagrams.size() > 1);
  std::string joined;
  for (size_t i = 0; i < datagrams.size(); ++i) {
    Wire w(datagrams[i]);
    auto m = parse_message(w.data(), w.len);
    REQUIRE(m);  // within the policy: ATTR_TEXT up to 4096 bytes
    CHECK(m->cmd == CMD_GET_METRICS);
    CHECK(m->seq == 11u);
    CHECK(m->u32(ATTR_STATUS) == 0);
    CHECK(m->u32(ATTR_MORE_ENTRIES) == (i + 1 < datagrams.size() ? 1u : 0u));
    std::string piece = m->str(ATTR_TEXT);
    CHECK(piece.size() <= kMaxTextPiece);
    CHECK(piece.back() == '\n');  // whole lines only
    joined += piece;
  }
  CHECK(joined == text);
}

TEST_CASE("GET_METRICS: a line longer than a piece is cut, empty text is one datagram", "[ipc][status]") {
  std::string text(9000, 'x');
  text += "\nshort\n";
  std::string joined;
  auto datagrams = encode_text_replies(CMD_GET_METRICS, 1, text);
  CHECK(datagrams.size() == 3);
  for (const auto& d : datagrams) {
    Wire w(d);
    auto m = parse_message(w.data(), w.len);
    REQUIRE(m);
    joined += m->str(ATTR_TEXT);
  }
  CHECK(joined == text);
  CHECK(encode_text_replies(CMD_GET_METRICS, 2, "").size() == 1);
}

TEST_CASE("LIST_OPEN_FILES carries an open's id, caching and byte-range locks", "[ipc][status]") {
  ServerStatus s;
  OpenFileStatus leased{0x11, 3, "media", "a.bin", "alice", "127.0.0.1"};
  leased.file_id = 0x1234;
  leased.flags = OPEN_DURABLE | OPEN_LEASE_BREAKING;
  leased.oplock_level = kOplockLevelLease;
  leased.lease_state = 0x7;
  leased.lease_key = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  for (uint64_t i = 0; i < 70; ++i) leased.locks.push_back({i * 10, 5, i % 2 == 0});
  leased.lock_count = 70;
  OpenFileStatus plain{0x11, 3, "media", "", "alice", "127.0.0.1"};
  plain.file_id = 7;
  plain.oplock_level = 0x09;  // batch
  plain.lease_state = 0x7;
  s.open_files = {leased, plain};
  auto back = decode_all(encode_list_replies(CMD_LIST_OPEN_FILES, 5, s), CMD_LIST_OPEN_FILES, 5);
  REQUIRE(back.open_files.size() == 2);
  const auto& a = back.open_files[0];
  CHECK(a.file_id == 0x1234);
  CHECK(a.flags == (OPEN_DURABLE | OPEN_LEASE_BREAKING));
  CHECK(a.oplock_level == kOplockLevelLease);
  CHECK(lease_state_name(a.lease_state) == "RWH");
  REQUIRE(a.lease_key);
  CHECK((*a.lease_key)[15] == 16);
  CHECK(a.lock_count == 70);
  REQUIRE(a.locks.size() == kMaxLocksPerEntry);  // the rest are counted, not listed
  CHECK(a.locks[3].offset == 30);
  CHECK(a.locks[3].length == 5);
  CHECK_FALSE(a.locks[3].exclusive);
  CHECK(a.locks[4].exclusive);
  const auto& b = back.open_files[1];
  CHECK(b.file_id == 7);
  CHECK_FALSE(b.lease_key);
  CHECK(b.locks.empty());
  CHECK(oplock_level_name(b.oplock_level) == "batch");
  CHECK(lease_state_name(0) == "-");
  CHECK(lease_state_name(0x3) == "RH");
}

TEST_CASE("LIST_OPEN_FILES: a disconnected durable open carries the time it is kept for", "[ipc][status]") {
  ServerStatus s;
  OpenFileStatus kept{0x11, 3, "media", "k.bin", "alice", "192.0.2.7"};
  kept.file_id = 0x99;
  kept.flags = OPEN_DURABLE | OPEN_DISCONNECTED;
  kept.kept_for_ms = 59000;
  OpenFileStatus live{0x12, 4, "media", "l.bin", "bob", "192.0.2.8"};
  live.kept_for_ms = 1234;  // not sent for a live open
  s.open_files = {kept, live};
  auto back = decode_all(encode_list_replies(CMD_LIST_OPEN_FILES, 6, s), CMD_LIST_OPEN_FILES, 6);
  REQUIRE(back.open_files.size() == 2);
  CHECK(back.open_files[0].flags == (OPEN_DURABLE | OPEN_DISCONNECTED));
  CHECK(back.open_files[0].kept_for_ms == 59000);
  CHECK(back.open_files[0].client_address == "192.0.2.7");
  CHECK(back.open_files[1].kept_for_ms == 0);
}

TEST_CASE("LIST_OPEN_FILES: LOCKS of a length that is no whole record is rejected", "[ipc][status]") {
  MsgBuilder b(CMD_LIST_OPEN_FILES, 3, false);
  b.u32(ATTR_STATUS, 0).begin_nest(ATTR_ENTRY);
  b.u64(ATTR_SESSION_ID, 1).u32(ATTR_TREE_ID, 1).str(ATTR_SHARE_NAME, "s").str(ATTR_PATH, "p");
  b.str(ATTR_ACCOUNT, "u").str(ATTR_CLIENT_ADDRESS, "c");
  uint8_t partial[kLockRecordSize + 3] = {};
  b.bytes(ATTR_LOCKS, ByteSpan(partial, sizeof partial)).end_nest();
  ByteSpan w = b.wire();
  Wire wire(Bytes(w.begin(), w.end()));
  auto m = parse_message(wire.data(), wire.len);
  REQUIRE(m);
  ServerStatus out;
  CHECK_FALSE(decode_list_reply(wire.data(), wire.len, *m, out));
}

TEST_CASE("LIST_SESSIONS carries a session's channels with their client ports", "[ipc][status]") {
  ServerStatus s;
  SessionStatus multi{0x11, 1, "alice", "192.0.2.7", 0x0311, SESSION_SIGNED};
  multi.channels = {{1, "192.0.2.7", 49152}, {(1ull << 48) | 5, "2001:db8::1", 445}};
  SessionStatus old_server{0x12, 2, "bob", "192.0.2.8", 0x0210, 0};  // no CHANNELS sent
  SessionStatus many{0x13, 3, "carol", "192.0.2.9", 0x0300, 0};
  for (uint16_t i = 0; i < 40; ++i) many.channels.push_back({i, std::string(60, 'a'), i});  // past both bounds
  s.sessions = {multi, old_server, many};
  auto back = decode_all(encode_list_replies(CMD_LIST_SESSIONS, 4, s), CMD_LIST_SESSIONS, 4);
  REQUIRE(back.sessions.size() == 3);
  const auto& a = back.sessions[0];
  REQUIRE(a.channels.size() == 2);
  CHECK(a.channels[0].connection_id == 1);
  CHECK(a.channels[0].client_port == 49152);
  CHECK(address_with_port(a.channels[0].client_address, a.channels[0].client_port) == "192.0.2.7:49152");
  CHECK(a.channels[1].connection_id == ((1ull << 48) | 5));
  CHECK(address_with_port(a.channels[1].client_address, a.channels[1].client_port) == "[2001:db8::1]:445");
  CHECK(back.sessions[1].channels.empty());
  REQUIRE(back.sessions[2].channels.size() == kMaxChannelsPerEntry);
  CHECK(back.sessions[2].channels[31].client_address == std::string(kChannelAddressSize - 1, 'a'));
}

namespace {

// A LIST_SESSIONS reply of one entry whose CHANNELS is RECORDS.
bool decodes_channels(const Bytes& records) {
  MsgBuilder b(CMD_LIST_SESSIONS, 3, false);
  b.u32(ATTR_STATUS, 0).begin_nest(ATTR_ENTRY);
  b.u64(ATTR_SESSION_ID, 1).u64(ATTR_CONNECTION_ID, 1).str(ATTR_ACCOUNT, "u").str(ATTR_CLIENT_ADDRESS, "c");
  b.u32(ATTR_DIALECT, 0x311).u32(ATTR_SESSION_FLAGS, 0).bytes(ATTR_CHANNELS, records).end_nest();
  ByteSpan w = b.wire();
  Wire wire(Bytes(w.begin(), w.end()));
  auto m = parse_message(wire.data(), wire.len);
  REQUIRE(m);
  ServerStatus out;
  return decode_list_reply(wire.data(), wire.len, *m, out);
}

}  // namespace

TEST_CASE("LIST_SESSIONS: malformed CHANNELS are rejected", "[ipc][status]") {
  Bytes one(kChannelRecordSize, 0);
  memcpy(one.data() + 16, "10.0.0.1", 8);
  CHECK(decodes_channels(one));
  SECTION("a record cut short") {
    one.resize(kChannelRecordSize + 5);
    CHECK_FALSE(decodes_channels(one));
  }
  SECTION("an address without its NUL") {
    memset(one.data() + 16, 'x', kChannelAddressSize);
    CHECK_FALSE(decodes_channels(one));
  }
  SECTION("more records than a session may have channels") {
    Bytes many(kChannelRecordSize * (kMaxChannelsPerEntry + 1), 0);
    CHECK_FALSE(decodes_channels(many));
  }
}
