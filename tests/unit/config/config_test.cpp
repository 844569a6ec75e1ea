#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "config/config.hpp"

using namespace ringsmb::config;

namespace {

ParseOutput ok(const std::string& text) {
  auto r = parse_config_text(text, "t.conf");
  INFO(text);
  if (!r) FAIL("unexpected error: " << r.error());
  return std::move(*r);
}

std::string err(const std::string& text) {
  auto r = parse_config_text(text, "t.conf");
  INFO(text);
  REQUIRE_FALSE(r.has_value());
  return r.error();
}

GlobalConfig global(const std::string& body) { return ok("[global]\n" + body + "\n").config.global; }

ShareConfig share(const std::string& body) {
  auto out = ok("[s]\npath = /srv/s\n" + body + "\n");
  REQUIRE(out.config.shares.size() == 1);
  return out.config.shares[0];
}

}  // namespace

TEST_CASE("empty text gives defaults", "[config]") {
  auto out = ok("");
  const auto& g = out.config.global;
  CHECK(g.tcp_ports == std::vector<uint16_t>{445});
  CHECK(g.min_protocol == kDialect202);
  CHECK(g.max_protocol == kDialect311);
  CHECK(g.signing == SigningPolicy::Auto);
  CHECK(g.smb3_encryption == EncryptionPolicy::Off);
  CHECK(g.users_db == "/var/lib/ringsmb/users.db");
  CHECK(out.config.shares.empty());
  CHECK(out.warnings.empty());
}

TEST_CASE("normalize_key and parse_bool", "[config]") {
  CHECK(normalize_key("Read Only") == "readonly");
  CHECK(normalize_key(" \tSMB2 Max\tRead ") == "smb2maxread");
  bool b = false;
  for (const char* t : {"yes", "YES", "true", "1", "on", " On "}) {
    CHECK(parse_bool(t, b));
    CHECK(b);
  }
  for (const char* f : {"no", "False", "0", "off"}) {
    CHECK(parse_bool(f, b));
    CHECK_FALSE(b);
  }
  CHECK_FALSE(parse_bool("maybe", b));
  CHECK_FALSE(parse_bool("", b));
}

TEST_CASE("ports", "[config]") {
  CHECK(global("tcp port = 10445").tcp_ports == std::vector<uint16_t>{10445});
  CHECK(global("smb ports = 445 139").tcp_ports == std::vector<uint16_t>{445, 139});
  CHECK(global("smb ports = 445,10445, 20445").tcp_ports == std::vector<uint16_t>{445, 10445, 20445});
  CHECK(global("smb ports = 445 445").tcp_ports == std::vector<uint16_t>{445});
  CHECK(err("[global]\ntcp port = 0\n") == "t.conf:2: tcp port: 0 is out of range (1..65535)");
  CHECK(err("[global]\nsmb ports = 445 65536\n") == "t.conf:2: smb ports: 65536 is out of range (1..65535)");
  CHECK(err("[global]\ntcp port = http\n") == "t.conf:2: tcp port: 'http' is not a port number");
  CHECK(err("[global]\ntcp port = 4k\n") == "t.conf:2: tcp port: '4k' is not a port number");
  CHECK(err("[global]\ntcp port =\n") == "t.conf:2: tcp port: empty port list");
}

TEST_CASE("interfaces, paths and names", "[config]") {
  auto g = global(
      "interfaces = eth0, 192.168.1.10/24 lo\n"
      "bind interfaces only = yes\n"
      "users db = /etc/ringsmb/users.db\n"
      "state directory = /run/ringsmb\n"
      "guest account = smbguest\n"
      "admin users = alice, \"Bob Smith\" carol\n"
      "workgroup = home\n"
      "netbios name = nas1\n"
      "server string = My NAS %v\n");
  CHECK(g.interfaces == std::vector<std::string>{"eth0", "192.168.1.10/24", "lo"});
  CHECK(g.bind_interfaces_only);
  CHECK(g.users_db == "/etc/ringsmb/users.db");
  CHECK(g.state_directory == "/run/ringsmb");
  CHECK(g.guest_account == "smbguest");
  CHECK(g.admin_users == std::vector<std::string>{"alice", "Bob Smith", "carol"});
  CHECK(g.workgroup == "HOME");
  CHECK(g.netbios_name == "NAS1");
  CHECK(g.server_string == "My NAS %v");
  CHECK(err("[global]\nusers db =\n") == "t.conf:2: users db must not be empty");
  CHECK(err("[global]\nstate directory = \n") == "t.conf:2: state directory must not be empty");
  CHECK(err("[global]\nguest account =\n") == "t.conf:2: guest account must not be empty");
  CHECK(err("[global]\nnetbios name = abcdefghijklmnop\n") == "t.conf:2: netbios name must be 1..15 characters");
  CHECK(err("[global]\nworkgroup = a/b\n") == "t.conf:2: workgroup 'a/b' contains an invalid character");
  CHECK(err("[global]\nbind interfaces only = sometimes\n") ==
        "t.conf:2: bind interfaces only: 'sometimes' is not a boolean (use yes or no)");
}

TEST_CASE("interfaces with Samba's per-interface options", "[config]") {
  auto quoted = global("interfaces = \"eth0;capability=RSS,speed=10000000000\" lo");
  CHECK(quoted.interfaces == std::vector<std::string>{"eth0", "lo"});
  REQUIRE(quoted.interface_overrides.size() == 1);
  CHECK(quoted.interface_overrides[0].entry == "eth0");
  CHECK(quoted.interface_overrides[0].rss);
  CHECK(quoted.interface_overrides[0].speed_bps == 10'000'000'000);
  // Unquoted, the commas split Samba's form: the option words still belong to lo.
  auto bare = global("interfaces = lo;capability=RSS,speed=10G,if_index=7 192.168.1.10/24");
  CHECK(bare.interfaces == std::vector<std::string>{"lo", "192.168.1.10/24"});
  REQUIRE(bare.interface_overrides.size() == 1);
  CHECK(bare.interface_overrides[0].entry == "lo");
  CHECK(bare.interface_overrides[0].rss);
  CHECK(bare.interface_overrides[0].speed_bps == 10'000'000'000);
  CHECK(bare.interface_overrides[0].if_index == 7);
  CHECK(global("interfaces = \"eth1;speed=2500M\"").interface_overrides[0].speed_bps == 2'500'000'000);
  CHECK(err("[global]\ninterfaces = \"eth0;capability=FAST\"\n") ==
        "t.conf:2: interfaces: interface capability 'FAST' is neither RSS nor RDMA");
  CHECK(err("[global]\ninterfaces = \"eth0;speed=fast\"\n") ==
        "t.conf:2: interfaces: speed 'fast' is not a number of bit/s (10G, 1000000000)");
  CHECK(err("[global]\ninterfaces = \"eth0;colour=red\"\n") ==
        "t.conf:2: interfaces: unknown interface option 'colour' (speed, capability, if_index, options)");
  CHECK(err("[global]\ninterfaces = \";speed=1G\"\n") ==
        "t.conf:2: interfaces: interface entry ';speed=1G' names no interface");
}

TEST_CASE("protocols", "[config]") {
  CHECK(global("server min protocol = SMB2_10").min_protocol == kDialect210);
  CHECK(global("server min protocol = smb3_00").min_protocol == kDialect300);
  CHECK(global("server min protocol = SMB3_02").min_protocol == kDialect302);
  CHECK(global("server min protocol = SMB3_11").min_protocol == kDialect311);
  CHECK(global("server max protocol = SMB2_02").max_protocol == kDialect202);
  CHECK(global("server min protocol = SMB2").min_protocol == kDialect202);
  CHECK(global("server max protocol = SMB2").max_protocol == kDialect210);
  CHECK(global("server min protocol = SMB3").min_protocol == kDialect300);
  CHECK(global("server max protocol = SMB3").max_protocol == kDialect311);
  CHECK(global("min protocol = SMB3").min_protocol == kDialect300);
  CHECK(global("max protocol = SMB2").max_protocol == kDialect210);
  CHECK(err("[global]\nserver min protocol = NT1\n") == "t.conf:2: server min protocol: SMB1 is not supported");
  CHECK(err("[global]\nserver max protocol = LANMAN2\n") == "t.conf:2: server max protocol: SMB1 is not supported");
  CHECK(err("[global]\nserver min protocol = SMB4\n") ==
        "t.conf:2: server min protocol: unknown protocol 'SMB4' (use SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11, SMB2 or SMB3)");
  CHECK(err("[global]\nserver min protocol = SMB3\nserver max protocol = SMB2\n") ==
        "t.conf:3: server min protocol is higher than server max protocol");
  CHECK(err("[global]\nserver max protocol = SMB2_10\n\n[global]\nserver min protocol = SMB3_11\n") ==
        "t.conf:5: server min protocol is higher than server max protocol");
  auto g = global("server min protocol = SMB3_11\nserver max protocol = SMB3_11");
  CHECK(g.min_protocol == g.max_protocol);
}

TEST_CASE("signing, encryption, map to guest", "[config]") {
  CHECK(global("server signing = auto").signing == SigningPolicy::Auto);
  CHECK(global("server signing = default").signing == SigningPolicy::Auto);
  CHECK(global("server signing = if_required").signing == SigningPolicy::Auto);
  CHECK(global("server signing = mandatory").signing == SigningPolicy::Mandatory);
  CHECK(global("server signing = Required").signing == SigningPolicy::Mandatory);
  CHECK(global("server signing = disabled").signing == SigningPolicy::Disabled);
  CHECK(global("server signing = off").signing == SigningPolicy::Disabled);
  CHECK(err("[global]\nserver signing = sometimes\n") ==
        "t.conf:2: server signing: bad signing policy 'sometimes' (use auto, mandatory or disabled)");

  for (const char* v : {"off", "no", "disabled", "if_required"})
    CHECK(global(std::string("smb3 encryption = ") + v).smb3_encryption == EncryptionPolicy::Off);
  for (const char* v : {"desired", "yes", "auto"})
    CHECK(global(std::string("smb3 encryption = ") + v).smb3_encryption == EncryptionPolicy::Desired);
  for (const char* v : {"required", "mandatory", "forced"})
    CHECK(global(std::string("server smb encrypt = ") + v).smb3_encryption == EncryptionPolicy::Required);
  CHECK(err("[global]\nsmb3 encryption = strong\n") ==
        "t.conf:2: smb3 encryption: bad encryption policy 'strong' (use off, desired or required)");

  CHECK(global("map to guest = never").map_to_guest == MapToGuest::Never);
  CHECK(global("map to guest = Bad User").map_to_guest == MapToGuest::BadUser);
  CHECK(global("map to guest = bad password").map_to_guest == MapToGuest::BadPassword);
  CHECK(err("[global]\nmap to guest = always\n") ==
        "t.conf:2: map to guest: bad map to guest 'always' (use never, bad user or bad password)");
}

TEST_CASE("numeric limits", "[config]") {
  auto g = global(
      "max connections = 100\nmax open files = 4096\nsmb2 max credits = 512\n"
      "smb2 max read = 1M\nsmb2 max write = 64k\nsmb2 max trans = 1048576\n"
      "deadtime = 15\nlog level = 3\nworkers = 4");
  CHECK(g.max_connections == 100);
  CHECK(g.max_open_files == 4096);
  CHECK(g.smb2_max_credits == 512);
  CHECK(g.smb2_max_read == 1024 * 1024);
  CHECK(g.smb2_max_write == 64 * 1024);
  CHECK(g.smb2_max_trans == 1024 * 1024);
  CHECK(g.deadtime_minutes == 15);
  CHECK(g.log_level == 3);
  CHECK(g.workers == 4);
  CHECK(global("smb2 max read = 8m").smb2_max_read == 8u * 1024 * 1024);
  CHECK(global("smb2 max write = 8 MiB").smb2_max_write == 8u * 1024 * 1024);
  CHECK(global("max connections = 0").max_connections == 0);
  CHECK(global("").worker_busy_poll_us == 0);
  CHECK(global("worker busy poll = 50").worker_busy_poll_us == 50);
  CHECK(err("[global]\nworker busy poll = 1001\n") == "t.conf:2: worker busy poll: 1001 is out of range (0..1000)");
  CHECK(global("").bulk_worker_nice == 10);
  CHECK(global("bulk worker nice = 0").bulk_worker_nice == 0);
  CHECK(err("[global]\nbulk worker nice = 20\n") == "t.conf:2: bulk worker nice: 20 is out of range (0..19)");

  CHECK(err("[global]\nsmb2 max read = 16M\n") == "t.conf:2: smb2 max read: 16M is out of range (65536..8388608)");
  CHECK(err("[global]\nsmb2 max write = 4k\n") == "t.conf:2: smb2 max write: 4k is out of range (65536..8388608)");
  CHECK(err("[global]\nsmb2 max trans = 9000000\n") == "t.conf:2: smb2 max trans: 9000000 is out of range (65536..8388608)");
  CHECK(err("[global]\nsmb2 max credits = 0\n") == "t.conf:2: smb2 max credits: 0 is out of range (1..65535)");
  CHECK(err("[global]\nsmb2 max credits = 65536\n") == "t.conf:2: smb2 max credits: 65536 is out of range (1..65535)");
  CHECK(err("[global]\nmax open files = lots\n") == "t.conf:2: max open files: 'lots' is not a number");
  CHECK(err("[global]\nmax connections = 10x\n") == "t.conf:2: max connections: '10x' is not a number");
  CHECK(err("[global]\ndeadtime = -1\n") == "t.conf:2: deadtime: '-1' is not a number");
  CHECK(err("[global]\nworkers = 99999999999999999999\n") == "t.conf:2: workers: '99999999999999999999' is too large");
  CHECK(err("[global]\nlog level = 11\n") == "t.conf:2: log level: 11 is out of range (0..10)");
  CHECK(err("[global]\nworkers =\n") == "t.conf:2: workers: empty value where a number is expected");
}

TEST_CASE("log level with per-class levels warns", "[config]") {
  auto out = ok("[global]\nlog level = 2 auth:5 passdb:3\n");
  CHECK(out.config.global.log_level == 2);
  REQUIRE(out.warnings.size() == 1);
  CHECK(out.warnings[0] == "t.conf:2: per-class log levels are ignored");
}

TEST_CASE("share keys", "[config]") {
  auto s = share(
      "comment = Team files\nread only = no\nguest ok = yes\nbrowseable = no\n"
      "valid users = alice, @staff \"Bob Smith\" +unix\nsmb3 encryption = required\ncase sensitive = yes");
  CHECK(s.name == "s");
  CHECK(s.path == "/srv/s");
  CHECK(s.comment == "Team files");
  CHECK_FALSE(s.read_only);
  CHECK(s.guest_ok);
  CHECK_FALSE(s.browseable);
  CHECK(s.valid_users == std::vector<std::string>{"alice", "@staff", "Bob Smith", "+unix"});
  CHECK(s.smb3_encryption == EncryptionPolicy::Required);
  CHECK(s.case_sensitive);
  CHECK(s.line == 1);

  auto d = share("");
  CHECK(d.read_only);
  CHECK_FALSE(d.guest_ok);
  CHECK(d.browseable);
  CHECK(d.valid_users.empty());
  CHECK_FALSE(d.smb3_encryption.has_value());
  CHECK_FALSE(d.case_sensitive);
}

TEST_CASE("share key synonyms", "[config]") {
  CHECK_FALSE(share("writeable = yes").read_only);
  CHECK_FALSE(share("writable = yes").read_only);
  CHECK_FALSE(share("write ok = yes").read_only);
  CHECK(share("writeable = no").read_only);
  CHECK(share("public = yes").guest_ok);
  CHECK_FALSE(share("browsable = no").browseable);
  CHECK(share("server smb encrypt = desired").smb3_encryption == EncryptionPolicy::Desired);
  CHECK_FALSE(share("case sensitive = auto").case_sensitive);
  CHECK(share("read only = no\nwriteable = no").read_only);  // last one wins
}

TEST_CASE("share value errors", "[config]") {
  CHECK(err("[s]\npath = /srv\nread only = perhaps\n") == "t.conf:3: read only: 'perhaps' is not a boolean (use yes or no)");
  CHECK(err("[s]\npath = /srv\nguest ok = 2\n") == "t.conf:3: guest ok: '2' is not a boolean (use yes or no)");
  CHECK(err("[s]\npath = srv/data\n") == "t.conf:2: path 'srv/data' must be absolute");
  CHECK(err("[s]\npath =\n") == "t.conf:2: path must not be empty");
  CHECK(err("[s]\npath = /srv\nvalid users = \"alice\n") == "t.conf:3: valid users: unterminated quote in list");
  CHECK(err("[s]\npath = /srv\nsmb3 encryption = maybe\n") ==
        "t.conf:3: smb3 encryption: bad encryption policy 'maybe' (use off, desired or required)");
  CHECK(share("path = /srv/x/").path == "/srv/x");
  CHECK(share("valid users = @\"Domain Users\",\"\" , \"x,y\"").valid_users ==
        std::vector<std::string>{"@Domain Users", "x,y"});
  CHECK(ok("[root]\npath = /\n").config.shares[0].path == "/");
}

TEST_CASE("structure errors", "[config]") {
  // Every error is reported, not only the first.
  CHECK(err("path = /srv\n[s]\n") == "t.conf:1: 'path' appears before any [section]\nt.conf:2: share [s] has no path");
  CHECK(err("; c\n\n[global\n") == "t.conf:3: malformed section header '[global'");
  CHECK(err("[global] x\n") == "t.conf:1: unexpected text after section header '[global] x'");
  CHECK(err("[ ]\n") == "t.conf:1: empty section name");
  CHECK(err("[global]\njust words\n") == "t.conf:2: expected 'key = value', got 'just words'");
  CHECK(err("[global]\n = 1\n") == "t.conf:2: missing key before '='");
  CHECK(err("[global]\n\n[data]\ncomment = x\n") == "t.conf:3: share [data] has no path");
  CHECK(err("[a]\npath = /a\n[A]\npath = /b\n") == "t.conf:3: duplicate share [A] (first defined on line 1)");
}

TEST_CASE("share names", "[config]") {
  CHECK(ok("[My Share-1 $]\npath = /x\n").config.shares[0].name == "My Share-1 $");
  std::string long_name(81, 'a');
  CHECK(err("[" + long_name + "]\npath = /x\n") ==
        "t.conf:1: share name '" + long_name + "' is longer than 80 characters");
  CHECK(ok("[" + std::string(80, 'b') + "]\npath = /x\n").config.shares.size() == 1);
  for (char c : std::string("\\/:*?\"<>|")) {
    std::string name = std::string("a") + c + "b";
    CHECK(err("[" + name + "]\npath = /x\n") == "t.conf:1: share name '" + name + "' contains '" + c + "'");
  }
  CHECK(err("[a\x01" "b]\npath = /x\n") == "t.conf:1: share name contains a control character");
}

TEST_CASE("reserved sections", "[config]") {
  auto out = ok("[homes]\nread only = no\n[printers]\npath = /var/spool\n[ok]\npath = /x\n");
  REQUIRE(out.config.shares.size() == 1);
  CHECK(out.config.shares[0].name == "ok");
  REQUIRE(out.warnings.size() == 1);
  CHECK(out.warnings[0] == "t.conf:3: [printers] is not supported; section ignored");
  CHECK(out.config.homes);  // a template, not a share (home_recycle_config_test.cpp)
  // [GLOBAL] in any case is the global section, and may appear twice.
  auto g = ok("[GLOBAL]\nworkers = 2\n[s]\npath = /s\n[Global]\ndeadtime = 5\n").config.global;
  CHECK(g.workers == 2);
  CHECK(g.deadtime_minutes == 5);
}

TEST_CASE("unknown keys warn", "[config]") {
  auto out = ok("[global]\nfoo bar = 1\n[data]\npath = /d\nveto oplock files = /x/\nworkgroup = W\n");
  REQUIRE(out.warnings.size() == 3);
  CHECK(out.warnings[0] == "t.conf:2: unknown key 'foo bar' in [global]");
  CHECK(out.warnings[1] == "t.conf:5: unknown key 'veto oplock files' in [data]");
  CHECK(out.warnings[2] == "t.conf:6: 'workgroup' is a global key; ignored in [data]");
  CHECK(ok("[global]\npath = /x\n").warnings == std::vector<std::string>{"t.conf:2: unknown key 'path' in [global]"});
}

TEST_CASE("share defaults in [global]", "[config]") {
  auto out = ok("[a]\npath = /a\n[global]\nread only = no\nguest ok = yes\n[b]\npath = /b\nread only = yes\n");
  REQUIRE(out.config.shares.size() == 2);
  CHECK_FALSE(out.config.shares[0].read_only);
  CHECK(out.config.shares[0].guest_ok);
  CHECK(out.config.shares[1].read_only);
  CHECK(out.warnings.empty());
}

TEST_CASE("keys are case- and space-insensitive", "[config]") {
  auto out = ok("[Global]\n  SMB2MaxRead=1m\nServer   Min\tProtocol = smb3\nTCP PORT=1445\n[d]\nPATH=/d\nRead Only = No\n");
  CHECK(out.config.global.smb2_max_read == 1024 * 1024);
  CHECK(out.config.global.min_protocol == kDialect300);
  CHECK(out.config.global.tcp_ports == std::vector<uint16_t>{1445});
  CHECK_FALSE(out.config.shares[0].read_only);
}

TEST_CASE("comments", "[config]") {
  auto out = ok(
      "# leading comment\n"
      "; another\n"
      "   # indented comment\n"
      "[global]\n"
      "\t; tab-indented\n"
      "server string = a # b ; c\n"
      "[s]\n"
      "path = /srv/a#b\n");
  CHECK(out.config.global.server_string == "a # b ; c");
  CHECK(out.config.shares[0].path == "/srv/a#b");
  // A value with a trailing comment is not a boolean: comments are whole-line only.
  CHECK(err("[s]\npath = /x\nread only = no # writable\n") ==
        "t.conf:3: read only: 'no # writable' is not a boolean (use yes or no) (comments are whole lines: a '#' or ';' after a value is part of it)");
}

TEST_CASE("continuation lines", "[config]") {
  auto out = ok(
      "[global]\n"
      "smb ports = 445 \\\n"
      "   10445\n"
      "[s]\n"
      "path = /srv/very/long\\\n"
      "/path\n"
      "valid users = alice, \\\n"
      "  bob, \\\n"
      "  @staff\n");
  CHECK(out.config.global.tcp_ports == std::vector<uint16_t>{445, 10445});
  CHECK(out.config.shares[0].path == "/srv/very/long/path");
  CHECK(out.config.shares[0].valid_users == std::vector<std::string>{"alice", "bob", "@staff"});
}

TEST_CASE("continuation keeps the first line number", "[config]") {
  CHECK(err("[global]\nsmb ports = 445 \\\n 0\nworkers = 1\n") == "t.conf:2: smb ports: 0 is out of range (1..65535)");
  CHECK(err("[s]\npath = /x\nread only = \\\n  maybe\n") == "t.conf:3: read only: 'maybe' is not a boolean (use yes or no)");
  // A comment line does not continue, and the line after it counts normally.
  CHECK(err("[global]\n# note \\\nworkers = x\n") == "t.conf:3: workers: 'x' is not a number");
  // Continuation at end of file is harmless.
  CHECK(ok("[global]\nworkers = 3\\").config.global.workers == 3);
}

TEST_CASE("CRLF line endings and BOM", "[config]") {
  auto out = ok("\xEF\xBB\xBF[global]\r\nworkers = 2\r\n[s]\r\npath = /s\r\nread only = no\r\n");
  CHECK(out.config.global.workers == 2);
  CHECK(out.config.shares[0].path == "/s");
  CHECK_FALSE(out.config.shares[0].read_only);
}

TEST_CASE("realistic ksmbd.conf / smb.conf parses unchanged", "[config]") {
  const std::string text = R"(;******************************************************************************
; File server configuration
;******************************************************************************
[global]
	workgroup = WORKGROUP
	server string = Home NAS
	netbios name = NAS
	map to guest = Bad User
	guest account = nobody
	server min protocol = SMB2_10
	server signing = auto
	smb2 max read = 4M
	smb2 max write = 4M
	smb2 max trans = 1M
	smb2 max credits = 8192
	max open files = 10000
	deadtime = 30

[public]
	comment = Public files
	path = /srv/public
	guest ok = yes
	browseable = yes
	read only = no

[media]
	comment = Media library
	path = /srv/media
	valid users = alice @family
	writeable = no
	browseable = yes
)";
  auto out = ok(text);
  CHECK(out.warnings.empty());
  const auto& g = out.config.global;
  CHECK(g.workgroup == "WORKGROUP");
  CHECK(g.server_string == "Home NAS");
  CHECK(g.netbios_name == "NAS");
  CHECK(g.map_to_guest == MapToGuest::BadUser);
  CHECK(g.min_protocol == kDialect210);
  CHECK(g.smb2_max_read == 4u * 1024 * 1024);
  CHECK(g.smb2_max_trans == 1024u * 1024);
  CHECK(g.max_open_files == 10000);
  CHECK(g.deadtime_minutes == 30);
  REQUIRE(out.config.shares.size() == 2);
  const auto* pub = out.config.find_share("PUBLIC");
  REQUIRE(pub);
  CHECK(pub->path == "/srv/public");
  CHECK(pub->guest_ok);
  CHECK_FALSE(pub->read_only);
  CHECK(pub->line == 19);
  const auto* media = out.config.find_share("media");
  REQUIRE(media);
  CHECK(media->read_only);
  CHECK(media->valid_users == std::vector<std::string>{"alice", "@family"});
  CHECK(out.config.find_share("nope") == nullptr);
}

TEST_CASE("Samba-only keys in a real smb.conf only warn", "[config]") {
  auto out = ok(
      "[global]\n   security = user\n   passdb backend = tdbsam\n   load printers = no\n"
      "[data]\n   path = /srv/data\n   vfs objects = acl_xattr\n   inherit acls = yes\n");
  // acl_xattr is accepted: ringsmb stores ACLs itself; so is security.
  REQUIRE(out.warnings.size() == 3);
  CHECK(out.warnings[0] == "t.conf:3: unknown key 'passdb backend' in [global]");
  CHECK(out.warnings[2] == "t.conf:8: unknown key 'inherit acls' in [data]");
}

TEST_CASE("fruit: Samba's vfs_fruit keys", "[config][share-options]") {
  auto off = share("vfs objects = catia streams_xattr acl_xattr\nfruit:time machine = yes");
  CHECK_FALSE(off.fruit.enabled);  // fruit: keys alone turn nothing on
  auto s = share(
      "vfs objects = catia fruit streams_xattr\nfruit:time machine = yes\nfruit:time machine max size = 32K\n"
      "fruit:metadata = stream\nfruit:resource = stream\nfruit:zero_file_id = no\nfruit:model = Xserve");
  CHECK(s.fruit.enabled);
  CHECK(s.fruit.aapl);
  CHECK(s.fruit.time_machine);
  CHECK(s.fruit.time_machine_max_size == 32 * 1024);
  CHECK(s.fruit.metadata == FruitOptions::Metadata::Stream);
  CHECK(s.fruit.resource == FruitOptions::Resource::Stream);
  CHECK_FALSE(s.fruit.zero_file_id);
  CHECK(s.fruit.model == "Xserve");
  CHECK_FALSE(s.fruit.netatalk_locking);
  CHECK(share("vfs objects = fruit\nfruit:locking = NetAtalk").fruit.netatalk_locking);
  CHECK_FALSE(share("vfs objects = fruit\nfruit:locking = none").fruit.netatalk_locking);
  CHECK(share("vfs objects = fruit\nfruit:time machine max size = 4T").fruit.time_machine_max_size == 4ull << 40);
  // [global] carries defaults for every share, fruit:copyfile among them.
  auto g = ok("[global]\nfruit:copyfile = yes\n[s]\npath = /srv/s\nvfs objects = fruit\n");
  CHECK(g.config.shares.at(0).fruit.copyfile);
  CHECK(err("[s]\npath = /srv\nfruit:metadata = afp\n") == "t.conf:3: fruit:metadata: 'afp' (use stream or netatalk)");
}

TEST_CASE("access list keys", "[config][share-options]") {
  auto s = share(
      "read list = alice, @staff\nwrite list = bob +media\ninvalid users = \"Guest User\" &ng\n"
      "valid users = alice bob @staff");
  CHECK(s.read_list == std::vector<std::string>{"alice", "@staff"});
  CHECK(s.write_list == std::vector<std::string>{"bob", "+media"});
  CHECK(s.invalid_users == std::vector<std::string>{"Guest User", "&ng"});
  CHECK(s.valid_users == std::vector<std::string>{"alice", "bob", "@staff"});
  auto d = share("");
  CHECK(d.read_list.empty());
  CHECK(d.write_list.empty());
  CHECK(d.invalid_users.empty());
  CHECK(err("[s]\npath = /srv\nread list = \"alice\n") == "t.conf:3: read list: unterminated quote in list");
}

TEST_CASE("hosts allow and hosts deny", "[config][share-options]") {
  auto s = share("hosts allow = 192.168.1. 10.0.0.0/8, 127.\nhosts deny = ALL EXCEPT 10.1.1.1");
  CHECK(s.hosts_allow == std::vector<std::string>{"192.168.1.", "10.0.0.0/8", "127."});
  CHECK(s.hosts_deny == std::vector<std::string>{"ALL", "EXCEPT", "10.1.1.1"});
  CHECK(share("allow hosts = 127.0.0.1").hosts_allow == std::vector<std::string>{"127.0.0.1"});
  CHECK(share("deny hosts = ::1").hosts_deny == std::vector<std::string>{"::1"});
  CHECK(err("[s]\npath = /srv\nhosts allow = 10.0.0.0/40\n") ==
        "t.conf:3: hosts allow: '10.0.0.0/40' is not a valid network (use 10.0.0.0/8 or 10.0.0.0/255.0.0.0)");
  CHECK(err("[s]\npath = /srv\nhosts deny = 192.168.1.300\n") == "t.conf:3: hosts deny: '192.168.1.300' is not a valid IPv4 address");
  CHECK(err("[s]\npath = /srv\nhosts deny = EXCEPT 10.\n") == "t.conf:3: hosts deny: EXCEPT needs entries on both sides");
}

TEST_CASE("create mask and directory mask", "[config][share-options]") {
  auto d = share("");
  CHECK(d.create_mask == 0744);
  CHECK(d.directory_mask == 0755);
  auto s = share("create mask = 0600\ndirectory mask = 700");
  CHECK(s.create_mask == 0600);
  CHECK(s.directory_mask == 0700);
  CHECK(share("create mode = 0664").create_mask == 0664);
  CHECK(share("directory mode = 02775").directory_mask == 02775);
  CHECK(err("[s]\npath = /srv\ncreate mask = 0689\n") == "t.conf:3: create mask: '0689' is not an octal mode such as 0644");
  CHECK(err("[s]\npath = /srv\ndirectory mask = rwx\n") == "t.conf:3: directory mask: 'rwx' is not an octal mode such as 0644");
  CHECK(err("[s]\npath = /srv\ncreate mask = 17777\n") == "t.conf:3: create mask: mode 17777 is out of range (0..07777)");
  CHECK(err("[s]\npath = /srv\ncreate mask =\n") == "t.conf:3: create mask: '' is not an octal mode such as 0644");
}

TEST_CASE("force user and force group", "[config][share-options]") {
  auto s = share("force user = www-data\nforce group = +staff");
  CHECK(s.force_user == "www-data");
  CHECK(s.force_group == "+staff");
  CHECK(share("group = media").force_group == "media");
  CHECK(share("").force_user.empty());
  CHECK(err("[s]\npath = /srv\nforce user = a b\n") == "t.conf:3: force user 'a b' is not a valid Unix name");
  CHECK(err("[s]\npath = /srv\nforce user = +x\n") == "t.conf:3: force user '+x' is not a valid Unix name");
  CHECK(err("[s]\npath = /srv\nforce group = g:x\n") == "t.conf:3: force group 'g:x' is not a valid Unix name");
}

TEST_CASE("veto files, hide dot files and the boolean share options", "[config][share-options]") {
  auto s = share("veto files = /*.tmp/.DS_Store/My Secret/~$*/\nhide dot files = no\noplocks = no\n"
                 "smb2 leases = no\nstore dos attributes = yes\nstreams = no\nnt acl support = no\n"
                 "acl flag inherited canonicalization = no");
  CHECK(s.veto_files == std::vector<std::string>{"*.tmp", ".DS_Store", "My Secret", "~$*"});
  CHECK_FALSE(s.hide_dot_files);
  CHECK_FALSE(s.oplocks);
  CHECK_FALSE(s.smb2_leases);
  CHECK(s.store_dos_attributes);
  CHECK_FALSE(s.streams);
  CHECK_FALSE(s.nt_acl_support);
  CHECK_FALSE(s.acl_flag_inherited_canonicalization);
  auto d = share("");
  CHECK(d.nt_acl_support);
  CHECK(d.acl_flag_inherited_canonicalization);
  CHECK(d.streams);
  CHECK(d.veto_files.empty());
  CHECK(d.hide_dot_files);
  CHECK(d.oplocks);
  CHECK(d.smb2_leases);
  CHECK_FALSE(d.store_dos_attributes);
  CHECK(share("veto files = *.tmp").veto_files == std::vector<std::string>{"*.tmp"});
  CHECK(share("veto files = //").veto_files.empty());
  CHECK(err("[s]\npath = /srv\nveto files = /a\\b/\n") == "t.conf:3: veto files: veto pattern 'a\\b' may not contain '\\'");
  CHECK(err("[s]\npath = /srv\nveto files = /" + std::string(8001, 'x') + "/\n") ==
        "t.conf:3: veto files is longer than 8000 characters");
  for (const char* key : {"hide dot files", "oplocks", "smb2 leases", "store dos attributes", "streams",
                          "nt acl support", "acl flag inherited canonicalization"})
    CHECK(err(std::string("[s]\npath = /srv\n") + key + " = sometimes\n") ==
          "t.conf:3: " + std::string(key) + ": 'sometimes' is not a boolean (use yes or no)");
}

TEST_CASE("client symlinks, and Samba's wide links and follow symlinks as ringsmb does them", "[config][share-options]") {
  CHECK_FALSE(share("").client_symlinks);
  CHECK(share("client symlinks = yes").client_symlinks);
  CHECK_FALSE(share("wide links = no\nfollow symlinks = yes").client_symlinks);
  CHECK(err("[s]\npath = /srv\nwide links = yes\n") ==
        "t.conf:3: wide links = yes is not supported: a symlink never leads out of a share");
  CHECK(err("[s]\npath = /srv\nfollow symlinks = no\n") ==
        "t.conf:3: follow symlinks = no is not supported: symlinks inside a share are followed");
  CHECK(err("[s]\npath = /srv\nclient symlinks = maybe\n") ==
        "t.conf:3: client symlinks: 'maybe' is not a boolean (use yes or no)");
}

TEST_CASE("share option keys in [global] are defaults for every share", "[config][share-options]") {
  auto out = ok("[global]\nsmb2 leases = no\nhosts deny = 10.\nveto files = /*.tmp/\n[a]\npath = /a\n"
                "[b]\npath = /b\nsmb2 leases = yes\n");
  REQUIRE(out.config.shares.size() == 2);
  CHECK(out.warnings.empty());
  CHECK_FALSE(out.config.shares[0].smb2_leases);
  CHECK(out.config.shares[1].smb2_leases);
  CHECK(out.config.shares[1].hosts_deny == std::vector<std::string>{"10."});
  CHECK(out.config.shares[0].veto_files == std::vector<std::string>{"*.tmp"});
}

TEST_CASE("a ksmbd.conf / smb.conf share section with every share key", "[config][share-options]") {
  auto out = ok(R"([global]
	workgroup = HOME
	netbios name = NAS
	server string = Home NAS
	max connections = 64
	max open files = 20000
	smb2 max credits = 2048
	smb2 max read = 1M
	smb2 max write = 1M
	smb2 max trans = 1M
	deadtime = 15
	log level = 2

[projects]
	path = /srv/projects
	read only = no
	valid users = @staff alice
	invalid users = root
	read list = guest
	write list = @admins
	hosts allow = 192.168.1. 127.0.0.1
	hosts deny = 0.0.0.0/0
	create mask = 0664
	directory mask = 0775
	force user = projects
	force group = staff
	hide dot files = yes
	veto files = /.DS_Store/._*/Thumbs.db/
	oplocks = yes
	smb2 leases = yes
	case sensitive = no
	store dos attributes = yes
)");
  CHECK(out.warnings.empty());
  const auto& g = out.config.global;
  CHECK(g.workgroup == "HOME");
  CHECK(g.max_connections == 64);
  CHECK(g.max_open_files == 20000);
  CHECK(g.smb2_max_credits == 2048);
  CHECK(g.smb2_max_read == 1024u * 1024);
  CHECK(g.deadtime_minutes == 15);
  CHECK(g.log_level == 2);
  const auto* p = out.config.find_share("projects");
  REQUIRE(p);
  CHECK(p->write_list == std::vector<std::string>{"@admins"});
  CHECK(p->hosts_deny == std::vector<std::string>{"0.0.0.0/0"});
  CHECK(p->create_mask == 0664);
  CHECK(p->force_group == "staff");
  CHECK(p->veto_files == std::vector<std::string>{".DS_Store", "._*", "Thumbs.db"});
}

TEST_CASE("parse_config_file", "[config]") {
  char tmpl[] = "/tmp/ringsmb-config-XXXXXX";
  int fd = mkstemp(tmpl);
  REQUIRE(fd >= 0);
  close(fd);
  std::string path = tmpl;
  {
    std::ofstream f(path);
    f << "[global]\nworkers = 7\n[x]\npath = /tmp\nwat = 1\n";
  }
  auto r = parse_config_file(path);
  REQUIRE(r);
  CHECK(r->config.global.workers == 7);
  CHECK(r->warnings == std::vector<std::string>{path + ":5: unknown key 'wat' in [x]"});
  {
    std::ofstream f(path);
    f << "[global]\nworkers = many\n";
  }
  r = parse_config_file(path);
  REQUIRE_FALSE(r);
  CHECK(r.error() == path + ":2: workers: 'many' is not a number");
  std::remove(path.c_str());
  r = parse_config_file(path);
  REQUIRE_FALSE(r);
  CHECK(r.error() == path + ": cannot open: No such file or directory");
}

TEST_CASE("a share whose path is missing or not a directory is a warning of the file", "[config]") {
  char dir[] = "/tmp/ringsmb-config-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string base = dir;
  std::string conf = base + "/ringsmb.conf";
  std::ofstream(base + "/plain") << "x";
  std::ofstream(conf) << "[global]\n\n[here]\n  path = " << base << "\n\n[gone]\n  path = " << base
                      << "/missing\n\n[file]\n  path = " << base << "/plain\n";
  auto parsed = parse_config_file(conf);
  REQUIRE(parsed);
  REQUIRE(parsed->warnings.size() == 2);
  CHECK(parsed->warnings[0] == conf + ":6: share [gone]: path " + base + "/missing: No such file or directory");
  CHECK(parsed->warnings[1] == conf + ":9: share [file]: path " + base + "/plain is not a directory");
  // The text parser stays free of file-system look-ups.
  CHECK(parse_config_text("[gone]\n  path = /nonexistent-ringsmb\n", "t")->warnings.empty());
  std::remove((base + "/plain").c_str());
  std::remove(conf.c_str());
  rmdir(dir);
}

TEST_CASE("resource limits: defaults, values and ranges", "[config]") {
  auto d = global("");
  CHECK(d.max_connections == 2048);
  CHECK(d.max_connections_per_address == 256);
  CHECK(d.max_open_files_per_user == 16384);
  CHECK(d.max_send_queue_bytes == 32u * 1024 * 1024);
  CHECK(d.login_timeout_s == 30);
  auto g = global(
      "max connections per address = 8\nmax open files per user = 100\nmax send queue size = 64M\n"
      "login timeout = 5");
  CHECK(g.max_connections_per_address == 8);
  CHECK(g.max_open_files_per_user == 100);
  CHECK(g.max_send_queue_bytes == 64u * 1024 * 1024);
  CHECK(g.login_timeout_s == 5);
  CHECK(global("max connections per address = 0").max_connections_per_address == 0);
  CHECK(err("[global]\nmax send queue size = 1M\n") == "t.conf:2: max send queue size: 1M is out of range (9437184..1073741824)");
  CHECK(err("[global]\nlogin timeout = 0\n") == "t.conf:2: login timeout: 0 is out of range (1..3600)");
  CHECK(err("[global]\nmax open files per user = 0\n") == "t.conf:2: max open files per user: 0 is out of range (1..16777216)");
}

TEST_CASE("max notify watches: default, off, range", "[config]") {
  CHECK(global("").max_notify_watches == 8192);
  CHECK(global("max notify watches = 200000").max_notify_watches == 200000);
  CHECK(global("max notify watches = 0").max_notify_watches == 0);  // change notification off
  CHECK(err("[global]\nmax notify watches = 2000000\n") == "t.conf:2: max notify watches: 2000000 is out of range (0..1000000)");
}

TEST_CASE("max stream size, max stream space per user: defaults, sizes, range", "[config]") {
  CHECK(global("").max_stream_bytes == 64ull << 20);
  CHECK(global("").max_stream_space_per_user == 1ull << 30);
  CHECK(global("max stream size = 8M").max_stream_bytes == 8ull << 20);
  CHECK(global("max stream size = 16G").max_stream_bytes == 16ull << 30);
  CHECK(global("max stream space per user = 100G").max_stream_space_per_user == 100ull << 30);
  CHECK(global("max stream space per user = 0").max_stream_space_per_user == 0);  // no bound
  CHECK(err("[global]\nmax stream size = 1K\n") == "t.conf:2: max stream size: 1K is out of range (65536..1099511627776)");
  CHECK(err("[global]\nmax stream space per user = 2048G\n").find("out of range") != std::string::npos);
}

TEST_CASE("metrics listen: off by default, loopback unless an address is given", "[config]") {
  CHECK(global("").metrics_port == 0);
  auto g = global("metrics listen = 9922");
  CHECK(g.metrics_host == "127.0.0.1");
  CHECK(g.metrics_port == 9922);
  g = global("metrics listen = 192.0.2.7:80");
  CHECK(g.metrics_host == "192.0.2.7");
  CHECK(g.metrics_port == 80);
  g = global("metrics listen = [::1]:9922");
  CHECK(g.metrics_host == "::1");
  CHECK(g.metrics_port == 9922);
  CHECK(global("metrics listen = no").metrics_port == 0);
  CHECK(err("[global]\nmetrics listen = localhost:9922\n").find("t.conf:2:") != std::string::npos);
  CHECK(err("[global]\nmetrics listen = localhost:9922\n").find("not a numeric") != std::string::npos);
  CHECK(err("[global]\nmetrics listen = 127.0.0.1:70000\n").find("t.conf:2:") != std::string::npos);
  CHECK(err("[global]\nmetrics listen = 127.0.0.1:\n").find("metrics listen") != std::string::npos);
}

TEST_CASE("Kerberos keys: realm, kerberos method, dedicated keytab file", "[config]") {
  CHECK_FALSE(kerberos_keytab(global("")));
  CHECK_FALSE(kerberos_keytab(global("realm = example.test")));  // Samba's default method: secrets only
  auto g = global("realm = example.test\nkerberos method = dedicated keytab\ndedicated keytab file = /etc/ringsmb.keytab");
  CHECK(g.realm == "EXAMPLE.TEST");
  CHECK(kerberos_keytab(g) == "FILE:/etc/ringsmb.keytab");
  g = global("realm = EXAMPLE.TEST\nkerberos method = dedicated keytab\ndedicated keytab file = FILE:/k");
  CHECK(kerberos_keytab(g) == "FILE:/k");
  CHECK_FALSE(kerberos_keytab(global("realm = X\nkerberos method = dedicated keytab")));
  CHECK(kerberos_keytab(global("realm = X\nkerberos method = system keytab")) == "");
  CHECK(kerberos_keytab(global("realm = X\nkerberos method = secrets and keytab")) == "");
  CHECK_FALSE(kerberos_keytab(global("kerberos method = system keytab")));  // no realm
  CHECK(err("[global]\nkerberos method = sometimes\n").find("bad kerberos method") != std::string::npos);
}

TEST_CASE("security = ads reads the system keytab where Samba would read secrets.tdb", "[config]") {
  CHECK(global("").security == SecurityMode::User);
  CHECK(global("security = auto").security == SecurityMode::User);
  auto g = global("security = ADS\nrealm = example.test");
  CHECK(g.security == SecurityMode::Ads);
  CHECK(kerberos_keytab(g) == "");
  CHECK(kerberos_keytab(global("security = ads\nrealm = X\nkerberos method = dedicated keytab\n"
                               "dedicated keytab file = /k")) == "FILE:/k");
  CHECK_FALSE(kerberos_keytab(global("security = ads")));  // no realm
  CHECK(err("[global]\nsecurity = domain\n").find("security 'domain' is not supported") != std::string::npos);
}

TEST_CASE("vfs objects = shadow_copy2 and the shadow: keys", "[config][snapshots]") {
  auto c = ok("[s]\n path = /srv/s\n vfs objects = acl_xattr shadow_copy2\n shadow:snapdir = /srv/.snaps\n"
              " shadow:format = daily-%Y%m%d-%H%M\n shadow:sort = asc\n shadow:localtime = yes\n");
  REQUIRE(c.warnings.empty());
  const ShareConfig& s = c.config.shares.at(0);
  CHECK(s.shadow.enabled);
  CHECK(s.shadow.snapdir == "/srv/.snaps");
  CHECK(s.shadow.format == "daily-%Y%m%d-%H%M");
  CHECK_FALSE(s.shadow.sort_descending);
  CHECK(s.shadow.localtime);
  CHECK_FALSE(ok("[s]\n path = /srv/s\n vfs objects = recycle\n").config.shares.at(0).shadow.enabled);
  CHECK_FALSE(ok("[s]\n path = /srv/s\n").config.shares.at(0).shadow.enabled);
  // snapper (Samba's module for snapper's snapshots) turns them on too; no
  // shadow:snapdir: the usual layouts are found (vfs/snapshots.hpp).
  auto snapper = ok("[s]\n path = /srv/s\n vfs objects = snapper\n").config.shares.at(0).shadow;
  CHECK(snapper.enabled);
  CHECK(snapper.snapdir.empty());
  CHECK(err("[s]\n path = /srv/s\n shadow:snapdir = ../../etc\n").find("t.conf:3:") != std::string::npos);
  CHECK(err("[s]\n path = /srv/s\n shadow:snapdir = .snap/../../x\n").find("'..'") != std::string::npos);
  CHECK(err("[s]\n path = /srv/s\n shadow:mountpoint = /srv\n shadow:snapdir = /var/snaps\n")
            .find("t.conf:4:") != std::string::npos);
  CHECK(err("[s]\n path = /srv/s\n shadow:mountpoint = srv\n").find("absolute") != std::string::npos);
  CHECK(err("[s]\n path = /srv/s\n shadow:format = %Q\n").find("t.conf:3:") != std::string::npos);
}
