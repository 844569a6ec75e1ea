// The async engine (smb2/engine/async_engine.hpp) with blocking byte-range locks,
// the kind that crosses connections: interim STATUS_PENDING, grants on
// unlock and close in arrival order, CANCEL, cleanup on CLOSE, TREE_DISCONNECT,
// LOGOFF and connection loss, the limits.
#include <catch2/catch.hpp>

#include <vector>

#include "crypto/smb2_keys.hpp"
#include "fixture.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/commands/teardown.hpp"
#include "smb2/engine/processor.hpp"
#include "smb2/engine/send_path.hpp"
#include "state/lock_table.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t kExclusive = 0x2, kShared = 0x1, kUnlock = 0x4, kFailImmediately = 0x10;

Bytes lock_body(FileId id, uint64_t offset, uint64_t length, uint32_t flags) {
  Body body;
  body.w.u16(48);
  body.w.u16(1);
  body.w.u32(0);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.u64(offset);
  body.w.u64(length);
  body.w.u32(flags);
  body.w.u32(0);
  return body.b;
}

// Keeps what the engine posts to connections; runs it on demand, as the
// connection's worker would.
struct Poster : ConnPoster {
  std::vector<std::pair<state::ConnAddress, ConnTask>> tasks;
  void post(const state::ConnAddress& to, ConnTask task) override { tasks.emplace_back(to, std::move(task)); }
  Bytes run_all(ConnState& conn) {
    Bytes out;
    auto now = std::move(tasks);
    tasks.clear();
    for (auto& [to, t] : now) t(conn, out);
    return out;
  }
};

// The final responses in OUT (each behind its 4-byte length).
struct Final {
  wire::Header hdr;
  Bytes body;
};
std::vector<Final> finals(const Bytes& out) {
  std::vector<Final> r;
  for (size_t at = 0; at + 4 <= out.size();) {
    size_t len = (size_t(out[at + 1]) << 16) | (size_t(out[at + 2]) << 8) | out[at + 3];
    Final f;
    REQUIRE(wire::parse_header(ByteSpan(out).subspan(at + 4, len), f.hdr));
    f.body.assign(out.begin() + long(at + 4 + 64), out.begin() + long(at + 4 + len));
    r.push_back(f);
    at += 4 + len;
  }
  return r;
}

struct LockFixture : Smb2Fixture {
  Poster poster;
  LockFixture() {
    server.poster = &poster;
    conn.address = {3, 77};
    write_file("f", std::string(100, 'x'));
  }
  ~LockFixture() { server.poster = nullptr; }
  Response lock(FileId id, uint64_t offset, uint64_t length, uint32_t flags) {
    return call(handle_lock, wire::Command::Lock, lock_body(id, offset, length, flags));
  }
  size_t queued() {
    const auto* node = conn.tables->opens.begin()->second->node.get();
    return server.locks.waiting(node->device, node->inode);
  }
  // What the connection sends after the frame: posted grants, then ready responses.
  std::vector<Final> sent() {
    Bytes out = poster.run_all(conn);
    send_ready(conn, server, out);
    return finals(out);
  }
};

}  // namespace

TEST_CASE("async: a blocking lock waits and is granted on unlock", "[smb2][async][lock]") {
  LockFixture f;
  FileId a = f.open_file("f"), b = f.open_file("f");
  REQUIRE(f.lock(a, 0, 10, kExclusive).status == NtStatus::Success);  // no conflict: at once
  Response w = f.lock(b, 5, 10, kExclusive);
  REQUIRE(w.status == NtStatus::Pending);
  CHECK(w.async_id != 0);
  CHECK(f.conn.async.waiting.at(w.async_id).kind == WaitKind::ByteRangeLock);
  CHECK(f.sent().empty());
  // The pending range is not b's yet.
  CHECK(f.lock(b, 5, 10, kUnlock).status == NtStatus::RangeNotLocked);

  REQUIRE(f.lock(a, 0, 10, kUnlock).status == NtStatus::Success);
  REQUIRE(f.poster.tasks.size() == 1);
  CHECK(f.poster.tasks[0].first.conn_id == 77);  // posted to the waiter's connection
  auto r = f.sent();
  REQUIRE(r.size() == 1);
  CHECK(r[0].hdr.status == 0);
  CHECK(r[0].hdr.command == wire::Command::Lock);
  CHECK(r[0].hdr.is_async());
  CHECK(r[0].hdr.async_id == w.async_id);
  CHECK(r[0].hdr.credits == 0);
  CHECK(r[0].body.size() == 4);
  CHECK(f.conn.async.waiting.empty());
  // b holds it now.
  CHECK(f.lock(a, 5, 1, kShared | kFailImmediately).status == NtStatus::LockNotGranted);
  CHECK(f.lock(b, 5, 10, kUnlock).status == NtStatus::Success);
}

TEST_CASE("async: waiting locks are granted in arrival order, on unlock and on close", "[smb2][async][lock]") {
  LockFixture f;
  FileId a = f.open_file("f"), b = f.open_file("f"), c = f.open_file("f");
  REQUIRE(f.lock(a, 0, 10, kExclusive).status == NtStatus::Success);
  Response wb = f.lock(b, 0, 10, kExclusive);
  Response wc = f.lock(c, 0, 10, kShared);
  REQUIRE(wb.status == NtStatus::Pending);
  REQUIRE(wc.status == NtStatus::Pending);
  CHECK(f.queued() == 2);
  f.close(a);  // releases a's lock: b first
  auto r = f.sent();
  REQUIRE(r.size() == 1);
  CHECK(r[0].hdr.async_id == wb.async_id);
  CHECK(f.queued() == 1);
  f.close(b);  // then c
  r = f.sent();
  REQUIRE(r.size() == 1);
  CHECK(r[0].hdr.async_id == wc.async_id);
  CHECK(r[0].hdr.status == 0);
  CHECK(f.queued() == 0);
  f.close(c);
}

TEST_CASE("async: CANCEL, and closing the waiting handle, end a waiting lock", "[smb2][async][lock]") {
  LockFixture f;
  FileId a = f.open_file("f"), b = f.open_file("f");
  REQUIRE(f.lock(a, 100, 10, kExclusive).status == NtStatus::Success);

  Response w = f.lock(b, 100, 10, kExclusive);
  REQUIRE(w.status == NtStatus::Pending);
  wire::Header other{};  // names nothing that waits
  other.flags = wire::SMB2_FLAGS_ASYNC_COMMAND;
  other.async_id = w.async_id + 1;
  cancel_request(f.conn, f.server, other);
  CHECK(f.sent().empty());
  wire::Header by_mid{};  // CANCEL by MessageId (the fixture's requests carry 0)
  cancel_request(f.conn, f.server, by_mid);
  auto r = f.sent();
  REQUIRE(r.size() == 1);
  CHECK(r[0].hdr.status == uint32_t(NtStatus::Cancelled));
  CHECK(r[0].hdr.async_id == w.async_id);
  CHECK(f.queued() == 0);

  // MS-SMB2 / Windows: the waiting handle closed answers RANGE_NOT_LOCKED.
  w = f.lock(b, 100, 10, kExclusive);
  REQUIRE(w.status == NtStatus::Pending);
  f.close(b);
  r = f.sent();
  REQUIRE(r.size() == 1);
  CHECK(r[0].hdr.status == uint32_t(NtStatus::RangeNotLocked));
  CHECK(f.queued() == 0);
  // Unlocking now grants nobody.
  REQUIRE(f.lock(a, 100, 10, kUnlock).status == NtStatus::Success);
  CHECK(f.poster.tasks.empty());
}

TEST_CASE("async: TREE_DISCONNECT closes the holder first; the waiter is granted", "[smb2][async][lock]") {
  LockFixture f;
  FileId a = f.open_file("f"), b = f.open_file("f");
  REQUIRE(f.lock(a, 0, 10, kExclusive).status == NtStatus::Success);
  Response w = f.lock(b, 0, 10, kExclusive);
  REQUIRE(w.status == NtStatus::Pending);
  REQUIRE(f.call(handle_tree_disconnect, wire::Command::TreeDisconnect, {4, 0, 0, 0}).status == NtStatus::Success);
  f.tree = nullptr;
  auto r = f.sent();
  REQUIRE(r.size() == 1);  // smb2.lock.cancel-tdis: the grant, STATUS_OK
  CHECK(r[0].hdr.status == 0);
  CHECK(r[0].hdr.async_id == w.async_id);
  CHECK(f.conn.tables->opens.empty());
  CHECK(f.conn.async.waiting.empty());
}

TEST_CASE("async: the connection's end withdraws waiting locks unanswered", "[smb2][async][lock]") {
  LockFixture f;
  FileId a = f.open_file("f"), b = f.open_file("f");
  REQUIRE(f.lock(a, 0, 10, kExclusive).status == NtStatus::Success);
  REQUIRE(f.lock(b, 0, 10, kExclusive).status == NtStatus::Pending);
  const auto* node = f.find(a)->node.get();
  uint64_t dev = node->device, ino = node->inode;
  teardown_connection(f.conn, f.server);
  CHECK(f.server.locks.waiting(dev, ino) == 0);
  CHECK(f.server.locks.count(dev, ino) == 0);
  CHECK(f.sent().empty());
}

TEST_CASE("async: over the per-connection or per-session limit, STATUS_INSUFFICIENT_RESOURCES", "[smb2][async][lock]") {
  LockFixture f;
  FileId a = f.open_file("f"), b = f.open_file("f");
  REQUIRE(f.lock(a, 0, 10, kExclusive).status == NtStatus::Success);
  f.server.max_async_per_connection = 2;
  f.server.max_async_per_session = 1;
  REQUIRE(f.lock(b, 0, 1, kExclusive).status == NtStatus::Pending);
  CHECK(f.lock(b, 1, 1, kExclusive).status == NtStatus::InsufficientResources);  // the session's one
  f.server.max_async_per_session = 5;
  REQUIRE(f.lock(b, 1, 1, kExclusive).status == NtStatus::Pending);
  CHECK(f.lock(b, 2, 1, kExclusive).status == NtStatus::InsufficientResources);  // the connection's two
  CHECK(f.lock(b, 20, 1, kExclusive).status == NtStatus::Success);  // no conflict: no wait, no limit
  CHECK(f.conn.async.waiting.size() == 2);
  CHECK(f.conn.async.per_session.at(1) == 2);
  f.close(b);
  CHECK(f.conn.async.per_session.empty());
  f.close(a);
}

TEST_CASE("async: a waiting lock's response is signed with the key it came with, after LOGOFF", "[smb2][async][lock]") {
  LockFixture f;
  f.session->keys.signing_key = Bytes(16, 0x42);
  f.session->signing_required = true;
  f.conn.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
  FileId a = f.open_file("f"), b = f.open_file("f");
  REQUIRE(f.lock(a, 0, 10, kExclusive).status == NtStatus::Success);
  REQUIRE(f.lock(b, 0, 10, kExclusive).status == NtStatus::Pending);
  REQUIRE(f.call(handle_logoff, wire::Command::Logoff, {4, 0, 0, 0}).status == NtStatus::Success);
  Bytes out = f.poster.run_all(f.conn);
  send_ready(f.conn, f.server, out);
  auto r = finals(out);
  REQUIRE(r.size() == 1);  // smb2.lock.cancel-logoff: granted as the holder closed first
  CHECK(r[0].hdr.status == 0);
  CHECK(crypto::verify_message(crypto::SigningAlgorithm::AesCmac, Bytes(16, 0x42), ByteSpan(out).subspan(4)));
}

TEST_CASE("send path: one function frames, signs or encrypts every message", "[smb2][async]") {
  ConnState conn;
  conn.framing = &transport::direct_tcp_framing();
  Bytes msg(80, 0);
  wire::Header h{};
  h.command = wire::Command::Lock;
  h.flags = wire::SMB2_FLAGS_SERVER_TO_REDIR;
  h.session_id = 7;
  wire::store_header(msg.data(), h);
  Bytes out = {9};  // something already queued stays in front

  SECTION("plain: framed only") {
    REQUIRE(send_message(conn, out, msg, ResponseSeal{}));
    REQUIRE(out.size() == 1 + 4 + msg.size());
    CHECK(out[1] == 0);
    CHECK(((size_t(out[2]) << 16) | (size_t(out[3]) << 8) | out[4]) == msg.size());
    CHECK(Bytes(out.begin() + 5, out.end()) == msg);
  }
  SECTION("signed") {
    conn.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
    ResponseSeal seal;
    seal.sign = true;
    seal.signing_key = Bytes(16, 0x11);
    REQUIRE(send_message(conn, out, msg, seal));
    CHECK(crypto::verify_message(crypto::SigningAlgorithm::AesCmac, seal.signing_key, ByteSpan(out).subspan(5)));
  }
  SECTION("encrypted for the session") {
    conn.cipher = crypto::Aead::Aes128Gcm;
    ResponseSeal seal;
    seal.encrypt = true;
    seal.session_id = 7;
    seal.encryption_key = Bytes(16, 0x22);
    REQUIRE(send_message(conn, out, msg, seal));
    size_t len = (size_t(out[2]) << 16) | (size_t(out[3]) << 8) | out[4];
    REQUIRE(out.size() == 1 + 4 + len);
    auto plain = crypto::decrypt_message(crypto::Aead::Aes128Gcm, seal.encryption_key, ByteSpan(out).subspan(5));
    REQUIRE(plain);
    CHECK(*plain == msg);
  }
  SECTION("encryption without a cipher: dropped, nothing framed") {
    ResponseSeal seal;
    seal.encrypt = true;
    seal.encryption_key = Bytes(16, 0x22);
    CHECK_FALSE(send_message(conn, out, msg, seal));
    CHECK(out == Bytes{9});
  }
  SECTION("an empty message takes its frame header back") {
    size_t start = open_message(conn, out);
    REQUIRE(close_message(conn, out, start, ResponseSeal{}));
    CHECK(out == Bytes{9});
  }
}
