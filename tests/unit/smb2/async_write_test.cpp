// Large WRITEs off the worker (smb2/engine/async_write.hpp): a WRITE alone in its
// frame with at least async_write_min bytes runs its pwrite on the blocking
// pool and answers when it is done; until then every later request of the
// connection but another such WRITE is held (FrameResult::Hold), so a READ,
// FLUSH, SET_INFO or CLOSE of the open sees the data.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "pool_fixture.hpp"
#include "smb2/engine/async_write.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/engine/processor.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t kLarge = 64 * 1024;

Bytes write_body(FileId id, uint64_t offset, ByteSpan data) {
  Body body;
  body.w.u16(49);
  body.w.u16(64 + 48);
  body.w.u32(uint32_t(data.size()));
  body.w.u64(offset);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.zeros(12);
  body.w.u32(0);
  body.w.bytes(data);
  return body.b;
}

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 7 + seed + (i >> 12));
  return b;
}

// A frame owner that hands over a buffer it holds, as the transport does.
struct TestOwner : FrameOwner {
  std::shared_ptr<Bytes> frame;
  int kept = 0;
  std::shared_ptr<const void> keep(ByteSpan bytes) override {
    if (!frame || bytes.data() < frame->data() || bytes.data() + bytes.size() > frame->data() + frame->size())
      return nullptr;
    ++kept;
    return std::exchange(frame, nullptr);
  }
  std::span<uint8_t> writable(ByteSpan bytes) override {
    if (!frame || bytes.data() < frame->data() || bytes.data() + bytes.size() > frame->data() + frame->size())
      return {};
    return {frame->data() + (bytes.data() - frame->data()), bytes.size()};
  }
};

struct WriteFixture : PoolFixture {
  uint64_t mid = 1;
  WriteFixture() : PoolFixture(2, 7, 64) {}
  FrameResult send(wire::Command cmd, const Bytes& body, Bytes& out, uint16_t charge = 1) {
    Bytes frame = request_frame(cmd, body, mid, 1);
    store_le16(frame.data() + wire::hdr::CreditCharge, charge);
    FrameResult r = process_frame(conn, server, frame, out);
    if (r != FrameResult::Hold) mid += charge;
    return r;
  }
  // Waits until every pwrite in flight has posted its completion, then runs them.
  Bytes finish_writes() {
    for (int i = 0; i < 5000 && poster.tasks.size() < conn.writes_in_flight; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(poster.tasks.size() == conn.writes_in_flight);
    return poster.run_all(conn);
  }
  std::string on_disk(const std::string& name) {
    std::ifstream in(dir() / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

}  // namespace

TEST_CASE("async write: a large WRITE answers once its pwrite is done, as one synchronous response",
          "[smb2][async][write]") {
  WriteFixture fx;
  FileId f = fx.open_file("big");
  Bytes data = pattern(kLarge, 1);
  Bytes out;
  REQUIRE(fx.send(wire::Command::Write, write_body(f, 0, data), out, 1) == FrameResult::Ok);
  CHECK(out.empty());  // nothing yet: the interim is held back
  CHECK(fx.conn.writes_in_flight == 1);
  Bytes done = fx.finish_writes();
  wire::Header h = response_header(done);
  CHECK(h.command == wire::Command::Write);
  CHECK(h.status == 0);
  CHECK_FALSE(h.is_async());
  CHECK(h.credits >= 1);
  CHECK(load_le32(done.data() + 4 + wire::kHeaderSize + 4) == kLarge);  // Count
  CHECK(fx.conn.writes_in_flight == 0);
  CHECK(fx.conn.write_bytes_in_flight == 0);
  CHECK(fx.on_disk("big") == std::string(data.begin(), data.end()));
  CHECK(fx.find(f)->position == kLarge);
  CHECK(fx.find(f)->entry_changed);
}

TEST_CASE("async write: a small WRITE stays inline", "[smb2][async][write]") {
  WriteFixture fx;
  FileId f = fx.open_file("small");
  Bytes out;
  REQUIRE(fx.send(wire::Command::Write, write_body(f, 0, pattern(kLarge - 1, 2)), out) == FrameResult::Ok);
  CHECK(response_header(out).status == 0);
  CHECK(fx.conn.writes_in_flight == 0);
}

TEST_CASE("async write: later requests wait for the WRITEs in flight, further large WRITEs do not",
          "[smb2][async][write]") {
  WriteFixture fx;
  FileId f = fx.open_file("ordered");
  Bytes a = pattern(kLarge, 3), b = pattern(kLarge, 4);
  Bytes out;
  REQUIRE(fx.send(wire::Command::Write, write_body(f, 0, a), out) == FrameResult::Ok);
  REQUIRE(fx.send(wire::Command::Write, write_body(f, kLarge, b), out) == FrameResult::Ok);  // joins the lane
  CHECK(fx.conn.writes_in_flight == 2);
  CHECK(out.empty());
  // A READ of the data, an ECHO, a small WRITE, a FLUSH: all held, nothing done or answered.
  CHECK(fx.send(wire::Command::Read, read_body(f, 0, 2 * kLarge), out) == FrameResult::Hold);
  CHECK(fx.send(wire::Command::Echo, {4, 0, 0, 0}, out) == FrameResult::Hold);
  CHECK(fx.send(wire::Command::Write, write_body(f, 0, pattern(10, 5)), out) == FrameResult::Hold);
  CHECK(out.empty());
  Bytes done = fx.finish_writes();
  CHECK(fx.conn.writes_in_flight == 0);
  // Both answered, in order.
  wire::Header first = response_header(done);
  CHECK(first.status == 0);
  // Now the READ runs and sees both writes.
  REQUIRE(fx.send(wire::Command::Read, read_body(f, 0, 2 * kLarge), out) == FrameResult::Ok);
  wire::Header rh = response_header(out);
  REQUIRE(rh.status == 0);
  ByteSpan got = ByteSpan(out).subspan(4 + wire::kHeaderSize + 16, 2 * kLarge);
  CHECK(Bytes(got.begin(), got.begin() + kLarge) == a);
  CHECK(Bytes(got.begin() + kLarge, got.end()) == b);
}

TEST_CASE("async write: a WRITE past the bytes in flight, an append, a compound: held or inline",
          "[smb2][async][write]") {
  WriteFixture fx;
  fx.server.max_write_bytes_in_flight = 2 * kLarge;
  FileId f = fx.open_file("bounded");
  Bytes out;
  REQUIRE(fx.send(wire::Command::Write, write_body(f, 0, pattern(kLarge, 6)), out) == FrameResult::Ok);
  REQUIRE(fx.send(wire::Command::Write, write_body(f, kLarge, pattern(kLarge, 7)), out) == FrameResult::Ok);
  CHECK(fx.send(wire::Command::Write, write_body(f, 2 * kLarge, pattern(kLarge, 8)), out) == FrameResult::Hold);
  // An append (a handle with FILE_APPEND_DATA but not FILE_WRITE_DATA)
  // needs the size after the writes: it waits.
  FileId appender = fx.open_file("bounded", FILE_APPEND_DATA | SYNCHRONIZE);
  CHECK(fx.send(wire::Command::Write, write_body(appender, 0, pattern(kLarge, 9)), out) == FrameResult::Hold);
  fx.finish_writes();
  // With nothing in flight, an append runs inline, at the end.
  REQUIRE(fx.send(wire::Command::Write, write_body(appender, 0, pattern(kLarge, 9)), out) == FrameResult::Ok);
  CHECK(fx.conn.writes_in_flight == 0);
  CHECK(fx.on_disk("bounded").size() == 3 * kLarge);
}

TEST_CASE("async write: the frame's buffer is kept, not copied, when its owner hands it over",
          "[smb2][async][write]") {
  WriteFixture fx;
  FileId f = fx.open_file("kept");
  Bytes data = pattern(kLarge, 10);
  TestOwner owner;
  owner.frame = std::make_shared<Bytes>(request_frame(wire::Command::Write, write_body(f, 0, data), fx.mid, 1));
  store_le16(owner.frame->data() + wire::hdr::CreditCharge, 1);
  fx.conn.frame_owner = &owner;
  Bytes out;
  std::weak_ptr<Bytes> frame = owner.frame;
  REQUIRE(process_frame(fx.conn, fx.server, *owner.frame, out) == FrameResult::Ok);
  fx.conn.frame_owner = nullptr;
  CHECK(owner.kept == 1);
  fx.finish_writes();
  CHECK(frame.expired());  // let go once written
  CHECK(fx.on_disk("kept") == std::string(data.begin(), data.end()));
}

TEST_CASE("async write: an encrypted WRITE is decrypted where its frame lies, and that buffer is kept",
          "[smb2][async][write]") {
  WriteFixture fx;
  FileId f = fx.open_file("sealed");
  fx.conn.cipher = crypto::Aead::Aes128Gcm;
  fx.session->keys.encryption_key = Bytes(16, 0x21);
  fx.session->keys.decryption_key = Bytes(16, 0x12);
  auto sealed = [&](wire::Command cmd, const Bytes& body) {
    Bytes req = request_frame(cmd, body, fx.mid++, 1);
    store_le16(req.data() + wire::hdr::CreditCharge, 1);
    return crypto::encrypt_message(crypto::Aead::Aes128Gcm, fx.session->keys.decryption_key, 1, req);
  };
  Bytes data = pattern(kLarge, 11);
  TestOwner owner;
  owner.frame = std::make_shared<Bytes>(sealed(wire::Command::Write, write_body(f, 0, data)));
  const uint8_t* at = owner.frame->data();
  std::weak_ptr<Bytes> frame = owner.frame;
  // The test's own look at the buffer: the pool lets go of it as soon as
  // its pwrite is done, which may be before the checks below.
  std::shared_ptr<Bytes> looked_at = owner.frame;
  fx.conn.frame_owner = &owner;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, *looked_at, out) == FrameResult::Ok);
  CHECK(owner.kept == 1);  // the frame's own buffer, now the plaintext
  CHECK(load_le32(looked_at->data() + crypto::kTransformHeaderSize) == wire::kProtocolIdSmb2);
  CHECK(looked_at->data() == at);
  looked_at.reset();

  // Behind the WRITE, a large WRITE that cannot go beside it (an append)
  // waits: decrypted in place to see that, its frame is given back as it
  // came. A READ, too small to be such a WRITE, waits undecrypted, and
  // runs as it came once the WRITE is done.
  FileId appender = fx.open_file("sealed", FILE_APPEND_DATA | SYNCHRONIZE);
  owner.frame = std::make_shared<Bytes>(sealed(wire::Command::Write, write_body(appender, 0, pattern(kLarge, 12))));
  const Bytes append_frame = *owner.frame;
  CHECK(process_frame(fx.conn, fx.server, *owner.frame, out) == FrameResult::Hold);
  CHECK(*owner.frame == append_frame);
  CHECK(owner.kept == 1);
  owner.frame = std::make_shared<Bytes>(sealed(wire::Command::Read, read_body(f, 0, 4096)));
  const Bytes read_frame = *owner.frame;
  CHECK(process_frame(fx.conn, fx.server, *owner.frame, out) == FrameResult::Hold);
  CHECK(*owner.frame == read_frame);
  fx.finish_writes();
  CHECK(frame.expired());
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, *owner.frame, out) == FrameResult::Ok);
  fx.conn.frame_owner = nullptr;
  auto plain = crypto::decrypt_message(crypto::Aead::Aes128Gcm, fx.session->keys.encryption_key,
                                       ByteSpan(out).subspan(4));
  REQUIRE(plain);
  CHECK(load_le32(plain->data() + wire::hdr::Status) == 0);
  CHECK(Bytes(plain->begin() + wire::kHeaderSize + 16, plain->end()) == Bytes(data.begin(), data.begin() + 4096));
  CHECK(fx.on_disk("sealed") == std::string(data.begin(), data.end()));
}

TEST_CASE("async write: at the deadline the interim goes out, the final response after it",
          "[smb2][async][write]") {
  WriteFixture fx;
  FileId f = fx.open_file("slow");
  Bytes out;
  REQUIRE(fx.send(wire::Command::Write, write_body(f, 0, pattern(kLarge, 11)), out) == FrameResult::Ok);
  wire::Header interim = response_header(fx.poster.run_timed(fx.conn));
  CHECK(interim.status == uint32_t(NtStatus::Pending));
  CHECK(interim.is_async());
  wire::Header final_h = response_header(fx.finish_writes());
  CHECK(final_h.status == 0);
  CHECK(final_h.is_async());
  CHECK(final_h.async_id == interim.async_id);
  CHECK(final_h.credits == 0);
}
