// A ReactorHandler that ignores every event: tests of a real reactor derive
// from it and override only the events they look at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

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

}  // namespace ringsmb::test
