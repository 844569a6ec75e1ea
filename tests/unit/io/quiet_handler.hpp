// A ReactorHandler that ignores every event: tests of a real reactor derive
// from it and override only the events they look at. And the real reactor
// such a test runs on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <catch2/catch.hpp>

#include "io/reactor.hpp"

namespace ringsmb::test {

struct QuietHandler : io::ReactorHandler {
  void on_accept(int) override {}
  void on_accept_failed(int, int) override {}
  void on_recv(uint64_t, ByteSpan) override {}
  std::span<uint8_t> recv_space(uint64_t) override { return {}; }
  void on_recv_in_place(uint64_t, size_t) override {}
  void on_recv_end(uint64_t, int) override {}
  void on_send(uint64_t, int) override {}
  void on_writable(uint64_t, int) override {}
  void on_wake() override {}
  void on_tick() override {}
};

// The io_uring reactor (uring) or the epoll one on HANDLER; null, with a
// warning, where the kernel has no io_uring (the test then checks nothing).
inline std::unique_ptr<io::Reactor> make_test_reactor(io::ReactorHandler& handler, const io::ReactorOptions& opts,
                                                      bool uring) {
  if (!uring) return io::make_epoll_reactor(handler, opts);
  std::string why;
  std::unique_ptr<io::Reactor> r = io::make_uring_reactor(handler, opts, why);
  if (!r) WARN("no io_uring here: " << why);
  return r;
}

}  // namespace ringsmb::test
