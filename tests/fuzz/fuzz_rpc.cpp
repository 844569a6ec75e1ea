// libFuzzer target for the IPC$ DCE/RPC layer. For each pipe it
//  1. writes the input as raw pipe bytes (PDU framing, bind parsing), and
//  2. binds properly, then sends the input as the stub of a request whose
//     opnum is the first input byte (every NDR decoder of every interface).
// Build with -DRINGSMB_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"
#include "rpc/pipe.hpp"
#include "rpc/client_pdus.hpp"  // tests/unit: build_request

namespace {

using namespace ringsmb;
using namespace ringsmb::rpc;
using rpc_test::build_request;

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
  std::vector<Account> smb_users() const override { return {Account{"alice", 1001, true}}; }
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
  const SyntaxId ndr = ndr20_syntax();
  for (const SyntaxId* s : {&iface, &ndr}) {
    w.bytes(s->uuid.bytes.data(), 16);
    w.u16(s->major);
    w.u16(s->minor);
  }
  w.patch_u16(8, uint16_t(out.size()));
  return out;
}

// Runs one call and returns the context handle at `offset` in its reply
// stub, so the fuzzed stubs can start with a handle that is really open.
PolicyHandle open_handle(RpcPipe& p, uint16_t opnum, const Bytes& stub, size_t offset = 0) {
  PolicyHandle h;
  (void)p.write(build_request(1, 0, opnum, stub));
  bool more = false;
  Bytes reply = p.read(65536, more);
  if (reply.size() >= kResponseHeaderSize + offset + 20 && reply[2] == uint8_t(PduType::Response)) {
    std::copy_n(reply.begin() + kResponseHeaderSize + offset, 20, h.bytes.begin());
  }
  return h;
}

// Handles a fuzzed stub may use: an LSA policy, or a SAMR server, domain
// and user handle.
std::vector<PolicyHandle> open_handles(RpcPipe& p, const std::string& name, const Identity& id) {
  Bytes stub;
  NdrWriter w(stub);
  w.pointer(false);  // SystemName / ServerName
  if (name == "lsarpc") {
    w.u32(24), w.u32(0), w.u32(0), w.u32(0), w.u32(0), w.u32(0);  // ObjectAttributes, all NULL
    w.u32(0x02000000);
    return {open_handle(p, 44, stub)};
  }
  w.u32(0x02000000);
  if (name != "samr") return {};
  PolicyHandle server = open_handle(p, 57, stub);
  Bytes dom;
  NdrWriter dw(dom);
  dw.handle(server);
  dw.u32(0x02000000);
  dw.sid(id.machine_sid);
  PolicyHandle domain = open_handle(p, 7, dom);
  Bytes usr;
  NdrWriter uw(usr);
  uw.handle(domain);
  uw.u32(0x02000000);
  uw.u32(2001);
  return {server, domain, open_handle(p, 34, usr)};
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
    auto handles = open_handles(*p, pipes[i], make_identity(fuzz_config(), accounts.get()));
    uint16_t opnum = data[0];
    Bytes stub;
    // With a handle-taking interface, the second byte picks whether (and
    // which) open handle replaces the stub's first 20 bytes.
    ByteSpan rest = in.subspan(1);
    if (!handles.empty() && !rest.empty() && rest[0] < handles.size()) {
      const auto& h = handles[rest[0]].bytes;
      stub.assign(h.begin(), h.end());
      rest = rest.subspan(1);
    }
    stub.insert(stub.end(), rest.begin(), rest.end());
    (void)p->write(build_request(2, 0, opnum, stub));
    drain(*p);
  }
  return 0;
}
