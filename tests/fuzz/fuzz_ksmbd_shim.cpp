// libFuzzer target: the decoders of kmod-shim (data plane = ksmbd), i.e.
// everything ringsmb-ctld does with bytes ksmbd.ko sends: parse_datagram
// (netlink/genl framing and the event attribute) and KsmbdShim::handle
// (LOGIN, SHARE_CONFIG, TREE_CONNECT, RPC on the IPC$ pipes, SPNEGO, the
// one-way events), with the invariants the kernel checks on every answer
// (kmod-shim/ksmbd_abi.hpp): the answer's event is the request's + 1, its
// fixed part is whole, the handle is echoed, and the declared tail sizes
// add up to the answer's length.
//
// Input: byte 0 picks the mode. Even: the rest is one datagram as recv()
// returns it (family id 0x20). Odd: byte 1 is the event number and the rest
// its payload, handed to the shim directly (most datagrams stop at the
// framing; this reaches the handlers with every payload).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "auth/ntlmssp.hpp"
#include "auth/user_db.hpp"
#include "common/log.hpp"
#include "config/config.hpp"
#include "kmod-shim/ksmbd_abi.hpp"
#include "kmod-shim/ksmbd_link.hpp"
#include "kmod-shim/ksmbd_shim.hpp"
#include "kmod-shim/ksmbd_structs.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::kmod;

constexpr int kFamily = 0x20;

struct World {
  std::string dir;
  std::unique_ptr<KsmbdShim> shim;
  World() {
    set_log_level(LogLevel::Error);  // refusals are logged at info level: not per input
    char tmpl[] = "/tmp/fuzz_ksmbd_shim.XXXXXX";
    dir = mkdtemp(tmpl);
    auth::UserDb db;
    db.upsert({"alice", "root", auth::nt_hash_from_password("secret-A1")});
    if (!db.save(dir + "/users.db")) abort();
    std::string text = "[global]\n users db = " + dir + "/users.db\n netbios name = FUZZ\n map to guest = bad user\n" +
                       "[data]\n path = " + dir + "\n writeable = yes\n veto files = /*.tmp/.secret/\n" +
                       "[docs]\n path = " + dir + "\n valid users = alice\n read only = yes\n";
    auto parsed = config::parse_config_text(text, "fuzz.conf");
    if (!parsed) abort();
    shim = std::make_unique<KsmbdShim>(parsed->config);
  }
};

uint32_t u32_at(ByteSpan b) {
  uint32_t v;
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

struct Sizes {
  size_t request, answer;  // the fixed parts
};

Sizes sizes_of(uint8_t event) {
  switch (event) {
    case abi::kLoginRequest: return {sizeof(abi::LoginRequest), sizeof(abi::LoginResponse)};
    case abi::kShareConfigRequest: return {sizeof(abi::ShareConfigRequest), sizeof(abi::ShareConfigResponse)};
    case abi::kTreeConnectRequest: return {sizeof(abi::TreeConnectRequest), sizeof(abi::TreeConnectResponse)};
    case abi::kRpcRequest: return {sizeof(abi::RpcCommand), sizeof(abi::RpcCommand)};
    case abi::kSpnegoAuthenRequest: return {sizeof(uint32_t), sizeof(abi::SpnegoAuthenResponse)};
    default: abort();  // no other event is answered
  }
}

// The checks the kernel applies to an answer (the attribute size policy of
// transport_ipc.c and its response validation, as ksmbd_abi.hpp describes
// them), and the handle echoed whenever the request carried one.
void check_answer(uint8_t event, ByteSpan request, const KernelReply& r) {
  if (r.event != event + 1) abort();
  Sizes sz = sizes_of(event);
  if (r.payload.size() < sz.answer) abort();
  if (request.size() >= sz.request && u32_at(r.payload) != u32_at(request)) abort();
  if (event == abi::kRpcRequest) {
    auto rpc = read_struct<abi::RpcCommand>(r.payload);
    if (r.payload.size() != sizeof(abi::RpcCommand) + rpc->payload_size) abort();
    if (rpc->payload_size > abi::kRpcMaxReply) abort();
  }
  if (event == abi::kShareConfigRequest) {
    auto sc = read_struct<abi::ShareConfigResponse>(r.payload);
    if (r.payload.size() != sizeof(abi::ShareConfigResponse) + sc->payload_size) abort();
    if (sc->veto_list_size > sc->payload_size) abort();
    if (strnlen(sc->share_name, sizeof sc->share_name) == sizeof sc->share_name) abort();
    // A disk share needs a path after the veto list.
    if (sc->flags != 0 && !(sc->flags & abi::kSharePipe) && sc->payload_size <= sc->veto_list_size) abort();
  }
  if (event == abi::kLoginRequest) {
    auto login = read_struct<abi::LoginResponse>(r.payload);
    if (login->hash_size > sizeof login->hash) abort();
  }
  if (event == abi::kSpnegoAuthenRequest) {
    auto sp = read_struct<abi::SpnegoAuthenResponse>(r.payload);
    if (r.payload.size() != sizeof(abi::SpnegoAuthenResponse) + sp->session_key_length + sp->blob_length) abort();
    if (sp->login.status & abi::kUserOk) abort();  // Kerberos is refused
  }
}

void handle(World& w, uint8_t event, ByteSpan payload) {
  auto reply = w.shim->handle(event, payload);
  if (reply) check_answer(event, payload, *reply);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World();
  if (size < 1) return 0;
  if ((data[0] & 1) == 0) {
    std::vector<KernelEvent> events;
    parse_datagram(ByteSpan(data + 1, size - 1), kFamily, events);
    for (const auto& ev : events) {
      // Each event's payload lies inside the datagram it came from.
      if (ev.payload.size() > size) abort();
      handle(*world, ev.event, ev.payload);
    }
    return 0;
  }
  if (size < 2) return 0;
  handle(*world, data[1], ByteSpan(data + 2, size - 2));
  return 0;
}
