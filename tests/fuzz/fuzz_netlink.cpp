// libFuzzer target for the control-plane message parser (daemon/ipc/ctl_codec)
// and everything that reads a parsed message: the reply decoders ringsmbd
// uses and the request decoders ringsmb-ctld uses. Build with
// -DRINGSMB_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ipc/ctl_codec.hpp"
#include "ipc/ctl_status.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringsmb::ipc;
  if (size > abi::kMaxMessage) return 0;  // the socket layer drops these before parsing
  // Receive buffers are aligned; copy the input into aligned storage the
  // way a recvmsg into the socket's buffer would place it.
  std::vector<uint32_t> aligned(size / 4 + 1);
  if (size) memcpy(aligned.data(), data, size);
  auto m = parse_message(reinterpret_cast<const uint8_t*>(aligned.data()), size);
  if (!m) return 0;
  (void)decode_login_reply(*m);
  (void)decode_tree_connect_reply(*m);
  if (m->is_request && (m->cmd == abi::CMD_LOGIN || m->cmd == abi::CMD_LOGIN_EXT)) (void)decode_login_request(*m);
  if (m->is_request && m->cmd == abi::CMD_TREE_CONNECT) (void)decode_tree_connect_request(*m);
  ServerStatus status;  // ringsmbctl's LIST_* decoder walks every nested ENTRY
  (void)decode_list_reply(reinterpret_cast<const uint8_t*>(aligned.data()), size, *m, status);
  for (int a = 1; a < abi::ATTR_COUNT; ++a) {
    (void)m->str(abi::Attr(a));
    (void)m->bytes(abi::Attr(a));
  }
  return 0;
}
