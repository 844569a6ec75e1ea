// The frame processor: NEGOTIATE, the message-id window, compound chains
// (related and unrelated), signing checks and StructureSize validation,
// driven through process_frame exactly as the transport does.
#include "smb2/engine/processor.hpp"

#include <catch2/catch.hpp>
#include <cstring>

#include "crypto/smb2_keys.hpp"
#include "fixture.hpp"
#include "smb2/engine/metrics.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;
using wire::Command;

namespace {

struct Element {
  Command cmd;
  Bytes body;
  uint32_t flags = 0;
  uint64_t session = 1;
  uint32_t tree = 1;
};

// A frame (no transport length) holding `elems` as one chain, message ids from `mid`.
Bytes chain(const std::vector<Element>& elems, uint64_t mid, uint16_t credits = 10) {
  Bytes out;
  for (size_t i = 0; i < elems.size(); ++i) {
    size_t start = out.size();
    ByteWriter w(out);
    wire::Header h{};
    h.command = elems[i].cmd;
    h.credit_charge = 1;
    h.credits = credits;
    h.flags = elems[i].flags;
    h.message_id = mid + i;
    h.session_id = elems[i].session;
    h.tree_id = elems[i].tree;
    wire::write_header(w, h);
    w.bytes(elems[i].body);
    if (i + 1 < elems.size()) {
      w.align(8, start);
      store_le32(out.data() + start + wire::hdr::NextCommand, uint32_t(out.size() - start));
    }
  }
  return out;
}

Bytes echo_body() { return {4, 0, 0, 0}; }

struct Reply {
  uint32_t status;
  Command cmd;
  ByteSpan body;
};

// Splits a response frame (with its 4-byte length) into elements.
std::vector<Reply> replies(const Bytes& frame) {
  std::vector<Reply> out;
  REQUIRE(frame.size() >= 4);
  size_t len = (size_t(frame[1]) << 16) | (size_t(frame[2]) << 8) | frame[3];
  REQUIRE(frame.size() == len + 4);
  size_t off = 4;
  for (;;) {
    const uint8_t* p = frame.data() + off;
    uint32_t next = load_le32(p + wire::hdr::NextCommand);
    size_t n = next ? next : frame.size() - off;
    if (next) CHECK(next % 8 == 0);
    out.push_back({load_le32(p + wire::hdr::Status), Command(load_le16(p + wire::hdr::Command)),
                   ByteSpan(p + 64, n - 64)});
    if (!next) break;
    off += next;
  }
  return out;
}

Bytes negotiate_body(std::vector<uint16_t> dialects) {
  Bytes b;
  ByteWriter w(b);
  w.u16(36);
  w.u16(uint16_t(dialects.size()));
  w.u16(1);  // signing enabled
  w.u16(0);
  w.u32(0);
  w.zeros(16);
  w.u64(0);
  for (auto d : dialects) w.u16(d);
  return b;
}

Bytes close_body(FileId id) {
  Bytes b;
  ByteWriter w(b);
  w.u16(24);
  w.u16(0);
  w.u32(0);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  return b;
}

}  // namespace

TEST_CASE("NEGOTIATE picks the highest common dialect", "[smb2][processor]") {
  ServerContext server;
  server.config.global.min_protocol = 0x0202;
  server.config.global.max_protocol = 0x0311;
  ConnState conn;
  conn.framing = &transport::direct_tcp_framing();
  Bytes out;
  REQUIRE(process_frame(conn, server, chain({{Command::Negotiate, negotiate_body({0x0202, 0x0210}), 0, 0, 0}}, 0),
                        out) == FrameResult::Ok);
  auto r = replies(out);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == 0);
  CHECK(load_le16(r[0].body.data() + 4) == 0x0210);
  CHECK(conn.dialect == 0x0210);

  SECTION("a second NEGOTIATE is refused") {
    out.clear();
    REQUIRE(process_frame(conn, server, chain({{Command::Negotiate, negotiate_body({0x0202}), 0, 0, 0}}, 1), out) ==
            FrameResult::Ok);
    CHECK(replies(out)[0].status == uint32_t(NtStatus::InvalidParameter));
  }
}

TEST_CASE("message ids are used once and only inside the window", "[smb2][processor]") {
  Smb2Fixture fx;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0), out) == FrameResult::Ok);
  out.clear();
  CHECK(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0), out) == FrameResult::Drop);
  Smb2Fixture fx2;
  CHECK(process_frame(fx2.conn, fx2.server, chain({{Command::Echo, echo_body()}}, 5), out) == FrameResult::Drop);
}

TEST_CASE("an unrelated chain gets one padded response per element", "[smb2][processor]") {
  Smb2Fixture fx;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0, 8), out) == FrameResult::Ok);
  out.clear();
  auto frame = chain({{Command::Echo, echo_body()}, {Command::Echo, echo_body()}, {Command::Echo, echo_body()}}, 1);
  REQUIRE(process_frame(fx.conn, fx.server, frame, out) == FrameResult::Ok);
  auto r = replies(out);
  REQUIRE(r.size() == 3);
  for (auto& e : r) CHECK(e.status == 0);
  // The last element of a compound response is padded too (MS-SMB2
  // 3.3.4.1.3; smb2.compound.compound-padding): an ECHO body of 4 bytes
  // ends the frame 8-aligned.
  CHECK(r[2].body.size() == 8);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 4), out) == FrameResult::Ok);
  auto lone = replies(out);
  REQUIRE(lone.size() == 1);
  CHECK(lone[0].body.size() == 4);  // a response alone is not padded
}

TEST_CASE("a related chain carries the FileId, and a failure, forward", "[smb2][processor]") {
  Smb2Fixture fx;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0, 16), out) == FrameResult::Ok);
  FileId related{kRelatedFileId, kRelatedFileId};
  uint32_t rel = wire::SMB2_FLAGS_RELATED_OPERATIONS;

  out.clear();
  auto ok = chain({{Command::Create, create_body("new.txt", kOpenIf)}, {Command::Close, close_body(related), rel}}, 1);
  REQUIRE(process_frame(fx.conn, fx.server, ok, out) == FrameResult::Ok);
  auto r = replies(out);
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == 0);
  CHECK(r[1].status == 0);
  CHECK(fx.conn.tables->opens.empty());
  CHECK(fx.exists("new.txt"));

  out.clear();
  auto bad = chain({{Command::Create, create_body("missing.txt", kOpen)}, {Command::Close, close_body(related), rel}}, 3);
  REQUIRE(process_frame(fx.conn, fx.server, bad, out) == FrameResult::Ok);
  r = replies(out);
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == uint32_t(NtStatus::ObjectNameNotFound));
  CHECK(r[1].status == uint32_t(NtStatus::ObjectNameNotFound));
}

TEST_CASE("signing is enforced where the session requires it", "[smb2][processor]") {
  Smb2Fixture fx;
  fx.session->keys.signing_key = Bytes(16, 0x42);
  fx.session->signing_required = true;
  fx.conn.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
  Bytes out;
  // Unsigned: refused.
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0, 8), out) == FrameResult::Ok);
  // ECHO may arrive unsigned (Windows sends it so); a CLOSE may not.
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Close, close_body({1, 1})}}, 1), out) == FrameResult::Ok);
  CHECK(replies(out)[0].status == uint32_t(NtStatus::AccessDenied));

  // Signed with the right key: accepted (FILE_CLOSED: the id is unknown), and the response is signed.
  Bytes good = chain({{Command::Close, close_body({1, 1})}}, 2);
  crypto::sign_message(crypto::SigningAlgorithm::AesCmac, fx.session->keys.signing_key, good);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, good, out) == FrameResult::Ok);
  CHECK(replies(out)[0].status == uint32_t(NtStatus::FileClosed));
  CHECK(crypto::verify_message(crypto::SigningAlgorithm::AesCmac, fx.session->keys.signing_key,
                               ByteSpan(out.data() + 4, out.size() - 4)));

  // A flipped bit: refused.
  Bytes tampered = chain({{Command::Close, close_body({1, 1})}}, 3);
  crypto::sign_message(crypto::SigningAlgorithm::AesCmac, fx.session->keys.signing_key, tampered);
  tampered.back() ^= 1;
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, tampered, out) == FrameResult::Ok);
  CHECK(replies(out)[0].status == uint32_t(NtStatus::AccessDenied));
}

TEST_CASE("a body shorter than its StructureSize is refused", "[smb2][processor]") {
  Smb2Fixture fx;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Close, Bytes{24, 0}}}, 0), out) == FrameResult::Ok);
  CHECK(replies(out)[0].status == uint32_t(NtStatus::InvalidParameter));
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Close, Bytes{25, 0, 0, 0}}}, 1), out) == FrameResult::Ok);
  CHECK(replies(out)[0].status == uint32_t(NtStatus::InvalidParameter));
}

namespace {

Bytes oplock_ack_body(FileId id, uint8_t level) {
  Bytes b;
  ByteWriter w(b);
  w.u16(24);
  w.u8(level);
  w.zeros(5);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  return b;
}

uint32_t header_flags(const Bytes& frame) { return load_le32(frame.data() + 4 + wire::hdr::Flags); }
uint64_t header_async_id(const Bytes& frame) { return load_le64(frame.data() + 4 + wire::hdr::AsyncId); }

}  // namespace

TEST_CASE("a CREATE contending a batch oplock goes async until the acknowledgment", "[smb2][processor][oplock]") {
  Smb2Fixture fx;
  QueuedPoster poster;
  fx.server.poster = &poster;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0, 32), out) == FrameResult::Ok);

  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Create, create_body("b.txt", kOpenIf, 9)}}, 1), out) ==
          FrameResult::Ok);
  auto r = replies(out);
  REQUIRE(r[0].status == 0);
  CHECK(r[0].body[2] == 9);  // batch granted
  FileId holder{load_le64(r[0].body.data() + 64), load_le64(r[0].body.data() + 72)};

  // A second open: the batch oplock must be broken first.
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Create, create_body("b.txt", kOpenIf)}}, 2), out) ==
          FrameResult::Ok);
  // The interim response, then the break notification: the holder's
  // connection is this one, so it follows the frame's responses at once.
  REQUIRE(out.size() > 4);
  const size_t first = 4 + ((size_t(out[1]) << 16) | (size_t(out[2]) << 8) | out[3]);
  REQUIRE(out.size() > first);
  Bytes notice(out.begin() + long(first), out.end());
  out.resize(first);
  r = replies(out);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == uint32_t(NtStatus::Pending));
  CHECK(header_flags(out) & wire::SMB2_FLAGS_ASYNC_COMMAND);
  uint64_t async_id = header_async_id(out);
  CHECK(async_id != 0);
  REQUIRE(fx.conn.async.waiting.size() == 1);
  CHECK(poster.tasks.empty());  // nothing posted for it

  r = replies(notice);
  REQUIRE(r.size() == 1);
  CHECK(r[0].cmd == Command::OplockBreak);
  CHECK(load_le64(notice.data() + 4 + wire::hdr::MessageId) == 0xFFFFFFFFFFFFFFFFull);
  CHECK(r[0].body[2] == 1);  // to level II

  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::OplockBreak, oplock_ack_body(holder, 1)}}, 3), out) ==
          FrameResult::Ok);
  r = replies(out);
  CHECK(r[0].status == 0);
  CHECK(r[0].body[2] == 1);

  Bytes final_response = poster.run_all(fx.conn);  // the waiter runs again
  r = replies(final_response);
  REQUIRE(r.size() == 1);
  CHECK(r[0].cmd == Command::Create);
  CHECK(r[0].status == 0);
  CHECK(header_flags(final_response) & wire::SMB2_FLAGS_ASYNC_COMMAND);
  CHECK(header_async_id(final_response) == async_id);
  CHECK(load_le64(final_response.data() + 4 + wire::hdr::MessageId) == 2);
  CHECK(fx.conn.async.waiting.empty());
  CHECK(fx.conn.tables->opens.size() == 2);
  fx.server.poster = nullptr;
}

TEST_CASE("CANCEL completes a waiting CREATE with STATUS_CANCELLED", "[smb2][processor][oplock]") {
  Smb2Fixture fx;
  QueuedPoster poster;
  fx.server.poster = &poster;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0, 32), out) == FrameResult::Ok);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Create, create_body("c.txt", kOpenIf, 9)}}, 1), out) ==
          FrameResult::Ok);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Create, create_body("c.txt", kOpenIf)}}, 2), out) ==
          FrameResult::Ok);
  uint64_t async_id = header_async_id(out);
  poster.run_all(fx.conn);  // the break notification

  // CANCEL by AsyncId: no response of its own; the CREATE's final
  // response follows the frame.
  Bytes cancel = chain({{Command::Cancel, {4, 0, 0, 0}, wire::SMB2_FLAGS_ASYNC_COMMAND}}, 0);
  store_le64(cancel.data() + wire::hdr::AsyncId, async_id);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, cancel, out) == FrameResult::Ok);
  Bytes cancelled = out;
  auto r = replies(cancelled);
  REQUIRE(r.size() == 1);
  CHECK(r[0].cmd == Command::Create);
  CHECK(r[0].status == uint32_t(NtStatus::Cancelled));
  CHECK(header_async_id(cancelled) == async_id);
  CHECK(fx.conn.async.waiting.empty());
  CHECK(fx.conn.tables->opens.size() == 1);
  fx.server.poster = nullptr;
}

namespace {

// A fixture whose transport sends FileSegments, with `size` bytes in big.bin
// and enough credits granted for a few requests.
struct SendfileFixture : Smb2Fixture {
  explicit SendfileFixture(size_t size) {
    conn.transport_sends_files = true;
    std::string content(size, 'x');
    for (size_t i = 0; i < size; ++i) content[i] = char('a' + i % 23);
    write_file("big.bin", content);
    file = open_file("big.bin", FILE_READ_DATA);
    Bytes out;
    REQUIRE(process_frame(conn, server, chain({{Command::Echo, echo_body()}}, 0, 32), out) == FrameResult::Ok);
  }
  FileId file;
  uint64_t mid = 1;
};

size_t frame_length(const Bytes& out) { return (size_t(out[1]) << 16) | (size_t(out[2]) << 8) | out[3]; }

}  // namespace

TEST_CASE("a large unsigned READ leaves its data in the file for the transport", "[smb2][processor][sendfile]") {
  const uint32_t min = 64 * 1024;
  SendfileFixture fx(300000);
  fx.server.sendfile_min_read = min;
  Bytes out;

  SECTION("DataLength comes from the file size and the frame length counts the data") {
    REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 100000, 1 << 20)}}, fx.mid),
                          out) == FrameResult::Ok);
    REQUIRE(out.size() == 4 + 64 + 16);
    CHECK(load_le32(out.data() + 4 + wire::hdr::Status) == uint32_t(NtStatus::Success));
    CHECK(load_le32(out.data() + 4 + 64 + 4) == 200000);  // DataLength
    CHECK(frame_length(out) == 64 + 16 + 200000);
    REQUIRE(fx.conn.out_files.size() == 1);
    const FileSegment& f = fx.conn.out_files[0];
    CHECK(f.at == out.size());
    CHECK(f.offset == 100000);
    CHECK(f.length == 200000);
    // The segment's fd outlives the open: a CLOSE in the same batch is harmless.
    fx.close(fx.file);
    char c = 0;
    CHECK(pread(f.fd.get(), &c, 1, 100000) == 1);
    CHECK(c == char('a' + 100000 % 23));
  }
  SECTION("below the threshold the data is copied") {
    REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 0, min - 1)}}, fx.mid), out) ==
            FrameResult::Ok);
    CHECK(fx.conn.out_files.empty());
    CHECK(out.size() == 4 + 64 + 16 + min - 1);
    CHECK(frame_length(out) == out.size() - 4);
  }
  SECTION("a read near the end that returns less than the threshold is copied") {
    REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 299990, min)}}, fx.mid), out) ==
            FrameResult::Ok);
    CHECK(fx.conn.out_files.empty());
    CHECK(load_le32(out.data() + 4 + 64 + 4) == 10);
    CHECK(out.size() == 4 + 64 + 16 + 10);
  }
  SECTION("past the end is END_OF_FILE, with no segment") {
    REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 300000, min)}}, fx.mid), out) ==
            FrameResult::Ok);
    CHECK(load_le32(out.data() + 4 + wire::hdr::Status) == uint32_t(NtStatus::EndOfFile));
    CHECK(fx.conn.out_files.empty());
  }
  SECTION("in a compound chain the data is copied") {
    Bytes frame = chain({{Command::Read, read_body(fx.file, 0, min)}, {Command::Echo, echo_body()}}, fx.mid);
    REQUIRE(process_frame(fx.conn, fx.server, frame, out) == FrameResult::Ok);
    CHECK(fx.conn.out_files.empty());
    CHECK(frame_length(out) == out.size() - 4);
  }
  SECTION("when the session signs, the data is read into memory (no fd) and signed with the response") {
    fx.session->keys.signing_key = Bytes(16, 0x42);
    fx.session->signing_required = true;
    fx.conn.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
    Bytes req = chain({{Command::Read, read_body(fx.file, 0, min)}}, fx.mid);
    crypto::sign_message(crypto::SigningAlgorithm::AesCmac, fx.session->keys.signing_key, req);
    REQUIRE(process_frame(fx.conn, fx.server, req, out) == FrameResult::Ok);
    REQUIRE(fx.conn.out_files.size() == 1);
    CHECK(fx.conn.out_files[0].data);
    CHECK(fx.conn.out_files[0].fd.get() < 0);
    CHECK(out.size() == 4 + 64 + 16);
    Bytes message(out.begin() + 4, out.end());
    auto data = fx.conn.out_files[0].bytes();
    message.insert(message.end(), data.begin(), data.end());
    CHECK(message.size() == 64 + 16 + min);
    CHECK(crypto::verify_message(crypto::SigningAlgorithm::AesCmac, fx.session->keys.signing_key, message));
  }
  SECTION("a transport that does not send files gets the data in the buffer") {
    fx.conn.transport_sends_files = false;
    REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 0, 1 << 20)}}, fx.mid), out) ==
            FrameResult::Ok);
    CHECK(fx.conn.out_files.empty());
    CHECK(out.size() == 4 + 64 + 16 + 300000);
    CHECK(out[4 + 80 + 5] == 'a' + 5);
  }
}

namespace {

// The response message of OUT (one frame) with the data of the memory
// segment after it, as the transport sends them.
Bytes sent_message(const SendfileFixture& fx, const Bytes& out) {
  Bytes m(out.begin() + 4, out.end());
  for (const FileSegment& f : fx.conn.out_files) {
    REQUIRE(f.data);
    REQUIRE(f.at == out.size());
    auto bytes = f.bytes();
    REQUIRE(bytes.size() == f.length);
    // In the page as in the file: pread's copy runs at full speed.
    CHECK(reinterpret_cast<uintptr_t>(bytes.data()) % 4096 == f.offset % 4096);
    m.insert(m.end(), bytes.begin(), bytes.end());
  }
  REQUIRE(frame_length(out) == m.size());
  return m;
}

Bytes expected_data(uint64_t offset, size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t('a' + (offset + i) % 23);
  return b;
}

}  // namespace

TEST_CASE("a large signed READ sends its data from a buffer of its own, signed with the response",
          "[smb2][processor][sendfile]") {
  const uint32_t min = 64 * 1024;
  SendfileFixture fx(300000);
  fx.server.sendfile_min_read = min;
  auto alg = GENERATE(crypto::SigningAlgorithm::HmacSha256, crypto::SigningAlgorithm::AesCmac,
                      crypto::SigningAlgorithm::AesGmac);
  fx.conn.signing_algorithm = alg;
  fx.session->keys.signing_key = Bytes(16, 0x42);
  fx.session->signing_required = true;
  Bytes out;
  auto read = [&](uint64_t offset, uint32_t length, uint32_t minimum = 0) {
    Bytes req = chain({{Command::Read, read_body(fx.file, offset, length, minimum)}}, fx.mid++);
    crypto::sign_message(alg, fx.session->keys.signing_key, req);
    REQUIRE(process_frame(fx.conn, fx.server, req, out) == FrameResult::Ok);
  };

  SECTION("a whole read") {
    read(1000, 200000);
    Bytes m = sent_message(fx, out);
    CHECK(load_le32(m.data() + 64 + 4) == 200000);  // DataLength
    CHECK(crypto::verify_message(alg, fx.session->keys.signing_key, m));
    CHECK(Bytes(m.begin() + 80, m.end()) == expected_data(1000, 200000));
  }
  SECTION("a read past the end returns what pread read, DataLength and signature agreeing") {
    read(250000, 1 << 20);
    Bytes m = sent_message(fx, out);
    REQUIRE(fx.conn.out_files.size() == 1);
    CHECK(fx.conn.out_files[0].length == 50000);
    CHECK(load_le32(m.data() + 64 + 4) == 50000);
    CHECK(crypto::verify_message(alg, fx.session->keys.signing_key, m));
    CHECK(Bytes(m.begin() + 80, m.end()) == expected_data(250000, 50000));
  }
  SECTION("at the end of the file: END_OF_FILE, no segment") {
    read(300000, min);
    CHECK(fx.conn.out_files.empty());
    CHECK(load_le32(out.data() + 4 + wire::hdr::Status) == uint32_t(NtStatus::EndOfFile));
    CHECK(crypto::verify_message(alg, fx.session->keys.signing_key, ByteSpan(out).subspan(4)));
  }
  SECTION("fewer bytes than MinimumCount: END_OF_FILE, no segment") {
    read(250000, min, 60000);
    CHECK(fx.conn.out_files.empty());
    CHECK(load_le32(out.data() + 4 + wire::hdr::Status) == uint32_t(NtStatus::EndOfFile));
  }
  SECTION("a read of 0 bytes stays in the buffer") {
    read(0, 0);
    CHECK(fx.conn.out_files.empty());
    CHECK(load_le32(out.data() + 4 + wire::hdr::Status) == uint32_t(NtStatus::Success));
    CHECK(out.size() == 4 + 64 + 17);
    CHECK(crypto::verify_message(alg, fx.session->keys.signing_key, ByteSpan(out).subspan(4)));
  }
  SECTION("a small read is copied into the buffer") {
    read(0, min - 1);
    CHECK(fx.conn.out_files.empty());
    CHECK(out.size() == 4 + 64 + 16 + min - 1);
    CHECK(crypto::verify_message(alg, fx.session->keys.signing_key, ByteSpan(out).subspan(4)));
  }
  SECTION("in a compound chain the data is copied") {
    Bytes req = chain({{Command::Read, read_body(fx.file, 0, min)}, {Command::Echo, echo_body()}}, fx.mid);
    REQUIRE(process_frame(fx.conn, fx.server, req, out) == FrameResult::Ok);
    CHECK(fx.conn.out_files.empty());
    CHECK(frame_length(out) == out.size() - 4);
  }
}

TEST_CASE("a large encrypted READ sends its data from a buffer of its own, encrypted with the response",
          "[smb2][processor][sendfile]") {
  const uint32_t min = 64 * 1024;
  SendfileFixture fx(300000);
  fx.server.sendfile_min_read = min;
  fx.session->keys.encryption_key = Bytes(16, 0x21);
  fx.session->keys.decryption_key = Bytes(16, 0x12);
  Bytes out;
  auto read = [&](crypto::Aead alg, uint64_t offset, uint32_t length) {
    fx.conn.cipher = alg;
    size_t key = crypto::aead_key_size(alg);
    fx.session->keys.encryption_key.resize(key, 0x21);
    fx.session->keys.decryption_key.resize(key, 0x12);
    Bytes req = chain({{Command::Read, read_body(fx.file, offset, length)}}, fx.mid++);
    Bytes frame = crypto::encrypt_message(alg, fx.session->keys.decryption_key, 1, req);
    REQUIRE(process_frame(fx.conn, fx.server, frame, out) == FrameResult::Ok);
  };
  auto decrypt = [&](crypto::Aead alg) {
    Bytes m = sent_message(fx, out);
    auto plain = crypto::decrypt_message(alg, fx.session->keys.encryption_key, m);
    REQUIRE(plain);
    return *plain;
  };

  SECTION("AES-GCM: the data is encrypted where pread put it") {
    auto alg = GENERATE(crypto::Aead::Aes128Gcm, crypto::Aead::Aes256Gcm);
    read(alg, 1000, 200000);
    REQUIRE(fx.conn.out_files.size() == 1);
    CHECK(out.size() == 4 + 52 + 64 + 16);
    Bytes plain = decrypt(alg);
    CHECK(load_le32(plain.data() + wire::hdr::Status) == uint32_t(NtStatus::Success));
    CHECK(load_le32(plain.data() + 64 + 4) == 200000);
    CHECK(Bytes(plain.begin() + 80, plain.end()) == expected_data(1000, 200000));
  }
  SECTION("AES-GCM, past the end: what pread read") {
    read(crypto::Aead::Aes128Gcm, 299000, 1 << 20);
    REQUIRE(fx.conn.out_files.size() == 1);
    Bytes plain = decrypt(crypto::Aead::Aes128Gcm);
    CHECK(load_le32(plain.data() + 64 + 4) == 1000);
    CHECK(Bytes(plain.begin() + 80, plain.end()) == expected_data(299000, 1000));
  }
  SECTION("AES-GCM at the end of the file: END_OF_FILE, no segment") {
    read(crypto::Aead::Aes128Gcm, 300000, min);
    CHECK(fx.conn.out_files.empty());
    Bytes plain = decrypt(crypto::Aead::Aes128Gcm);
    CHECK(load_le32(plain.data() + wire::hdr::Status) == uint32_t(NtStatus::EndOfFile));
  }
  SECTION("AES-CCM takes the plaintext in one piece: the data is copied") {
    auto alg = GENERATE(crypto::Aead::Aes128Ccm, crypto::Aead::Aes256Ccm);
    read(alg, 1000, 200000);
    CHECK(fx.conn.out_files.empty());
    Bytes plain = decrypt(alg);
    CHECK(Bytes(plain.begin() + 80, plain.end()) == expected_data(1000, 200000));
  }
  SECTION("no encryption key: the message and its segment are dropped") {
    fx.conn.cipher = crypto::Aead::Aes128Gcm;
    Bytes req = chain({{Command::Read, read_body(fx.file, 0, min)}}, fx.mid);
    Bytes frame = crypto::encrypt_message(crypto::Aead::Aes128Gcm, fx.session->keys.decryption_key, 1, req);
    fx.session->keys.encryption_key.clear();
    REQUIRE(process_frame(fx.conn, fx.server, frame, out) == FrameResult::Ok);
    CHECK(out.empty());
    CHECK(fx.conn.out_files.empty());
  }
}

TEST_CASE("file segments waiting to be sent are bounded per connection", "[smb2][processor][sendfile]") {
  SendfileFixture fx(200000);
  fx.server.sendfile_min_read = 64 * 1024;
  Bytes out;
  for (int i = 0; i < 70; ++i)  // the transport never takes them: the socket is full
    REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 0, 100000)}}, fx.mid++),
                          out) == FrameResult::Ok);
  CHECK(fx.conn.out_files.size() == 64);
  CHECK(out.size() == 70 * (4 + 64 + 16) + 6 * 100000);  // the rest were copied
}

TEST_CASE("the CreditCharge must cover the payload fields the dispatch table names", "[smb2][processor]") {
  Smb2Fixture fx;
  fx.conn.supports_multi_credit = true;
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0, 64), out) == FrameResult::Ok);
  // IOCTL (MS-SMB2 2.2.31): InputCount at 28, MaxOutputResponse at 44;
  // the payload is the larger: 70000 bytes need a charge of 2.
  auto ioctl = [](uint32_t input_count, uint32_t max_output) {
    Bytes b(56, 0);
    store_le16(b.data(), 57);
    store_le32(b.data() + 4, 0x00060194);  // FSCTL_DFS_GET_REFERRALS: no open needed
    store_le32(b.data() + 28, input_count);
    store_le32(b.data() + 44, max_output);
    b.push_back(0);
    return b;
  };
  uint64_t mid = 1;
  auto run = [&](Bytes body, uint16_t charge) {
    Bytes frame = chain({{Command::Ioctl, body}}, mid);
    store_le16(frame.data() + wire::hdr::CreditCharge, charge);
    mid += charge;
    Bytes o;
    REQUIRE(process_frame(fx.conn, fx.server, frame, o) == FrameResult::Ok);
    return replies(o)[0].status;
  };
  CHECK(run(ioctl(0, 70000), 1) == uint32_t(NtStatus::InvalidParameter));
  CHECK(run(ioctl(70000, 0), 1) == uint32_t(NtStatus::InvalidParameter));
  CHECK(run(ioctl(0, 70000), 2) != uint32_t(NtStatus::InvalidParameter));
  CHECK(run(ioctl(0, 65536), 1) != uint32_t(NtStatus::InvalidParameter));
  // QUERY_DIRECTORY (2.2.33): OutputBufferLength at 28.
  Bytes qd(32, 0);
  store_le16(qd.data(), 33);
  store_le32(qd.data() + 28, 3 * 65536);
  qd.push_back(0);
  CHECK(run(qd, 2) == uint32_t(NtStatus::InvalidParameter));
}

TEST_CASE("requests are counted on the tree's share and the session's user", "[smb2][processor][metrics]") {
  SendfileFixture fx(100000);
  fx.server.sendfile_min_read = 64 * 1024;
  WorkerMetrics m;
  fx.conn.metrics = &m;
  fx.tree->metrics_slot = m.shares.slot("share");
  fx.session->metrics_slot = m.users.slot("alice");
  FileId out_file = fx.open_file("new.bin", FILE_ALL_ACCESS);
  Bytes data(3000, 'w');
  Bytes write;
  ByteWriter w(write);
  w.u16(49);
  w.u16(64 + 48);  // DataOffset
  w.u32(uint32_t(data.size()));
  w.u64(0);
  w.u64(out_file.persistent);
  w.u64(out_file.volatile_id);
  w.zeros(12);
  w.u32(0);
  w.bytes(data);
  Bytes out;
  // A copied READ, a READ left to sendfile, a WRITE, a READ past the end.
  Bytes frame = chain({{Command::Read, read_body(fx.file, 0, 1000)}}, fx.mid++);
  REQUIRE(process_frame(fx.conn, fx.server, frame, out) == FrameResult::Ok);
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 0, 1 << 20)}}, fx.mid++), out) ==
          FrameResult::Ok);
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Write, write}}, fx.mid++), out) == FrameResult::Ok);
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Read, read_body(fx.file, 200000, 10)}}, fx.mid++), out) ==
          FrameResult::Ok);
  // An ECHO (no tree): the user's, no share's.
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, fx.mid++), out) ==
          FrameResult::Ok);

  const ScopeMetrics* share = m.shares.find("share");
  const ScopeMetrics* user = m.users.find("alice");
  REQUIRE(share);
  REQUIRE(user);
  for (const ScopeMetrics* s : {share, user}) {
    CHECK(s->bytes_read == 1000 + 100000);  // DataLength of both READs, sendfile's included
    CHECK(s->bytes_written == 3000);
    CHECK(s->responses[uint16_t(Command::Read)][0] == 2);
    CHECK(s->responses[uint16_t(Command::Read)][3] == 1);  // END_OF_FILE: an error
    CHECK(s->responses[uint16_t(Command::Write)][0] == 1);
    uint64_t timed = 0;
    for (uint64_t n : s->latency) timed += n;
    CHECK(timed == s->responses[uint16_t(Command::Read)][0] + 1 + 1 + (s == user ? 1 : 0));
  }
  CHECK(user->responses[uint16_t(Command::Echo)][0] == 1);
  CHECK(share->responses[uint16_t(Command::Echo)][0] == 0);
  CHECK(m.commands[uint16_t(Command::Read)].responses[0] == 2);
}

TEST_CASE("a TREE_DISCONNECT is counted on the share it ended", "[smb2][processor][metrics]") {
  Smb2Fixture fx;
  WorkerMetrics m;
  fx.conn.metrics = &m;
  fx.tree->metrics_slot = m.shares.slot("share");
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::Echo, echo_body()}}, 0, 32), out) == FrameResult::Ok);
  REQUIRE(process_frame(fx.conn, fx.server, chain({{Command::TreeDisconnect, {4, 0, 0, 0}}}, 1), out) ==
          FrameResult::Ok);
  CHECK(fx.session->trees.empty());
  CHECK(m.shares.find("share")->responses[uint16_t(Command::TreeDisconnect)][0] == 1);
}

TEST_CASE("what may change a file that a READ left for sendfile is seen from the header", "[smb2][processor][sendfile]") {
  auto one = [](Command cmd) { return chain({{cmd, Bytes(8)}}, 5); };
  CHECK(may_change_file_data(one(Command::Write)));
  CHECK(may_change_file_data(one(Command::SetInfo)));
  CHECK(may_change_file_data(one(Command::Create)));
  CHECK(may_change_file_data(one(Command::Ioctl)));
  CHECK_FALSE(may_change_file_data(one(Command::Read)));
  CHECK_FALSE(may_change_file_data(one(Command::Close)));
  CHECK_FALSE(may_change_file_data(one(Command::Echo)));
  // A compound may hold anything; so may what cannot be read.
  CHECK(may_change_file_data(chain({{Command::Read, Bytes(8)}, {Command::Close, Bytes(8)}}, 5)));
  Bytes transform = one(Command::Read);
  transform[0] = 0xFD;
  CHECK(may_change_file_data(transform));
  CHECK(may_change_file_data(Bytes(10)));
}
