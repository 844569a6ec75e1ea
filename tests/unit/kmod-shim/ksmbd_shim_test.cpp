// kmod-shim without a kernel: the ksmbd events a module would send, as raw
// payloads, and the answers the shim gives (kmod-shim/ksmbd_abi.hpp).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "auth/ntlmssp.hpp"
#include "auth/user_db.hpp"
#include "config/config.hpp"
#include "kmod-shim/ksmbd_abi.hpp"
#include "kmod-shim/ksmbd_shim.hpp"
#include "kmod-shim/ksmbd_structs.hpp"
#include "rpc/interface.hpp"

using namespace ringsmb;
using namespace ringsmb::kmod;

namespace {

struct Fixture {
  std::string dir;
  config::Config cfg;

  explicit Fixture(const std::string& extra_share_lines = "", const std::string& extra_global = "") {
    char tmpl[] = "/tmp/kmod-shim-test.XXXXXX";
    dir = mkdtemp(tmpl);
    auth::UserDb db;
    db.upsert({"alice", "root", auth::nt_hash_from_password("secret-A1")});
    db.upsert({"nouser", "no-such-unix-user-xyz", auth::nt_hash_from_password("x")});
    REQUIRE(db.save(dir + "/users.db"));
    std::string text = "[global]\n users db = " + dir + "/users.db\n netbios name = KTEST\n" + extra_global +
                       "\n[data]\n path = " + dir + "\n writeable = yes\n veto files = /*.tmp/.secret/\n" +
                       extra_share_lines + "\n[docs]\n path = " + dir + "\n valid users = bob\n";
    auto parsed = config::parse_config_text(text, "test.conf");
    REQUIRE(parsed);
    cfg = parsed->config;
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
};

template <typename T>
T reply_as(const std::optional<KernelReply>& r, uint8_t event) {
  REQUIRE(r);
  CHECK(r->event == event);
  auto s = read_struct<T>(r->payload);
  REQUIRE(s);
  return *s;
}

Bytes login_request(uint32_t handle, const char* account) {
  auto req = zeroed<abi::LoginRequest>();
  req.handle = handle;
  put_string(req.account, account);
  return struct_bytes(req);
}

Bytes share_request(uint32_t handle, const char* name) {
  auto req = zeroed<abi::ShareConfigRequest>();
  req.handle = handle;
  put_string(req.share_name, name);
  return struct_bytes(req);
}

Bytes tree_request(uint32_t handle, const char* account, const char* share, uint16_t account_flags = abi::kUserOk) {
  auto req = zeroed<abi::TreeConnectRequest>();
  req.handle = handle;
  req.account_flags = account_flags;
  put_string(req.account, account);
  put_string(req.share, share);
  put_string(req.peer_address, "192.0.2.7");
  return struct_bytes(req);
}

}  // namespace

TEST_CASE("ksmbd login: the NT hash and the Unix ids of a known user, BAD_USER or BAD_UID otherwise", "[kmod]") {
  Fixture f;
  KsmbdShim shim(f.cfg);
  auto ok = reply_as<abi::LoginResponse>(shim.handle(abi::kLoginRequest, login_request(7, "ALICE")), abi::kLoginResponse);
  CHECK(ok.handle == 7);
  CHECK(ok.status == abi::kUserOk);
  CHECK(ok.uid == 0);
  CHECK(ok.hash_size == 16);
  auto h = auth::nt_hash_from_password("secret-A1");
  CHECK(std::memcmp(ok.hash, h.data(), 16) == 0);
  auto unknown = reply_as<abi::LoginResponse>(shim.handle(abi::kLoginRequest, login_request(8, "mallory")),
                                              abi::kLoginResponse);
  CHECK(unknown.handle == 8);
  CHECK(unknown.status == abi::kUserBadUser);
  CHECK(unknown.hash_size == 0);
  auto bad_uid = reply_as<abi::LoginResponse>(shim.handle(abi::kLoginRequest, login_request(9, "nouser")),
                                              abi::kLoginResponse);
  CHECK(bad_uid.status == abi::kUserBadUid);
  CHECK(bad_uid.hash_size == 0);
}

TEST_CASE("ksmbd login: map to guest = bad user gives the guest account without a hash", "[kmod]") {
  Fixture f("", " map to guest = bad user\n guest account = nobody\n");
  KsmbdShim shim(f.cfg);
  auto g = reply_as<abi::LoginResponse>(shim.handle(abi::kLoginRequest, login_request(1, "mallory")), abi::kLoginResponse);
  CHECK(g.status == (abi::kUserOk | abi::kUserGuestAccount));
  CHECK(g.uid == 65534);
  CHECK(g.hash_size == 0);
}

TEST_CASE("ksmbd share config: flags, masks, veto list and path in the tail, sizes that add up", "[kmod]") {
  Fixture f(" create mask = 0640\n hide dot files = no\n");
  KsmbdShim shim(f.cfg);
  auto r = shim.handle(abi::kShareConfigRequest, share_request(3, "DATA"));
  auto resp = reply_as<abi::ShareConfigResponse>(r, abi::kShareConfigResponse);
  CHECK(resp.handle == 3);
  CHECK((resp.flags & abi::kShareAvailable));
  CHECK((resp.flags & abi::kShareWriteable));
  CHECK_FALSE((resp.flags & abi::kShareReadonly));
  CHECK_FALSE((resp.flags & abi::kShareHideDotFiles));
  CHECK(resp.create_mask == 0640);
  CHECK(resp.force_uid == abi::kNoForcedId);
  REQUIRE(r->payload.size() == sizeof(abi::ShareConfigResponse) + resp.payload_size);
  std::string tail(r->payload.begin() + sizeof(abi::ShareConfigResponse), r->payload.end());
  std::string veto("*.tmp\0.secret", 13);
  CHECK(resp.veto_list_size == veto.size());
  CHECK(tail == veto + std::string(1, '\0') + f.dir + std::string(1, '\0'));

  auto ipc = reply_as<abi::ShareConfigResponse>(shim.handle(abi::kShareConfigRequest, share_request(4, "ipc$")),
                                                abi::kShareConfigResponse);
  CHECK((ipc.flags & abi::kSharePipe));
  auto none = reply_as<abi::ShareConfigResponse>(shim.handle(abi::kShareConfigRequest, share_request(5, "nosuch")),
                                                 abi::kShareConfigResponse);
  CHECK(none.flags == 0);
}

TEST_CASE("ksmbd tree connect: the policy engine decides; a reload asks for a fresh share config once", "[kmod]") {
  Fixture f;
  KsmbdShim shim(f.cfg);
  auto ok = reply_as<abi::TreeConnectResponse>(shim.handle(abi::kTreeConnectRequest, tree_request(1, "alice", "data")),
                                               abi::kTreeConnectResponse);
  CHECK(ok.handle == 1);
  CHECK(ok.status == abi::kTreeOk);
  CHECK(ok.connection_flags == abi::kTreeWritable);
  auto denied = reply_as<abi::TreeConnectResponse>(
      shim.handle(abi::kTreeConnectRequest, tree_request(2, "alice", "docs")), abi::kTreeConnectResponse);
  CHECK(denied.status == abi::kTreeInvalidUser);
  auto missing = reply_as<abi::TreeConnectResponse>(
      shim.handle(abi::kTreeConnectRequest, tree_request(3, "alice", "nosuch")), abi::kTreeConnectResponse);
  CHECK(missing.status == abi::kTreeNoShare);

  shim.reload(f.cfg);
  auto first = reply_as<abi::TreeConnectResponse>(
      shim.handle(abi::kTreeConnectRequest, tree_request(4, "alice", "DATA")), abi::kTreeConnectResponse);
  CHECK((first.connection_flags & abi::kTreeUpdate));
  auto second = reply_as<abi::TreeConnectResponse>(
      shim.handle(abi::kTreeConnectRequest, tree_request(5, "alice", "data")), abi::kTreeConnectResponse);
  CHECK_FALSE((second.connection_flags & abi::kTreeUpdate));
}

TEST_CASE("ksmbd RPC: pipes by flag; unknown pipes and handles get ksmbd's error numbers", "[kmod]") {
  Fixture f;
  KsmbdShim shim(f.cfg);
  auto cmd = [](uint32_t handle, uint32_t flags) {
    auto c = zeroed<abi::RpcCommand>();
    c.handle = handle;
    c.flags = flags;
    return struct_bytes(c);
  };
  auto open = shim.handle(abi::kRpcRequest, cmd(11, abi::kRpcOpen | abi::kRpcSrvsvc));
  auto o = reply_as<abi::RpcCommand>(open, abi::kRpcResponse);
  CHECK(o.handle == 11);
  CHECK(o.flags == abi::kRpcOk);
  CHECK(open->payload.size() == sizeof(abi::RpcCommand) + o.payload_size);
  auto nopipe = reply_as<abi::RpcCommand>(shim.handle(abi::kRpcRequest, cmd(12, abi::kRpcOpen)), abi::kRpcResponse);
  CHECK(nopipe.flags == abi::kRpcNotImplemented);
  auto badfid = reply_as<abi::RpcCommand>(shim.handle(abi::kRpcRequest, cmd(99, abi::kRpcRead | abi::kRpcReturn)),
                                          abi::kRpcResponse);
  CHECK(badfid.flags == abi::kRpcBadFid);
  auto rap = reply_as<abi::RpcCommand>(shim.handle(abi::kRpcRequest, cmd(13, abi::kRpcRap)), abi::kRpcResponse);
  CHECK(rap.flags == abi::kRpcNotImplemented);
  auto closed = reply_as<abi::RpcCommand>(shim.handle(abi::kRpcRequest, cmd(11, abi::kRpcClose | abi::kRpcSrvsvc)),
                                          abi::kRpcResponse);
  CHECK(closed.flags == abi::kRpcOk);
}

TEST_CASE("ksmbd: short payloads, heartbeats and one-way events get no answer or an empty one, never a crash", "[kmod]") {
  Fixture f;
  KsmbdShim shim(f.cfg);
  CHECK_FALSE(shim.handle(abi::kHeartbeatRequest, Bytes(4)));
  CHECK_FALSE(shim.handle(abi::kLogoutRequest, Bytes(3)));
  CHECK_FALSE(shim.handle(abi::kTreeDisconnectRequest, Bytes(1)));
  CHECK_FALSE(shim.handle(200, Bytes(10)));
  auto r = shim.handle(abi::kLoginRequest, Bytes(2));
  REQUIRE(r);
  CHECK(reply_as<abi::LoginResponse>(r, abi::kLoginResponse).status == 0);
  auto spnego = reply_as<abi::SpnegoAuthenResponse>(shim.handle(abi::kSpnegoAuthenRequest, Bytes{5, 0, 0, 0, 0, 0}),
                                                    abi::kSpnegoAuthenResponse);
  CHECK(spnego.handle == 5);
  CHECK_FALSE((spnego.login.status & abi::kUserOk));
}

TEST_CASE("ksmbd STARTING_UP from [global]; options ksmbd cannot honour are reported", "[kmod]") {
  Fixture f(" case sensitive = yes\n smb3 encryption = required\n",
            " server signing = mandatory\n server min protocol = SMB3_00\n tcp port = 4455 445\n");
  std::vector<std::string> warnings;
  Bytes b = make_startup_request(f.cfg, warnings);
  REQUIRE(b.size() == sizeof(abi::StartupRequest));
  auto req = *read_struct<abi::StartupRequest>(b);
  CHECK(req.signing == abi::kOptMandatory);
  CHECK(get_string(req.min_protocol) == "SMB3_00");
  CHECK(get_string(req.max_protocol) == "SMB3_11");
  CHECK(get_string(req.netbios_name) == "KTEST");
  CHECK(req.tcp_port == 4455);
  CHECK(req.ifc_list_size == 0);
  CHECK(req.file_max > 0);  // 0 makes the module refuse every open
  auto sid = rpc::derive_machine_sid("KTEST");
  CHECK(req.domain_sub_auth[0] == sid.sub[1]);
  CHECK(req.domain_sub_auth[2] == sid.sub[3]);
  auto has = [&](const char* text) {
    for (const auto& w : warnings)
      if (w.find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(has("[data] case sensitive"));
  CHECK(has("[data] smb3 encryption"));
  CHECK(has("tcp port"));
  CHECK_FALSE(has("[docs]"));
}

TEST_CASE("ksmbd keeps its own sizes, limits and leases unless the admin set them", "[kmod]") {
  std::vector<std::string> warnings;
  SECTION("not set: ksmbd's defaults, not ringsmbd's (8 MiB max trans, 2048 connections, leases on)") {
    Fixture f("", "");
    auto req = *read_struct<abi::StartupRequest>(make_startup_request(f.cfg, warnings));
    CHECK(req.smb2_max_trans == 0);  // 0: the module's own (1 MiB)
    CHECK(req.smb2_max_read == 0);
    CHECK(req.smb2_max_write == 0);
    CHECK(req.smb2_max_credits == 0);
    CHECK(req.max_connections == 256);
    CHECK(req.file_max == 10000);
    CHECK(req.share_fake_fscaps == 0x40);
    CHECK((req.flags & abi::kGlobalLeases) == 0);
  }
  SECTION("set: passed as given, even where equal to ringsmbd's default") {
    Fixture f(" smb2 leases = yes\n", " smb2 max trans = 65536\n smb2 max read = 8388608\n smb2 max credits = 512\n"
              " max connections = 2048\n max open files = 50000\n");
    auto req = *read_struct<abi::StartupRequest>(make_startup_request(f.cfg, warnings));
    CHECK(req.smb2_max_trans == 65536);
    CHECK(req.smb2_max_read == 8388608);
    CHECK(req.smb2_max_write == 0);
    CHECK(req.smb2_max_credits == 512);
    CHECK(req.max_connections == 2048);
    CHECK(req.file_max == 50000);
    CHECK((req.flags & abi::kGlobalLeases) != 0);
  }
  SECTION("leases named in [global] count for every share; a share that turns them off is told they stay on") {
    Fixture f(" smb2 leases = no\n", " smb2 leases = yes\n");
    auto req = *read_struct<abi::StartupRequest>(make_startup_request(f.cfg, warnings));
    CHECK((req.flags & abi::kGlobalLeases) != 0);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].starts_with("[data] smb2 leases = no"));
  }
}
