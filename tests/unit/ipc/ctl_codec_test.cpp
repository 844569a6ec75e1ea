#include <catch2/catch.hpp>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstring>

#include "ipc/ctl_codec.hpp"
#include "ipc/nl_socket.hpp"

using namespace ringsmb;
using namespace ringsmb::ipc;
using namespace ringsmb::ipc::abi;

namespace {

// A datagram copy in aligned storage, as a receive buffer would be.
struct Wire {
  std::vector<uint32_t> words;
  size_t len = 0;
  explicit Wire(ByteSpan b) : words((b.size() + 3) / 4 + 1), len(b.size()) { memcpy(words.data(), b.data(), len); }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words.data()); }
  auto parse() { return parse_message(data(), len); }
};

LoginRequest sample_login() {
  static const uint8_t neg[] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1};
  static const uint8_t chal[] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 2};
  static const uint8_t auth[] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 3, 4, 5};
  LoginRequest r;
  r.client_address = "192.0.2.7";
  r.server_challenge = {1, 2, 3, 4, 5, 6, 7, 8};
  r.negotiate_msg = neg;
  r.challenge_msg = chal;
  r.authenticate_msg = auth;
  return r;
}

}  // namespace

TEST_CASE("login request survives encode and decode", "[ipc]") {
  MsgBuilder b(CMD_LOGIN_EXT, 42, true);
  LoginRequest in = sample_login();
  encode_login_request(b, in);
  REQUIRE(b.ok());
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  CHECK(m->cmd == CMD_LOGIN_EXT);
  CHECK(m->is_request);
  CHECK(m->seq == 42);
  LoginRequest out = decode_login_request(*m);
  CHECK(out.client_address == in.client_address);
  CHECK(out.server_challenge == in.server_challenge);
  CHECK(std::equal(out.negotiate_msg.begin(), out.negotiate_msg.end(), in.negotiate_msg.begin(), in.negotiate_msg.end()));
  CHECK(std::equal(out.authenticate_msg.begin(), out.authenticate_msg.end(), in.authenticate_msg.begin(),
                   in.authenticate_msg.end()));
}

TEST_CASE("login reply carries identity, key and groups", "[ipc]") {
  LoginReply in;
  in.status = NtStatus::Success;
  in.user = "alice";
  in.session_key = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
  in.unix_user = {1000, 100, {4, 24, 27}};
  MsgBuilder b(CMD_LOGIN_EXT, 7, false);
  encode_login_reply(b, in, true);
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  CHECK_FALSE(m->is_request);
  LoginReply out = decode_login_reply(*m);
  CHECK(out.status == NtStatus::Success);
  CHECK(out.user == "alice");
  CHECK(out.session_key == in.session_key);
  CHECK(out.unix_user.uid == 1000);
  CHECK(out.unix_user.gid == 100);
  CHECK(out.unix_user.groups == in.unix_user.groups);
  CHECK_FALSE(out.is_guest);
  CHECK(out.sids.empty());
}

TEST_CASE("a domain login's SIDs travel in the reply and in tree connects", "[ipc]") {
  LoginReply in;
  in.status = NtStatus::Success;
  in.user = "EXAMPLE\\alice";
  in.unix_user = {1500, 1500, {}};
  in.sids = {"S-1-5-21-1-2-3-1104", "S-1-5-21-1-2-3-513", "S-1-18-1"};
  MsgBuilder b(CMD_SPNEGO_AUTHEN, 7, false);
  encode_login_reply(b, in, true);
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  CHECK(decode_login_reply(*m).sids == in.sids);

  TreeConnectRequest rq{"data", "EXAMPLE\\alice", false, "10.0.0.1", in.sids};
  MsgBuilder b2(CMD_TREE_CONNECT, 3, true);
  encode_tree_connect_request(b2, rq);
  Wire w2(b2.wire());
  auto m2 = w2.parse();
  REQUIRE(m2);
  CHECK(decode_tree_connect_request(*m2).sids == in.sids);

  // The most a session carries fits one message.
  LoginReply big = in;
  big.sids.assign(kMaxSidsText / 47, "S-1-5-21-3167651404-3865080224-2280184895-1115");
  MsgBuilder b3(CMD_SPNEGO_AUTHEN, 8, false);
  encode_login_reply(b3, big, true);
  Wire w3(b3.wire());
  auto m3 = w3.parse();
  REQUIRE(m3);
  CHECK(decode_login_reply(*m3).sids.size() == big.sids.size());
}

TEST_CASE("a success without an identity is a logon failure", "[ipc]") {
  MsgBuilder b(CMD_LOGIN_EXT, 7, false);
  b.u32(ATTR_STATUS, uint32_t(NtStatus::Success));  // no uid, gid, flags, key
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  CHECK(decode_login_reply(*m).status == NtStatus::LogonFailure);
}

TEST_CASE("tree connect request and reply round-trip", "[ipc]") {
  TreeConnectRequest rq{"data", "bob", false, "10.0.0.1"};
  MsgBuilder b(CMD_TREE_CONNECT, 3, true);
  encode_tree_connect_request(b, rq);
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  auto back = decode_tree_connect_request(*m);
  CHECK(back.share == "data");
  CHECK(back.user == "bob");
  CHECK(back.client_address == "10.0.0.1");

  TreeConnectReply rp;
  rp.status = NtStatus::Success;
  rp.share = {"data", "/srv/data", "stuff", false, false, true, true, config::EncryptionPolicy::Required};
  rp.writable = true;
  MsgBuilder b2(CMD_TREE_CONNECT, 3, false);
  encode_tree_connect_reply(b2, rp);
  Wire w2(b2.wire());
  auto m2 = w2.parse();
  REQUIRE(m2);
  auto out = decode_tree_connect_reply(*m2);
  CHECK(out.status == NtStatus::Success);
  CHECK(out.share.path == "/srv/data");
  CHECK(out.share.case_sensitive);
  CHECK_FALSE(out.share.read_only);
  CHECK(out.writable);
  CHECK(out.share.encryption == config::EncryptionPolicy::Required);
}

TEST_CASE("short and truncated messages are rejected", "[ipc]") {
  MsgBuilder b(CMD_HEARTBEAT, 1, true);
  Wire w(b.wire());
  for (size_t n : {size_t(0), size_t(4), size_t(NLMSG_HDRLEN), size_t(NLMSG_HDRLEN + GENL_HDRLEN - 1)})
    CHECK(parse_message(w.data(), n).error() == ParseError::Short);
  // nlmsg_len claims more than the datagram holds.
  MsgBuilder b2(CMD_TREE_CONNECT, 1, true);
  encode_tree_connect_request(b2, {"s", "u", false, ""});
  Wire w2(b2.wire());
  CHECK(parse_message(w2.data(), w2.len - 4).error() == ParseError::Short);
}

TEST_CASE("wrong family, version or command is rejected", "[ipc]") {
  MsgBuilder b(CMD_HEARTBEAT, 1, true);
  Wire w(b.wire());
  REQUIRE(w.parse());
  auto* nlh = reinterpret_cast<nlmsghdr*>(w.data());
  auto* g = reinterpret_cast<genlmsghdr*>(w.data() + NLMSG_HDRLEN);
  g->version = kGenlVersion + 1;
  CHECK(w.parse().error() == ParseError::WrongVersion);
  g->version = kGenlVersion;
  g->cmd = CMD_COUNT;
  CHECK(w.parse().error() == ParseError::UnknownCommand);
  g->cmd = CMD_UNSPEC;
  CHECK(w.parse().error() == ParseError::UnknownCommand);
  g->cmd = CMD_HEARTBEAT;
  nlh->nlmsg_type = NLMSG_ERROR;
  CHECK(w.parse().error() == ParseError::WrongFamily);
}

TEST_CASE("missing required attributes are rejected", "[ipc]") {
  MsgBuilder b(CMD_TREE_CONNECT, 1, true);
  b.str(ATTR_SHARE_NAME, "data");  // no ACCOUNT, no LOGIN_FLAGS
  Wire w(b.wire());
  CHECK(w.parse().error() == ParseError::MissingAttribute);

  MsgBuilder reply(CMD_LOGIN, 1, false);  // a reply without STATUS
  reply.str(ATTR_ACCOUNT, "x");
  Wire w2(reply.wire());
  CHECK(w2.parse().error() == ParseError::MissingAttribute);

  MsgBuilder start(CMD_STARTING_UP, 1, true);
  start.u32(ATTR_PID, 1).u32(ATTR_ROLE, ROLE_DATA_PLANE);  // no ABI version
  Wire w3(start.wire());
  CHECK(w3.parse().error() == ParseError::MissingAttribute);
}

TEST_CASE("attributes of the wrong type or size are rejected", "[ipc]") {
  SECTION("u32 carried in two bytes") {
    MsgBuilder b(CMD_HEARTBEAT, 1, false);
    uint16_t half = 0;
    b.bytes(ATTR_STATUS, {reinterpret_cast<uint8_t*>(&half), 2});
    Wire w(b.wire());
    CHECK(w.parse().error() == ParseError::BadAttribute);
  }
  SECTION("u32 carried in eight bytes") {
    MsgBuilder b(CMD_HEARTBEAT, 1, false);
    b.u64(ATTR_STATUS, 0);
    Wire w(b.wire());
    CHECK(w.parse().error() == ParseError::BadAttribute);
  }
  SECTION("string without its NUL") {
    MsgBuilder b(CMD_LOGOUT, 1, true);
    const uint8_t raw[] = {'b', 'o', 'b'};
    b.bytes(ATTR_ACCOUNT, raw);
    Wire w(b.wire());
    CHECK(w.parse().error() == ParseError::BadAttribute);
  }
  SECTION("server challenge of 7 bytes") {
    MsgBuilder b(CMD_LOGIN, 1, true);
    const uint8_t seven[7] = {};
    b.bytes(ATTR_SERVER_CHALLENGE, seven).bytes(ATTR_NTLM_CHALLENGE, seven).bytes(ATTR_NTLM_AUTHENTICATE, seven);
    Wire w(b.wire());
    CHECK(w.parse().error() == ParseError::BadAttribute);
  }
  SECTION("groups not a multiple of four") {
    MsgBuilder b(CMD_LOGIN_EXT, 1, false);
    const uint8_t five[5] = {};
    b.u32(ATTR_STATUS, 0).bytes(ATTR_GROUPS, five);
    Wire w(b.wire());
    CHECK(w.parse().error() == ParseError::BadAttribute);
  }
  SECTION("an over-long account name") {
    MsgBuilder b(CMD_LOGOUT, 1, true);
    b.str(ATTR_ACCOUNT, std::string(300, 'a'));
    Wire w(b.wire());
    CHECK(w.parse().error() == ParseError::BadAttribute);
  }
}

TEST_CASE("unknown attribute types are ignored", "[ipc]") {
  MsgBuilder b(CMD_HEARTBEAT, 1, true);
  b.u32(Attr(ATTR_COUNT + 5), 1);
  Wire w(b.wire());
  CHECK(w.parse());
}

TEST_CASE("only root and the service's own uid may talk", "[ipc]") {
  CHECK(credentials_allowed(0, 0));
  CHECK(credentials_allowed(0, 1000));
  CHECK(credentials_allowed(1000, 1000));
  CHECK_FALSE(credentials_allowed(65534, 0));
  CHECK_FALSE(credentials_allowed(1001, 1000));
}

TEST_CASE("netlink sockets deliver messages with the sender's credentials", "[ipc]") {
  auto a = NlSocket::open(0);
  auto b = NlSocket::open(0);
  REQUIRE(a);
  REQUIRE(b);
  MsgBuilder m(CMD_HEARTBEAT, 5, true);
  REQUIRE(a->send(b->port(), m.wire()) == 0);
  Datagram d;
  REQUIRE(b->receive(d, 1000));
  CHECK(d.port == a->port());
  CHECK(d.cred.uid == geteuid());
  auto parsed = parse_message(b->buffer(), d.size);
  REQUIRE(parsed);
  CHECK(parsed->seq == 5);
  CHECK_FALSE(b->receive(d, 10));  // nothing more
}

TEST_CASE("tree connect reply carries the share options and the forced identity", "[ipc][share-options]") {
  TreeConnectReply rp;
  rp.status = NtStatus::Success;
  rp.share.name = "data";
  rp.share.path = "/srv/data";
  rp.share.hide_dot_files = false;
  rp.share.oplocks = false;
  rp.share.leases = true;
  rp.share.store_dos_attributes = true;
  rp.share.streams = true;
  rp.share.nt_acl_support = false;
  rp.share.acl_flag_inherited_canonicalization = false;
  rp.share.client_symlinks = true;
  rp.share.create_mask = 0600;
  rp.share.directory_mask = 0700;
  rp.share.veto_files = {"*.tmp", "My Secret", ".DS_Store"};
  rp.share.force_user = UnixUser{1234, 2345, {2345, 3456}};
  rp.share.force_gid = 4567;
  rp.share.fruit.enabled = true;
  rp.share.fruit.time_machine = true;
  rp.share.fruit.time_machine_max_size = 1ull << 40;
  rp.share.fruit.resource = config::FruitOptions::Resource::Stream;
  rp.share.fruit.model = "Xserve";
  rp.share.fruit.netatalk_locking = true;
  MsgBuilder b(CMD_TREE_CONNECT, 3, false);
  encode_tree_connect_reply(b, rp);
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  auto out = decode_tree_connect_reply(*m);
  REQUIRE(out.status == NtStatus::Success);
  CHECK_FALSE(out.share.hide_dot_files);
  CHECK_FALSE(out.share.oplocks);
  CHECK(out.share.leases);
  CHECK(out.share.store_dos_attributes);
  CHECK(out.share.streams);
  CHECK_FALSE(out.share.nt_acl_support);
  CHECK_FALSE(out.share.acl_flag_inherited_canonicalization);
  CHECK(out.share.client_symlinks);
  CHECK(out.share.create_mask == 0600);
  CHECK(out.share.directory_mask == 0700);
  CHECK(out.share.veto_files == std::vector<std::string>{"*.tmp", "My Secret", ".DS_Store"});
  REQUIRE(out.share.force_user);
  CHECK(out.share.force_user->uid == 1234);
  CHECK(out.share.force_user->gid == 2345);
  CHECK(out.share.force_user->groups == std::vector<uint32_t>{2345, 3456});
  CHECK(out.share.force_gid == std::optional<uint32_t>(4567));
  CHECK(out.share.fruit.enabled);
  CHECK(out.share.fruit.aapl);
  CHECK(out.share.fruit.time_machine);
  CHECK(out.share.fruit.time_machine_max_size == 1ull << 40);
  CHECK(out.share.fruit.resource == config::FruitOptions::Resource::Stream);
  CHECK(out.share.fruit.netatalk_locking);
  CHECK(out.share.fruit.model == "Xserve");
}

TEST_CASE("tree connect reply without options: defaults, no forced identity", "[ipc][share-options]") {
  TreeConnectReply rp;
  rp.status = NtStatus::Success;
  rp.share.name = "data";
  rp.share.path = "/srv/data";
  MsgBuilder b(CMD_TREE_CONNECT, 3, false);
  encode_tree_connect_reply(b, rp);
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  auto out = decode_tree_connect_reply(*m);
  CHECK(out.share.hide_dot_files);
  CHECK(out.share.oplocks);
  CHECK(out.share.leases);
  CHECK_FALSE(out.share.store_dos_attributes);
  CHECK_FALSE(out.share.streams);  // an older peer's "off"
  CHECK(out.share.nt_acl_support);
  CHECK(out.share.acl_flag_inherited_canonicalization);
  CHECK(out.share.create_mask == 0744);
  CHECK(out.share.directory_mask == 0755);
  CHECK(out.share.veto_files.empty());
  CHECK_FALSE(out.share.fruit.enabled);  // fruit off: nothing sent, nothing turned on
  CHECK_FALSE(out.share.force_user);
  CHECK_FALSE(out.share.force_gid);
}

TEST_CASE("Kerberos login (SPNEGO_AUTHEN) round-trips the token, identity, key and AP-REP", "[ipc]") {
  Bytes ap_req(3000, 0x6e);
  KerberosLoginRequest rq{"10.0.0.9", ap_req};
  MsgBuilder b(CMD_SPNEGO_AUTHEN, 5, true);
  encode_kerberos_login_request(b, rq);
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  KerberosLoginRequest got = decode_kerberos_login_request(*m);
  CHECK(got.client_address == "10.0.0.9");
  CHECK(std::ranges::equal(got.mech_token, ap_req));

  KerberosLoginReply in;
  in.login.status = NtStatus::Success;
  in.login.user = "alice";
  in.login.session_key = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  in.login.unix_user = {1000, 100, {27}};
  in.response_token = {0x60, 0x01, 0x02};
  MsgBuilder rb(CMD_SPNEGO_AUTHEN, 5, false);
  encode_kerberos_login_reply(rb, in);
  Wire rw(rb.wire());
  auto rm = rw.parse();
  REQUIRE(rm);
  KerberosLoginReply out = decode_kerberos_login_reply(*rm);
  CHECK(out.login.status == NtStatus::Success);
  CHECK(out.login.user == "alice");
  CHECK(out.login.session_key == in.login.session_key);
  CHECK(out.login.unix_user.groups == in.login.unix_user.groups);
  CHECK(out.response_token == in.response_token);
}

TEST_CASE("a Kerberos login reply claiming a guest is a logon failure", "[ipc]") {
  MsgBuilder b(CMD_SPNEGO_AUTHEN, 5, false);
  b.u32(ATTR_STATUS, uint32_t(NtStatus::Success)).u32(ATTR_LOGIN_FLAGS, LOGIN_GUEST).u32(ATTR_UID, 0).u32(ATTR_GID, 0);
  Wire w(b.wire());
  auto m = w.parse();
  REQUIRE(m);
  CHECK(decode_kerberos_login_reply(*m).login.status == NtStatus::LogonFailure);
}
