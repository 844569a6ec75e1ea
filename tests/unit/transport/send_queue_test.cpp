// The send queue: reply bytes with file segments inside them, sent in
// order with send() and sendfile() over a real socket pair.
#include "transport/send_queue.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

using namespace ringsmb;
using transport::SendQueue;
using transport::SendResult;
using Kind = SendQueue::Piece::Kind;

namespace {

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 31 + seed + i / 251);
  return b;
}

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

// A file in /tmp holding `content`, unlinked at once; the fd stays usable.
state::UniqueFd temp_file(const Bytes& content) {
  char name[] = "/tmp/ringsmb-sendq-XXXXXX";
  int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  unlink(name);
  REQUIRE(write(fd, content.data(), content.size()) == ssize_t(content.size()));
  return state::UniqueFd(fd);
}

smb2::FileSegment segment(size_t at, const state::UniqueFd& file, uint64_t offset, uint32_t length) {
  return {at, state::UniqueFd(dup(file.get())), offset, length};
}

struct SocketPair {
  int tx = -1, rx = -1;
  explicit SocketPair(int sndbuf = 0) {
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
    tx = sv[0];
    rx = sv[1];
    if (sndbuf) setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  }
  ~SocketPair() {
    close(tx);
    close(rx);
  }
  // Everything readable now.
  Bytes drain() {
    Bytes got;
    uint8_t buf[65536];
    for (;;) {
      ssize_t n = recv(rx, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) break;
      got.insert(got.end(), buf, buf + n);
    }
    return got;
  }
};

// Sends the whole queue, draining the reader whenever the socket is full.
Bytes send_all(SendQueue& q, SocketPair& sp, int& would_blocks) {
  Bytes got;
  for (int rounds = 0; rounds < 100000; ++rounds) {
    SendResult r = transport::send_queued(q, sp.tx);
    Bytes part = sp.drain();
    got.insert(got.end(), part.begin(), part.end());
    if (r == SendResult::Done) {
      Bytes rest = sp.drain();
      got.insert(got.end(), rest.begin(), rest.end());
      return got;
    }
    REQUIRE(r == SendResult::WouldBlock);
    ++would_blocks;
  }
  FAIL("the queue never emptied");
  return got;
}

Bytes concat(std::initializer_list<ByteSpan> parts) {
  Bytes out;
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

TEST_CASE("the queue hands out bytes, then the file, then the bytes after it", "[transport]") {
  Bytes data = pattern(1000, 1);
  state::UniqueFd file = temp_file(data);
  SendQueue q;
  Bytes buf = text("HEADtail");
  std::vector<smb2::FileSegment> files;
  files.push_back(segment(4, file, 100, 300));
  q.append(buf, files);
  CHECK(buf.empty());
  CHECK(files.empty());

  SendQueue::Piece p = q.front();
  CHECK(p.kind == Kind::Memory);
  CHECK(p.size == 4);
  CHECK(p.file_follows);
  q.advance(3);  // a short send
  p = q.front();
  CHECK(p.size == 1);
  CHECK(p.data[0] == 'D');
  q.advance(1);

  p = q.front();
  REQUIRE(p.kind == Kind::File);
  CHECK(p.file_offset == 100);
  CHECK(p.size == 300);
  q.advance(120);
  p = q.front();
  CHECK(p.file_offset == 220);
  CHECK(p.size == 180);
  q.advance(180);

  p = q.front();
  CHECK(p.kind == Kind::Memory);
  CHECK(p.size == 4);
  CHECK_FALSE(p.file_follows);
  q.advance(4);
  CHECK(q.empty());
}

TEST_CASE("a file that shrank is padded with zeros to the segment's length", "[transport]") {
  Bytes data = pattern(4096, 2);
  state::UniqueFd file = temp_file(data);
  SendQueue q;
  Bytes buf = text("AB");
  std::vector<smb2::FileSegment> files;
  files.push_back(segment(1, file, 1000, 200000));  // DataLength from a size the file no longer has
  q.append(buf, files);
  SocketPair sp;
  int would_blocks = 0;
  Bytes got = send_all(q, sp, would_blocks);
  Bytes expected = concat({text("A"), ByteSpan(data).subspan(1000), Bytes(200000 - 3096, 0), text("B")});
  REQUIRE(got.size() == expected.size());
  CHECK(got == expected);
}

TEST_CASE("replies queued behind a full socket go out whole and in order", "[transport]") {
  Bytes big = pattern(3 * 1024 * 1024 + 17, 3);
  state::UniqueFd file = temp_file(big);
  SocketPair sp(16384);
  SendQueue q;
  Bytes expected;
  for (int i = 0; i < 3; ++i) {
    // header, file data, and a small reply after it, as a frame of replies
    Bytes buf = concat({text("hdr" + std::to_string(i)), text("|small reply " + std::to_string(i))});
    std::vector<smb2::FileSegment> files;
    uint64_t off = uint64_t(i) * 1000;
    uint32_t len = uint32_t(big.size() - off);
    files.push_back(segment(4, file, off, len));
    expected.insert(expected.end(), buf.begin(), buf.begin() + 4);
    expected.insert(expected.end(), big.begin() + long(off), big.end());
    expected.insert(expected.end(), buf.begin() + 4, buf.end());
    q.append(buf, files);
  }
  Bytes plain = text("a plain reply");
  std::vector<smb2::FileSegment> none;
  expected.insert(expected.end(), plain.begin(), plain.end());
  q.append(plain, none);
  // The original fd may close (a CLOSE in the same batch): the segments hold their own.
  file.reset();

  int would_blocks = 0;
  Bytes got = send_all(q, sp, would_blocks);
  CHECK(would_blocks > 0);
  REQUIRE(got.size() == expected.size());
  CHECK(got == expected);
}

TEST_CASE("append hands back a sent buffer for reuse", "[transport]") {
  SendQueue q;
  Bytes buf(100000, 7);
  std::vector<smb2::FileSegment> none;
  q.append(buf, none);
  q.advance(100000);
  CHECK(q.empty());
  Bytes next = text("x");
  q.append(next, none);
  CHECK(next.empty());
  CHECK(next.capacity() >= 100000);
}

TEST_CASE("empty buffers and empty segments queue nothing", "[transport]") {
  SendQueue q;
  Bytes buf;
  std::vector<smb2::FileSegment> none;
  q.append(buf, none);
  CHECK(q.empty());
  SocketPair sp;
  CHECK(transport::send_queued(q, sp.tx) == SendResult::Done);
}

TEST_CASE("a send to a closed peer fails instead of blocking", "[transport]") {
  SendQueue q;
  Bytes buf(1000, 1);
  std::vector<smb2::FileSegment> none;
  q.append(buf, none);
  SocketPair sp;
  close(sp.rx);
  sp.rx = open("/dev/null", O_RDONLY);  // for the destructor
  CHECK(transport::send_queued(q, sp.tx) == SendResult::Failed);
}

TEST_CASE("the queue counts the bytes it still has to send, file data included", "[transport]") {
  Bytes content = pattern(5000, 3);
  state::UniqueFd file = temp_file(content);
  SendQueue q;
  Bytes reply = text("head-tail");
  std::vector<smb2::FileSegment> files;
  files.push_back(segment(4, file, 0, 5000));
  q.append(reply, files);
  CHECK(q.queued_bytes() == 9 + 5000);
  q.advance(4);  // the head
  CHECK(q.queued_bytes() == 5005);
  q.advance(5000);  // the file data
  q.advance(5);
  CHECK(q.queued_bytes() == 0);
  CHECK(q.empty());
}

TEST_CASE("file data copied before the file changes goes out as it was when the READ ran", "[transport]") {
  Bytes data = pattern(300000, 3);
  state::UniqueFd file = temp_file(data);
  SendQueue q;
  Bytes first = text("12");
  std::vector<smb2::FileSegment> files;
  files.push_back(segment(1, file, 0, 200000));
  q.append(first, files);
  CHECK(q.has_file_data());
  q.advance(1);
  q.advance(5000);  // part of the first segment went out by sendfile already
  Bytes second = text("34");
  files.push_back(segment(1, file, 100000, 200000));
  // Still in the output buffer (not queued): the free function copies it.
  transport::copy_file_data(files);
  CHECK_FALSE(files[0].fd);
  q.append(second, files);
  q.copy_file_data();
  CHECK_FALSE(q.has_file_data());

  // What a later WRITE and truncation would do.
  Bytes other = pattern(300000, 9);
  REQUIRE(pwrite(file.get(), other.data(), other.size(), 0) == ssize_t(other.size()));
  REQUIRE(ftruncate(file.get(), 1000) == 0);

  SendQueue::Piece p = q.front();
  CHECK(p.kind == Kind::Memory);
  SocketPair sp;
  int would_blocks = 0;
  Bytes got = send_all(q, sp, would_blocks);
  Bytes expected = concat({ByteSpan(data).subspan(5000, 195000), text("2"), text("3"),
                           ByteSpan(data).subspan(100000, 200000), text("4")});
  REQUIRE(got.size() == expected.size());
  CHECK(got == expected);
}

TEST_CASE("a copied segment of a file that had shrunk keeps its zeros", "[transport]") {
  Bytes data = pattern(1000, 4);
  state::UniqueFd file = temp_file(data);
  SendQueue q;
  Bytes buf = text("AB");
  std::vector<smb2::FileSegment> files;
  files.push_back(segment(1, file, 500, 3000));  // 500 bytes left in the file
  q.append(buf, files);
  q.copy_file_data();
  Bytes other = pattern(4000, 5);
  REQUIRE(pwrite(file.get(), other.data(), other.size(), 0) == ssize_t(other.size()));
  SocketPair sp;
  int would_blocks = 0;
  Bytes got = send_all(q, sp, would_blocks);
  Bytes expected = concat({text("A"), ByteSpan(data).subspan(500), Bytes(2500, 0), text("B")});
  CHECK(got == expected);
}

TEST_CASE("a segment read into memory goes out from its buffer between the bytes around it", "[transport]") {
  SendQueue q;
  Bytes buf = text("HEADtail");
  Bytes data = pattern(300000, 3);
  std::vector<smb2::FileSegment> files;
  smb2::FileSegment seg;
  seg.at = 4;
  seg.length = uint32_t(data.size());
  std::copy(data.begin(), data.end(), seg.allocate_data());
  files.push_back(std::move(seg));
  q.append(buf, files);
  CHECK(q.queued_bytes() == 8 + data.size());

  SendQueue::Piece p = q.front();
  CHECK(p.file_follows);  // MSG_MORE: the header waits for the data
  q.advance(4);
  p = q.front();
  CHECK(p.kind == Kind::Memory);
  CHECK(p.size == data.size());
  q.advance(1000);
  p = q.front();
  CHECK(p.size == data.size() - 1000);
  CHECK(p.data[0] == data[1000]);

  SocketPair sp(4096);  // a small buffer: the segment goes out in many sends
  int would_blocks = 0;
  Bytes got = send_all(q, sp, would_blocks);
  CHECK(would_blocks > 0);
  CHECK(got == concat({ByteSpan(data).subspan(1000), text("tail")}));
  CHECK(q.empty());
  CHECK(q.queued_bytes() == 0);
}
