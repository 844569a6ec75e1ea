// libFuzzer target for the IPC$ DCE/RPC layer. For each pipe it
//  1. writes the input as raw pipe bytes (PDU framing, bind parsing), and
//  2. binds properly, then sends the input as the stub of a request whose
//     opnum is the first input byte (every NDR decoder of every interface).
// Build with -DRINGSMB_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>

#include "config/config.hpp"
#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"
#include "rpc/pipe.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::rpc;

// Accounts without touching /etc/passwd or a user database.
class NoAccounts final : public AccountSource {
 public:
  std::optional<Account> user_by_name(std::string_view n) const override {
    if (n == "alice") return Account{"alice", 1001, true};
    return std::nullopt;
  }
  std::optional<Account> user_by_uid(uint32_t uid) const override {
    if (uid == 1001) return Account{"alice", 1001, true};
    return std::nullopt;
  }
  std::optional<uint32_t> group_by_name(std::string_view) const override { return std::nullopt; }
  std::optional<std::string> group_by_gid(uint32_t) const override { return std::nullopt; }
};

const config::Config& fuzz_config() {
  static const config::Config cfg = [] {
    config::Config c;
    config::ShareConfig s;
    s.name = "data";
    s.path = "/srv/data";
    c.shares.push_back(s);
    return c;
  }();
  return cfg;
}

Bytes bind_pdu(const SyntaxId& iface) {
  Bytes out;
  ByteWriter w(out);
  w.u8(5), w.u8(0), w.u8(uint8_t(PduType::Bind)), w.u8(kPfcFirstFrag | kPfcLastFrag);
  w.u32(0x10);
  w.u16(0), w.u16(0);
  w.u32(1);
  w.u16(4280), w.u16(4280);
  w.u32(0);
  w.u8(1), w.u8(0), w.u16(0);
  w.u16(0), w.u8(1), w.u8(0);
  auto ndr = ndr20_syntax();
  for (const SyntaxId* s : {&iface, &ndr}) {
    w.bytes(s->uuid.bytes.data(), 16);
    w.u16(s->major);
    w.u16(s->minor);
  }
  w.patch_u16(8, uint16_t(out.size()));
  return out;
}

void drain(RpcPipe& p) {
  bool more = false;
  while (p.pending_bytes() > 0) {
    if (p.read(4096, more).empty()) break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto accounts = std::make_shared<NoAccounts>();
  RpcContext ctx{&fuzz_config(), "alice", false, accounts};
  ByteSpan in(data, size);
  for (const char* name : {"srvsvc", "wkssvc", "lsarpc", "samr"}) {
    auto raw = RpcPipe::open(name, ctx);
    (void)raw->write(in);
    drain(*raw);
  }
  if (size < 1 || size > 60000) return 0;
  const RpcInterface* ifaces[] = {&srvsvc_interface(), &wkssvc_interface(), &lsarpc_interface(),
                                  &samr_interface()};
  const char* pipes[] = {"srvsvc", "wkssvc", "lsarpc", "samr"};
  for (int i = 0; i < 4; ++i) {
    auto p = RpcPipe::open(pipes[i], ctx);
    (void)p->write(bind_pdu(ifaces[i]->syntax));
    drain(*p);
    uint16_t opnum = data[0];
    (void)p->write(build_request(2, 0, opnum, in.subspan(1)));
    drain(*p);
  }
  return 0;
}
