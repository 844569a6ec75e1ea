// A minimal DCE/RPC client for the rpc tests: builds bind and request PDUs
// the way Windows does, feeds them to an RpcPipe in chosen write sizes and
// reassembles the response.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>

#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"
#include "rpc/pipe.hpp"
#include "client_pdus.hpp"

namespace rpc_test {

using namespace ringsmb;
using namespace ringsmb::rpc;

// alice is in the user database (uid 1001), bob is a Unix login only.
class FakeAccounts final : public AccountSource {
 public:
  std::optional<Account> user_by_name(std::string_view name) const override {
    if (iequals(name, "alice")) return Account{"alice", 1001, true};
    if (iequals(name, "bob")) return Account{"bob", 1002, false};
    return std::nullopt;
  }
  std::optional<Account> user_by_uid(uint32_t uid) const override {
    if (uid == 1001) return Account{"alice", 1001, true};
    if (uid == 1002) return Account{"bob", 1002, false};
    return std::nullopt;
  }
  std::optional<uint32_t> group_by_name(std::string_view name) const override {
    if (iequals(name, "staff")) return 50;
    return std::nullopt;
  }
  std::optional<std::string> group_by_gid(uint32_t gid) const override {
    if (gid == 50) return std::string("staff");
    return std::nullopt;
  }
  // carol maps to alice's Unix user: one account, listed once.
  std::vector<Account> smb_users() const override {
    return {Account{"alice", 1001, true}, Account{"carol", 1001, true}};
  }
};

inline config::Config test_config(int extra_shares = 0) {
  config::Config cfg;
  cfg.global.netbios_name = "TestSrv";
  cfg.global.workgroup = "TestGroup";
  cfg.global.server_string = "ringsmb test";
  cfg.global.admin_users = {"alice"};  // the default Client user sees share paths
  config::ShareConfig data;
  data.name = "data";
  data.path = "/srv/data";
  data.comment = "Team data";
  cfg.shares.push_back(data);
  config::ShareConfig hidden = data;
  hidden.name = "secret";
  hidden.browseable = false;
  cfg.shares.push_back(hidden);
  for (int i = 0; i < extra_shares; ++i) {
    config::ShareConfig s = data;
    s.name = "share" + std::to_string(i);
    s.comment = "extra share number " + std::to_string(i);
    cfg.shares.push_back(s);
  }
  return cfg;
}

inline SyntaxId iface_syntax(const std::string& pipe) {
  if (pipe == "srvsvc") return srvsvc_interface().syntax;
  if (pipe == "wkssvc") return wkssvc_interface().syntax;
  if (pipe == "samr") return samr_interface().syntax;
  return lsarpc_interface().syntax;
}

inline void put_syntax(ByteWriter& w, const SyntaxId& s) {
  w.bytes(s.uuid.bytes.data(), 16);
  w.u16(s.major);
  w.u16(s.minor);
}

// A bind with one context element per (abstract, transfer) pair, as
// Windows 10 sends it: NDR, NDR64, then the feature negotiation element.
inline Bytes build_bind(uint32_t call_id, const std::vector<std::pair<SyntaxId, SyntaxId>>& ctxs,
                        uint16_t max_recv = 4280, PduType type = PduType::Bind, uint16_t auth_length = 0) {
  Bytes out;
  ByteWriter w(out);
  w.u8(5), w.u8(0), w.u8(uint8_t(type)), w.u8(kPfcFirstFrag | kPfcLastFrag);
  w.u32(0x10);
  w.u16(0), w.u16(auth_length);
  w.u32(call_id);
  w.u16(4280), w.u16(max_recv);
  w.u32(0);  // assoc_group: a new one
  w.u8(uint8_t(ctxs.size())), w.u8(0), w.u16(0);
  uint16_t id = 0;
  for (const auto& [abs, tr] : ctxs) {
    w.u16(id++), w.u8(1), w.u8(0);
    put_syntax(w, abs);
    put_syntax(w, tr);
  }
  w.patch_u16(8, uint16_t(out.size()));
  return out;
}

// The stub of a call that takes a handle and an info level (LSA
// QueryInfoPolicy, SAMR QueryInformationUser, ...).
inline Bytes handle_level_stub(const PolicyHandle& h, uint16_t level) {
  Bytes out;
  NdrWriter w(out);
  w.handle(h);
  w.u16(level);
  return out;
}

inline SyntaxId feature_syntax(uint8_t bits) {
  SyntaxId s{Uuid::parse("6cb71c2c-9812-4540-0000-000000000000"), 1, 0};
  s.uuid.bytes[8] = bits;
  return s;
}

struct Reply {
  PduType type = PduType::Response;
  uint8_t flags = 0;
  uint32_t fault = 0;
  Bytes stub;       // reassembled response stub
  Bytes raw;        // every PDU concatenated
  size_t fragments = 0;
};

class Client {
 public:
  explicit Client(const std::string& pipe, size_t chunk = 0, std::string user = "alice", bool guest = false)
      : pipe_name_(pipe), chunk_(chunk), cfg_(test_config()) {
    init(user, guest);
  }
  Client(const std::string& pipe, config::Config cfg, size_t chunk = 0, const std::string& user = "alice",
         const std::string& home_share = {})
      : pipe_name_(pipe), chunk_(chunk), cfg_(std::move(cfg)) {
    init(user, false, home_share);
  }

  // Writes `data` in chunk_-sized pieces (all at once when 0).
  bool write(ByteSpan data) {
    size_t step = chunk_ ? chunk_ : data.size();
    bool ok = true;
    for (size_t off = 0; off < data.size(); off += step) {
      ok = pipe->write(data.subspan(off, std::min(step, data.size() - off))) && ok;
    }
    return ok;
  }

  // Reads PDUs until one with PFC_LAST_FRAG (or a non-response).
  Reply collect() {
    Reply rep;
    while (pipe->pending_bytes() > 0) {
      Bytes pdu = read_message();
      rep.raw.insert(rep.raw.end(), pdu.begin(), pdu.end());
      auto h = parse_header(pdu);
      REQUIRE(h);
      REQUIRE(h->frag_length == pdu.size());
      rep.type = h->type;
      rep.flags |= h->flags;
      ++rep.fragments;
      if (h->type == PduType::Fault) rep.fault = load_le32(&pdu[24]);
      if (h->type == PduType::Response) rep.stub.insert(rep.stub.end(), pdu.begin() + 24, pdu.end());
      if (h->flags & kPfcLastFrag) break;
    }
    return rep;
  }

  Reply bind(uint16_t max_recv = 4280) {
    auto s = iface_syntax(pipe_name_);
    REQUIRE(write(build_bind(next_call_++, {{s, ndr20_syntax()}}, max_recv)));
    return collect();
  }

  Reply call(uint16_t opnum, const Bytes& stub, uint16_t ctx_id = 0) {
    REQUIRE(write(build_request(next_call_++, ctx_id, opnum, stub)));
    return collect();
  }

  std::unique_ptr<RpcPipe> pipe;

 private:
  void init(const std::string& user, bool guest, const std::string& home_share = {}) {
    RpcContext ctx{&cfg_, user, guest, std::make_shared<FakeAccounts>(), home_share};
    pipe = RpcPipe::open(pipe_name_, ctx);
    REQUIRE(pipe);
  }
  // One message, read in small pieces to exercise partial reads.
  Bytes read_message() {
    Bytes msg;
    bool more = true;
    while (more) {
      Bytes part = pipe->read(chunk_ ? chunk_ : 65536, more);
      msg.insert(msg.end(), part.begin(), part.end());
      if (part.empty()) break;
    }
    return msg;
  }

  std::string pipe_name_;
  size_t chunk_;
  config::Config cfg_;
  uint32_t next_call_ = 1;
};

inline const size_t kChunkSizes[] = {0, 1, 2, 5, 100};

// Writes a RPC_UNICODE_STRING array element-wise as a client does.
inline void put_unicode_strings(NdrWriter& w, const std::vector<std::string>& names) {
  for (const auto& n : names) w.unicode_string(n);
  w.flush();
}

}  // namespace rpc_test
