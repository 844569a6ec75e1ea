// A transport::Worker on a fake reactor, its connection's client end a
// socketpair: the test plays the kernel's part (what arrives, when the
// socket has room, what a reactor send took) and reads the replies.
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "transport/fake_reactor.hpp"
#include "transport/worker.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::test {

using transport::Worker;


// An ECHO request frame (RFC 1002 header + SMB2 header + body), padded to
// FRAME_SIZE bytes when asked. Before NEGOTIATE it is answered with an
// error, which is a reply all the same: all these tests need.
inline Bytes echo_frame(size_t frame_size = 0, uint64_t message_id = 0) {
  Bytes pdu;
  ByteWriter w(pdu);
  wire::Header h{};
  h.command = wire::Command::Echo;
  h.credit_charge = 1;
  h.credits = 1;
  h.message_id = message_id;
  wire::write_header(w, h);
  w.u16(4);
  w.u16(0);
  if (frame_size > pdu.size() + 4) pdu.resize(frame_size - 4, 0);
  Bytes frame = {0, uint8_t(pdu.size() >> 16), uint8_t(pdu.size() >> 8), uint8_t(pdu.size())};
  frame.insert(frame.end(), pdu.begin(), pdu.end());
  return frame;
}

struct WorkerFixture {
  smb2::ServerContext ctx;
  FakeReactor* reactor = nullptr;
  std::unique_ptr<Worker> worker;
  int peer = -1;       // the client's end
  int server_fd = -1;  // the worker's end (the worker closes it)
  uint64_t conn = 0;

  WorkerFixture(bool in_place = false) {
    ctx.max_read = ctx.max_write = ctx.max_trans = 1 << 20;
    worker = std::make_unique<Worker>(0, ctx);
    auto r = std::make_unique<FakeReactor>(in_place);
    reactor = r.get();
    worker->use_reactor(std::move(r));
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    peer = sv[0];
    server_fd = sv[1];
    fcntl(server_fd, F_SETFL, fcntl(server_fd, F_GETFL) | O_NONBLOCK);
    fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK);
    worker->on_accept(server_fd);
    REQUIRE(reactor->receiving.size() == 1);
    conn = reactor->receiving[0];
  }
  ~WorkerFixture() {
    worker.reset();
    close(peer);
  }

  // Everything the peer can read now.
  Bytes read_peer() {
    Bytes out;
    uint8_t buf[65536];
    ssize_t n;
    while ((n = recv(peer, buf, sizeof buf, 0)) > 0) out.insert(out.end(), buf, buf + n);
    return out;
  }
  // Fills the worker's socket until a send would block.
  size_t fill_socket() {
    std::vector<uint8_t> junk(65536, 0xEE);
    size_t total = 0;
    ssize_t n;
    while ((n = send(server_fd, junk.data(), junk.size(), MSG_DONTWAIT)) > 0) total += size_t(n);
    return total;
  }
  // Reads and throws away N bytes at the peer.
  void drain(size_t n) {
    uint8_t buf[65536];
    while (n) {
      ssize_t got = recv(peer, buf, std::min(n, sizeof buf), 0);
      REQUIRE(got > 0);
      n -= size_t(got);
    }
  }
};

// The SMB2 replies in BYTES: their commands, checking each frame's length.
inline std::vector<wire::Command> reply_commands(const Bytes& bytes) {
  std::vector<wire::Command> out;
  size_t at = 0;
  while (at + 4 <= bytes.size()) {
    size_t len = (size_t(bytes[at + 1]) << 16) | (size_t(bytes[at + 2]) << 8) | bytes[at + 3];
    REQUIRE(at + 4 + len <= bytes.size());
    wire::Header h;
    REQUIRE(wire::parse_header(ByteSpan(bytes).subspan(at + 4, len), h));
    out.push_back(h.command);
    at += 4 + len;
  }
  CHECK(at == bytes.size());
  return out;
}


}  // namespace ringsmb::test
