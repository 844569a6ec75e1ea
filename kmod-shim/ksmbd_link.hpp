// The generic-netlink socket to ksmbd.ko: finds the SMBD_GENL family and
// checks its version, registers with STARTING_UP and reports the kernel's
// answer in words, then receives the kernel's requests and sends replies.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "common/bytes.hpp"

struct nl_sock;

namespace ringsmb::kmod {

// One event from the kernel: its number and its attribute's payload.
struct KernelEvent {
  uint8_t event = 0;
  Bytes payload;
};

// Whether a family reporting VERSION and MAX_EVENT (its highest attribute
// number) is one this shim speaks; why not, in words, otherwise.
std::expected<void, std::string> check_family(uint32_t version, uint32_t max_event);

// The kernel's requests in one received DATAGRAM: every generic-netlink
// message of FAMILY (its genl id) whose attribute numbered like its command
// carries the payload, appended to OUT in order. NLMSG_ERROR messages (the
// kernel refusing one of our answers) are logged; anything malformed or
// truncated ends the walk, keeping the events before it. Needs no socket
// (unit tests and the fuzz target call it).
void parse_datagram(ByteSpan datagram, int family, std::vector<KernelEvent>& out);

class KsmbdLink {
 public:
  // Opens the socket and looks the family up. Errors (in words): the family
  // is absent (module not loaded or not built), its version is not ours,
  // it has fewer events than this shim speaks.
  static std::expected<KsmbdLink, std::string> open();
  KsmbdLink(KsmbdLink&& o) noexcept;
  KsmbdLink& operator=(KsmbdLink&&) = delete;
  ~KsmbdLink();

  // Sends STARTING_UP with PAYLOAD and waits for the kernel's
  // acknowledgment; a refusal is explained (already driven by another
  // daemon, a reset in progress, no permission).
  std::expected<void, std::string> start(const Bytes& payload);
  // Sends one message: genl command and attribute EVENT carrying PAYLOAD.
  // Returns 0 or a positive errno.
  int send(uint8_t event, ByteSpan payload);
  // Reads every datagram waiting (non-blocking); false when the socket failed.
  bool receive(std::vector<KernelEvent>& out);
  int fd() const;
  uint32_t family_version() const { return version_; }
  uint32_t max_event() const { return max_attr_; }

 private:
  KsmbdLink() = default;
  nl_sock* sock_ = nullptr;
  int family_ = 0;
  uint32_t version_ = 0;
  uint32_t max_attr_ = 0;
  Bytes buffer_;
};

}  // namespace ringsmb::kmod
