#include <catch2/catch.hpp>

#include <pwd.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "auth/ntlmssp.hpp"
#include "auth/user_db.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/ctl_server.hpp"

using namespace ringsmb;
using namespace ringsmb::ipc;
using namespace ringsmb::ipc::abi;

namespace {

struct Fixture {
  std::string dir;
  std::string conf;
  config::Config cfg;

  Fixture() {
    char tmpl[] = "/tmp/ringsmb-ctl-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    conf = dir + "/ringsmb.conf";
    write_config("[data]\n  path = " + dir + "\n  writeable = yes\n");
    auth::UserDb db;
    struct passwd* pw = getpwuid(geteuid());
    db.upsert({"alice", pw ? pw->pw_name : "root", auth::nt_hash_from_password("pw")});
    REQUIRE(db.save(dir + "/users.db"));
  }
  ~Fixture() { std::filesystem::remove_all(dir); }

  void write_config(const std::string& shares) {
    std::ofstream(conf) << "[global]\n  users db = " << dir << "/users.db\n  state directory = " << dir << "\n"
                        << shares;
    auto parsed = config::parse_config_file(conf);
    REQUIRE(parsed);
    cfg = parsed->config;
  }
};

// Runs a request through CtlServer::handle and parses the single reply.
struct Exchange {
  std::vector<Outgoing> out;
  std::vector<uint32_t> aligned;
  std::optional<Message> reply;
  Exchange(CtlServer& s, const MsgBuilder& b, uint32_t from = 77) {
    std::vector<uint32_t> in(b.wire().size() / 4 + 1);
    memcpy(in.data(), b.wire().data(), b.wire().size());
    out = s.handle(reinterpret_cast<uint8_t*>(in.data()), b.wire().size(), from);
    if (out.empty()) return;
    aligned.resize(out.back().bytes.size() / 4 + 1);
    memcpy(aligned.data(), out.back().bytes.data(), out.back().bytes.size());
    auto m = parse_message(reinterpret_cast<uint8_t*>(aligned.data()), out.back().bytes.size());
    if (m) reply = *m;
  }
};

}  // namespace

TEST_CASE("ctld answers tree connects from the configuration", "[ipc]") {
  Fixture f;
  CtlServer s(f.conf, f.cfg);
  MsgBuilder b(CMD_TREE_CONNECT, 9, true);
  encode_tree_connect_request(b, {"DATA", "alice", false, ""});
  Exchange x(s, b);
  REQUIRE(x.reply);
  CHECK(x.reply->seq == 9);
  auto r = decode_tree_connect_reply(*x.reply);
  CHECK(r.status == NtStatus::Success);
  CHECK(r.share.path == f.dir);
  CHECK(r.writable);

  MsgBuilder b2(CMD_TREE_CONNECT, 10, true);
  encode_tree_connect_request(b2, {"nosuch", "alice", false, ""});
  Exchange x2(s, b2);
  REQUIRE(x2.reply);
  CHECK(decode_tree_connect_reply(*x2.reply).status == NtStatus::BadNetworkName);
}

TEST_CASE("ctld refuses a garbage login and rejects malformed requests silently", "[ipc]") {
  Fixture f;
  CtlServer s(f.conf, f.cfg);
  MsgBuilder b(CMD_LOGIN_EXT, 1, true);
  const uint8_t junk[16] = {};
  b.bytes(ATTR_SERVER_CHALLENGE, std::span(junk, 8)).bytes(ATTR_NTLM_CHALLENGE, junk).bytes(ATTR_NTLM_AUTHENTICATE, junk);
  Exchange x(s, b);
  REQUIRE(x.reply);
  CHECK(decode_login_reply(*x.reply).status != NtStatus::Success);

  MsgBuilder bad(CMD_LOGIN_EXT, 2, true);  // required attributes missing
  Exchange x2(s, bad);
  CHECK(x2.out.empty());
}

TEST_CASE("STARTING_UP checks the ABI version and registers the data plane", "[ipc]") {
  Fixture f;
  CtlServer s(f.conf, f.cfg);
  MsgBuilder wrong(CMD_STARTING_UP, 1, true);
  wrong.u32(ATTR_ABI_VERSION, kAbiVersion + 1).u32(ATTR_PID, 1).u32(ATTR_ROLE, ROLE_DATA_PLANE);
  Exchange x(s, wrong, 500);
  REQUIRE(x.reply);
  CHECK(NtStatus(x.reply->u32(ATTR_STATUS)) == NtStatus::NotSupported);
  CHECK(s.data_plane_port() == 0);

  MsgBuilder right(CMD_STARTING_UP, 2, true);
  right.u32(ATTR_ABI_VERSION, kAbiVersion).u32(ATTR_PID, 1).u32(ATTR_ROLE, ROLE_DATA_PLANE);
  Exchange x2(s, right, 500);
  REQUIRE(x2.reply);
  CHECK(NtStatus(x2.reply->u32(ATTR_STATUS)) == NtStatus::Success);
  CHECK(s.data_plane_port() == 500);
}

TEST_CASE("RELOAD picks up a new share; SHUTDOWN notifies the data plane", "[ipc]") {
  Fixture f;
  CtlServer s(f.conf, f.cfg);
  f.write_config("[other]\n  path = " + f.dir + "\n");
  MsgBuilder reload(CMD_RELOAD, 1, true);
  Exchange x(s, reload, 600);
  REQUIRE(x.reply);
  CHECK(NtStatus(x.reply->u32(ATTR_STATUS)) == NtStatus::Success);
  MsgBuilder tc(CMD_SHARE_CONFIG, 2, true);
  tc.str(ATTR_SHARE_NAME, "other");
  Exchange x2(s, tc);
  REQUIRE(x2.reply);
  CHECK(NtStatus(x2.reply->u32(ATTR_STATUS)) == NtStatus::Success);

  MsgBuilder start(CMD_STARTING_UP, 3, true);
  start.u32(ATTR_ABI_VERSION, kAbiVersion).u32(ATTR_PID, 1).u32(ATTR_ROLE, ROLE_DATA_PLANE);
  Exchange(s, start, 500);
  MsgBuilder stop(CMD_SHUTDOWN, 4, true);
  Exchange x3(s, stop, 600);
  REQUIRE(x3.out.size() == 2);
  CHECK(x3.out[0].port == 500);
  CHECK(x3.out[1].port == 600);
  CHECK(s.shutdown_requested());
}

TEST_CASE("the netlink control plane talks to a ctld found by its pid file", "[ipc]") {
  Fixture f;
  // A random high port stands in for ctld's pid, so it cannot collide with
  // the kernel's automatic port ids (this process's pid and negatives).
  std::mt19937 rng(std::random_device{}());
  uint32_t port = 0x40000000u + (rng() % 0x1000000u);
  auto sock = NlSocket::open(port);
  REQUIRE(sock);
  std::ofstream(f.dir + "/" + kPidFileName) << port << "\n";
  CtlServer server(f.conf, f.cfg);
  int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::thread t([&] { server.serve(*sock, efd, [&] { server.request_shutdown(); }); });
  {
    NetlinkOptions opts;  // no ctld_path: external ctld via the pid file
    opts.ready_timeout_ms = 3000;
    auto cp = make_netlink_control_plane(f.cfg, opts);
    REQUIRE(cp);
    auto tc = cp->tree_connect({"data", "alice", false, "127.0.0.1"});
    CHECK(tc.status == NtStatus::Success);
    CHECK(tc.share.path == f.dir);
    const uint8_t junk[16] = {};
    LoginRequest lr;
    lr.challenge_msg = junk;
    lr.authenticate_msg = junk;
    CHECK(cp->login(lr).status != NtStatus::Success);
  }
  uint64_t one = 1;
  REQUIRE(write(efd, &one, sizeof one) == sizeof one);
  t.join();
  close(efd);
}

TEST_CASE("ctld serves IPC$ pipes through RPC_*", "[ipc]") {
  Fixture f;
  CtlServer s(f.conf, f.cfg);
  MsgBuilder open(CMD_RPC_OPEN, 1, true);
  open.u32(ATTR_RPC_HANDLE, 5).str(ATTR_RPC_PIPE, "srvsvc").str(ATTR_ACCOUNT, "alice");
  Exchange x(s, open);
  REQUIRE(x.reply);
  CHECK(NtStatus(x.reply->u32(ATTR_STATUS)) == NtStatus::Success);

  MsgBuilder bad(CMD_RPC_OPEN, 2, true);
  bad.u32(ATTR_RPC_HANDLE, 6).str(ATTR_RPC_PIPE, "nosuchpipe").str(ATTR_ACCOUNT, "alice");
  Exchange x2(s, bad);
  REQUIRE(x2.reply);
  CHECK(NtStatus(x2.reply->u32(ATTR_STATUS)) == NtStatus::ObjectNameNotFound);

  MsgBuilder read(CMD_RPC_READ, 3, true);
  read.u32(ATTR_RPC_HANDLE, 5).u32(ATTR_RPC_MAX, 1024);
  Exchange x3(s, read);
  REQUIRE(x3.reply);
  CHECK(NtStatus(x3.reply->u32(ATTR_STATUS)) == NtStatus::Success);
  CHECK(x3.reply->bytes(ATTR_RPC_DATA).empty());  // nothing written yet

  MsgBuilder close(CMD_RPC_CLOSE, 4, true);
  close.u32(ATTR_RPC_HANDLE, 5);
  Exchange x4(s, close);
  MsgBuilder again(CMD_RPC_READ, 5, true);
  again.u32(ATTR_RPC_HANDLE, 5).u32(ATTR_RPC_MAX, 1024);
  Exchange x5(s, again);
  REQUIRE(x5.reply);
  CHECK(NtStatus(x5.reply->u32(ATTR_STATUS)) == NtStatus::InvalidHandle);
}
