// A NETLINK_USERSOCK socket that enforces ctl_abi.hpp's credential rule on
// every datagram it receives: SO_PASSCRED is on, and a datagram whose
// SCM_CREDENTIALS are not uid 0 or our own euid is dropped and logged.
// Sends wait up to abi::kSendWaitMs for room in the peer's queue; a socket
// connect()ed to its peer receives from nobody else (the kernel refuses).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "common/bytes.hpp"

namespace ringsmb::ipc {

// The rule itself, separate so it can be tested: root or the service's uid.
bool credentials_allowed(uint32_t uid, uint32_t own_euid);

// The port files of ctl_abi.hpp: written 0600 under a temporary name and
// renamed; read back only when owned by root or our euid and writable by
// nobody else, so another user cannot point us at their socket.
bool write_port_file(const std::string& path, uint32_t port, std::string& error);
uint32_t read_port_file(const std::string& path);

struct Datagram {
  uint32_t port = 0;  // the sender's port, from the kernel-filled sockaddr
  struct ucred cred{};
  size_t size = 0;    // bytes in the socket's buffer()
};

class NlSocket {
 public:
  // Binds port PORT, or lets the kernel pick one when PORT is 0.
  static std::expected<NlSocket, std::string> open(uint32_t port);
  // Takes over FD, a bound NETLINK_USERSOCK socket inherited from the
  // process that spawned us; anything else is refused.
  static std::expected<NlSocket, std::string> adopt(int fd);
  NlSocket() = default;
  NlSocket(NlSocket&& o) noexcept;
  NlSocket& operator=(NlSocket&& o) noexcept;
  ~NlSocket();

  int fd() const { return fd_; }
  uint32_t port() const { return port_; }
  // Accept datagrams from PORT only (0: from anyone again). 0 or an errno.
  int connect_to(uint32_t port);
  uint32_t peer() const { return peer_; }
  // 0, or the errno of sendto (ECONNREFUSED: nobody bound DST, or DST is
  // connected to another port; EAGAIN: DST's queue stayed full).
  int send(uint32_t dst, ByteSpan msg);
  // Waits up to TIMEOUT_MS (-1: forever) for one acceptable datagram.
  // Returns false on timeout or error. Rejected datagrams are consumed,
  // logged and not returned; the wait goes on until the deadline.
  bool receive(Datagram& out, int timeout_ms);
  const uint8_t* buffer() const { return buf_.data(); }

 private:
  enum class Got { Message, Dropped, Nothing };
  Got receive_one(Datagram& out);
  static std::expected<NlSocket, std::string> configure(NlSocket s);
  int fd_ = -1;
  uint32_t port_ = 0;
  uint32_t peer_ = 0;
  std::vector<uint8_t> buf_;
};

}  // namespace ringsmb::ipc
