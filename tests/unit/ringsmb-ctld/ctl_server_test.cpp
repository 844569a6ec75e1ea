#include <catch2/catch.hpp>

#include <pwd.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <fstream>
#include <random>
#include <thread>

#include "auth/ntlmssp.hpp"
#include "auth/user_db.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/netlink_control_plane.hpp"
#include "common/log.hpp"
#include "ringsmb-ctld/ctl_server.hpp"

using namespace ringsmb;
using namespace ringsmb::ipc;
using namespace ringsmb::ctld;
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

TEST_CASE("RELOAD answers with the file's warnings and applies its log level; DEBUG; LIST_* go to ringsmbd",
          "[ipc]") {
  Fixture f;
  CtlServer s(f.conf, f.cfg);
  int saved = log_level_setting();
  f.write_config("  log level = 0\n[other]\n  path = " + f.dir + "\n  bogus key = 1\n");
  MsgBuilder reload(CMD_RELOAD, 1, true);
  Exchange x(s, reload);
  REQUIRE(x.reply);
  CHECK(NtStatus(x.reply->u32(ATTR_STATUS)) == NtStatus::Success);
  CHECK(x.reply->str(ATTR_TEXT) == f.conf + ":7: unknown key 'bogus key' in [other]");
  CHECK(log_level_setting() == 0);

  MsgBuilder debug(CMD_DEBUG, 2, true);
  debug.u32(ATTR_LOG_LEVEL, 2);
  Exchange x2(s, debug);
  REQUIRE(x2.reply);
  CHECK(NtStatus(x2.reply->u32(ATTR_STATUS)) == NtStatus::Success);
  CHECK(x2.reply->u32(ATTR_LOG_LEVEL) == 2);

  for (Cmd cmd : {CMD_LIST_CONNECTIONS, CMD_LIST_SESSIONS, CMD_LIST_OPEN_FILES, CMD_CLOSE_SESSION, CMD_GET_METRICS}) {
    MsgBuilder list(cmd, 3, true);
    if (cmd == CMD_CLOSE_SESSION) list.u64(ATTR_SESSION_ID, 1);
    Exchange x3(s, list);
    REQUIRE(x3.reply);
    CHECK(NtStatus(x3.reply->u32(ATTR_STATUS)) == NtStatus::NotSupported);
  }
  set_log_level(saved);
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

namespace {

// A CtlServer serving a netlink socket on a thread of its own, found as an
// external ctld through the port file in the fixture's state directory, and
// the data plane's netlink control plane talking to it. The port is one the
// kernel chooses, as ringsmb-ctld's is.
struct ServedCtld {
  std::unique_ptr<ControlPlane> control;

  explicit ServedCtld(const Fixture& f) : server_(f.conf, f.cfg) {
    auto sock = NlSocket::open(0);
    REQUIRE(sock);
    sock_ = std::move(*sock);
    std::string error;
    REQUIRE(write_port_file(f.dir + "/" + kCtldPortFileName, sock_->port(), error));
    stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    thread_ = std::thread([this] { server_.serve(*sock_, stop_fd_, [this] { server_.request_shutdown(); }); });
    NetlinkOptions opts;  // no ctld_path: an external ctld, via the port file
    opts.ready_timeout_ms = 3000;
    control = make_netlink_control_plane(f.cfg, opts);
    REQUIRE(control);
  }
  ~ServedCtld() {
    control.reset();
    uint64_t one = 1;
    CHECK(write(stop_fd_, &one, sizeof one) == sizeof one);
    thread_.join();
    close(stop_fd_);
  }

 private:
  CtlServer server_;
  std::optional<NlSocket> sock_;
  int stop_fd_ = -1;
  std::thread thread_;
};

}  // namespace

TEST_CASE("the netlink control plane talks to a ctld found by its port file", "[ipc]") {
  Fixture f;
  ServedCtld served(f);
  {
    auto& cp = served.control;
    auto tc = cp->tree_connect({"data", "alice", false, "127.0.0.1"});
    CHECK(tc.status == NtStatus::Success);
    CHECK(tc.share.path == f.dir);
    const uint8_t junk[16] = {};
    LoginRequest lr;
    lr.challenge_msg = junk;
    lr.authenticate_msg = junk;
    CHECK(cp->login(lr).status != NtStatus::Success);
  }
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

namespace {

Bytes rpc_open(CtlServer& s, uint32_t handle, uint32_t seq) {
  MsgBuilder open(CMD_RPC_OPEN, seq, true);
  open.u32(ATTR_RPC_HANDLE, handle).str(ATTR_RPC_PIPE, "srvsvc").str(ATTR_ACCOUNT, "alice");
  Exchange x(s, open);
  REQUIRE(x.reply);
  CHECK(NtStatus(x.reply->u32(ATTR_STATUS)) == NtStatus::Success);
  return {};
}

NtStatus rpc_read_status(CtlServer& s, uint32_t handle, uint32_t seq) {
  MsgBuilder read(CMD_RPC_READ, seq, true);
  read.u32(ATTR_RPC_HANDLE, handle).u32(ATTR_RPC_MAX, 64);
  Exchange x(s, read);
  REQUIRE(x.reply);
  return NtStatus(x.reply->u32(ATTR_STATUS));
}

void register_data_plane(CtlServer& s, uint32_t pid, uint32_t seq) {
  MsgBuilder start(CMD_STARTING_UP, seq, true);
  start.u32(ATTR_ABI_VERSION, kAbiVersion).u32(ATTR_PID, pid).u32(ATTR_ROLE, ROLE_DATA_PLANE);
  Exchange x(s, start, 500);
  REQUIRE(x.reply);
}

// A DCE/RPC bind for srvsvc (NDR 2.0), as one PDU.
Bytes srvsvc_bind_pdu() {
  static const uint8_t kSrvsvc[16] = {0xc8, 0x4f, 0x32, 0x4b, 0x70, 0x16, 0xd3, 0x01,
                                      0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88};
  static const uint8_t kNdr[16] = {0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
                                   0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60};
  Bytes out;
  ByteWriter w(out);
  w.u8(5), w.u8(0), w.u8(11), w.u8(3);
  w.u32(0x10);
  w.u16(72), w.u16(0);
  w.u32(1);
  w.u16(4280), w.u16(4280);
  w.u32(0);
  w.u8(1), w.u8(0), w.u16(0);
  w.u16(0), w.u8(1), w.u8(0);
  w.bytes(kSrvsvc, 16);
  w.u16(3), w.u16(0);
  w.bytes(kNdr, 16);
  w.u16(2), w.u16(0);
  return out;
}

}  // namespace

TEST_CASE("ctld drops its pipes when another data plane registers, not when the same one does", "[ipc]") {
  Fixture f;
  CtlServer s(f.conf, f.cfg);
  register_data_plane(s, 100, 1);
  rpc_open(s, 7, 2);
  register_data_plane(s, 100, 3);  // the same ringsmbd after a lost link
  CHECK(rpc_read_status(s, 7, 4) == NtStatus::Success);
  register_data_plane(s, 101, 5);  // a new ringsmbd: the old one's handles are dead
  CHECK(rpc_read_status(s, 7, 6) == NtStatus::InvalidHandle);

  rpc_open(s, 8, 7);
  MsgBuilder bye(CMD_SHUTTING_DOWN, 8, true);
  bye.u32(ATTR_PID, 101);
  Exchange(s, bye, 500);
  CHECK(rpc_read_status(s, 8, 9) == NtStatus::InvalidHandle);
}

TEST_CASE("the netlink control plane relays pipe bytes to ctld, in pieces when large", "[ipc]") {
  Fixture f;
  ServedCtld served(f);
  {
    auto& cp = served.control;
    CHECK(cp->pipe_open({41, "nosuchpipe", "alice", false}).status == NtStatus::ObjectNameNotFound);
    REQUIRE(cp->pipe_open({42, "srvsvc", "alice", false}).status == NtStatus::Success);
    ipc::PipeReply empty = cp->pipe_read(42, 100);
    CHECK(empty.status == NtStatus::Success);
    CHECK(empty.data.empty());

    // 1000 binds (72 000 bytes, more than one netlink message carries): the
    // first is acknowledged, the others refused; each answer is a message.
    Bytes one = srvsvc_bind_pdu(), many;
    for (int i = 0; i < 1000; ++i) many.insert(many.end(), one.begin(), one.end());
    REQUIRE(many.size() > abi::kMaxRpcData);
    ipc::PipeReply first = cp->pipe_transceive(42, many, 10);
    REQUIRE(first.status == NtStatus::Success);
    CHECK(first.data.size() == 10);
    CHECK(first.more);
    CHECK(first.data[2] == 12);  // bind_ack
    ipc::PipeReply rest = cp->pipe_read(42, 4096);
    CHECK(rest.status == NtStatus::Success);
    CHECK_FALSE(rest.more);
    int naks = 0;
    for (;;) {
      ipc::PipeReply r = cp->pipe_read(42, 4096);
      REQUIRE(r.status == NtStatus::Success);
      if (r.data.empty()) break;
      naks += r.data[2] == 13;  // bind_nak
    }
    CHECK(naks == 999);
    CHECK(cp->pipe_write(42, many).status == NtStatus::Success);
    cp->pipe_close(42);
    CHECK(cp->pipe_read(42, 100).status == NtStatus::InvalidHandle);
    CHECK(cp->pipe_write(42, one).status == NtStatus::InvalidHandle);
  }
}
