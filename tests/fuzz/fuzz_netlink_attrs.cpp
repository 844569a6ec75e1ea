// libFuzzer target: well-framed control-plane messages with random
// attribute sets, through everything that handles one: parse_message (the
// policy and the required attributes of each command), the decoders both
// sides use, and ringsmb-ctld's whole request dispatch (CtlServer::handle:
// STARTING_UP, LOGIN with random NTLM messages, TREE_CONNECT, RPC_* on the
// IPC$ pipes, RELOAD, ...). fuzz_netlink feeds raw datagrams, which mostly
// stop at the framing checks; here the framing is right and the attributes
// are the fuzzer's.
//
// Input: byte 0 = command, byte 1 bit 0 = request flag, then attributes,
// each as: type (1 byte, any value up to 255), length (1 byte, or 2 when
// the top bit is set: 15 bits), that many payload bytes. A type of 0xFF
// opens an ENTRY nest and a later 0xFE closes it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common/log.hpp"
#include "config/config.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/ctl_status.hpp"
#include "ringsmb-ctld/ctl_server.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::ipc;

struct World {
  std::string dir;
  std::unique_ptr<ctld::CtlServer> server;
  World() {
    set_log_level(LogLevel::Error);  // rejected messages are logged as warnings: not per input
    char tmpl[] = "/tmp/fuzz_netlink_attrs.XXXXXX";
    dir = mkdtemp(tmpl);
    std::string conf = dir + "/ringsmb.conf";
    std::ofstream(conf) << "[global]\n  users db = " << dir << "/users.db\n  state directory = " << dir
                        << "\n  log level = 0\n  login failure delay = 0\n[share]\n  path = " << dir
                        << "\n  guest ok = yes\n";
    auto parsed = config::parse_config_file(conf);
    if (!parsed) abort();
    server = std::make_unique<ctld::CtlServer>(conf, parsed->config);
  }
};

// Builds the message; false when the builder refuses (too large).
bool build(const uint8_t* data, size_t size, Bytes& wire) {
  if (size < 2) return false;
  MsgBuilder b(abi::Cmd(data[0]), 7, data[1] & 1);
  size_t off = 2;
  bool nested = false;
  while (off + 2 <= size) {
    uint8_t type = data[off];
    size_t len = data[off + 1];
    off += 2;
    if (len & 0x80) {
      if (off >= size) break;
      len = ((len & 0x7f) << 8) | data[off++];
    }
    len = std::min(len, size - off);
    if (type == 0xFF && !nested) {
      b.begin_nest(abi::ATTR_ENTRY);
      nested = true;
    } else if (type == 0xFE && nested) {
      b.end_nest();
      nested = false;
    } else {
      b.bytes(abi::Attr(type), ByteSpan(data + off, len));
    }
    off += len;
  }
  if (nested) b.end_nest();
  if (!b.ok()) return false;
  ByteSpan w = b.wire();
  wire.assign(w.begin(), w.end());
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World();
  Bytes wire;
  if (!build(data, size, wire) || wire.size() > abi::kMaxMessage) return 0;
  // Receive buffers are aligned: copy as a recvmsg would place it.
  std::vector<uint32_t> aligned(wire.size() / 4 + 1);
  memcpy(aligned.data(), wire.data(), wire.size());
  const auto* msg = reinterpret_cast<const uint8_t*>(aligned.data());
  auto m = parse_message(msg, wire.size());
  if (m) {
    (void)decode_login_reply(*m);
    (void)decode_tree_connect_reply(*m);
    ServerStatus status;
    (void)decode_list_reply(msg, wire.size(), *m, status);
  }
  // ctld's side: whatever comes, a reply that parses again or nothing.
  for (const ctld::Outgoing& o : world->server->handle(msg, wire.size(), 4242)) {
    std::vector<uint32_t> back(o.bytes.size() / 4 + 1);
    memcpy(back.data(), o.bytes.data(), o.bytes.size());
    if (!parse_message(reinterpret_cast<const uint8_t*>(back.data()), o.bytes.size())) abort();
  }
  return 0;
}
