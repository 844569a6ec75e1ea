// check_config_text (every error in one pass, with the key) and
// check_system (the accounts, groups and directories a file names).
#include <catch2/catch.hpp>

#include <cerrno>

#include "config/config.hpp"
#include "config/config_check.hpp"

using namespace ringsmb::config;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& text) {
  for (const auto& s : v)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

// A machine with Unix users alice and nobody, group staff, the directory
// /srv/ok, the file /srv/file, and SMB users alice and bob.
SystemView fake_machine() {
  SystemView v;
  v.unix_user_exists = [](const std::string& n) { return n == "alice" || n == "nobody"; };
  v.unix_group_exists = [](const std::string& n) { return n == "staff"; };
  v.directory_error = [](const std::string& p) {
    if (p == "/srv/ok" || p == "/var/lib/ringsmb") return 0;
    return p == "/srv/file" ? ENOTDIR : ENOENT;
  };
  v.smb_users = [](const std::string&) -> std::expected<std::set<std::string>, std::string> {
    return std::set<std::string>{"alice", "bob"};
  };
  return v;
}

CheckedConfig checked(const std::string& text) {
  CheckedConfig c = check_config_text(text, "t.conf");
  check_system(c, "t.conf", fake_machine());
  return c;
}

}  // namespace

TEST_CASE("every bad value is reported, each with its line and key", "[config][check]") {
  auto c = check_config_text(
      "[global]\n"
      "  max open files = lots\n"
      "  deadtime = -1\n"
      "[a]\n"
      "  path = /srv/a\n"
      "  read only = perhaps\n"
      "  bogus key = 1\n",
      "t.conf");
  REQUIRE(c.errors.size() == 3);
  CHECK(c.errors[0] == "t.conf:2: max open files: 'lots' is not a number");
  CHECK(c.errors[1] == "t.conf:3: deadtime: '-1' is not a number");
  CHECK(c.errors[2] == "t.conf:6: read only: 'perhaps' is not a boolean (use yes or no)");
  CHECK(contains(c.warnings, "t.conf:7: unknown key 'bogus key' in [a]"));
  // The share with a bad value is still there, with what parsed.
  REQUIRE(c.config.shares.size() == 1);
  CHECK(c.config.shares[0].path == "/srv/a");
}

TEST_CASE("lines that are not key = value are errors, and checking goes on", "[config][check]") {
  auto c = check_config_text("[global]\nworkers 4\n[bad\n  path = /x\n[b]\n  path = rel\n  guest ok = 2\n", "t.conf");
  REQUIRE(c.errors.size() == 4);
  CHECK(c.errors[0] == "t.conf:2: expected 'key = value', got 'workers 4'");
  CHECK(c.errors[1] == "t.conf:3: malformed section header '[bad'");
  CHECK(c.errors[2] == "t.conf:6: path 'rel' must be absolute");
  CHECK(c.errors[3] == "t.conf:7: guest ok: '2' is not a boolean (use yes or no)");
  // The entries under the bad header are skipped, not given to [global].
  CHECK(c.config.shares.empty());
}

TEST_CASE("parse_config_text reports every error, one a line", "[config][check]") {
  auto r = parse_config_text("[global]\nworkers = x\nlog level = 11\n", "t.conf");
  REQUIRE_FALSE(r);
  CHECK(r.error() == "t.conf:2: workers: 'x' is not a number\nt.conf:3: log level: 11 is out of range (0..10)");
}

TEST_CASE("a trailing comment is part of the value, as in Samba", "[config][check]") {
  auto c = check_config_text("[global]\nmetrics listen = 9922   # http://127.0.0.1:9922/metrics\n", "t.conf");
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].starts_with("t.conf:2: metrics listen: "));
}

TEST_CASE("check_system: a share that cannot work is an error", "[config][check]") {
  auto c = checked(
      "[global]\n"
      "[missing]\n  path = /srv/none\n"
      "[file]\n  path = /srv/file\n"
      "[forced]\n  path = /srv/ok\n  force user = mallory\n  force group = +nogroup\n"
      "[nobody_valid]\n  path = /srv/ok\n  valid users = carol, @nogroup\n");
  CHECK(contains(c.errors, "t.conf:3: share [missing]: path /srv/none: No such file or directory"));
  CHECK(contains(c.errors, "t.conf:5: share [file]: path /srv/file is not a directory"));
  CHECK(contains(c.errors, "t.conf:8: share [forced]: force user: no Unix user 'mallory'"));
  CHECK(contains(c.errors, "t.conf:9: share [forced]: force group: no Unix group 'nogroup'"));
  CHECK(contains(c.errors, "t.conf:12: share [nobody_valid]: valid users: none of the users and groups exists"));
  CHECK(contains(c.warnings, "t.conf:12: share [nobody_valid]: valid users: 'carol': no such user in the users db"));
  CHECK(contains(c.warnings, "t.conf:12: share [nobody_valid]: valid users: '@nogroup': no Unix group 'nogroup'"));
  CHECK(c.errors.size() == 5);
}

TEST_CASE("check_system: names that exist pass; a missing one beside them warns", "[config][check]") {
  auto c = checked(
      "[global]\n  admin users = alice\n"
      "[ok]\n  path = /srv/ok\n  valid users = ALICE, @staff, ghost\n  write list = bob\n  force user = alice\n"
      "  force group = staff\n  read list = &netgroup\n");
  CHECK(c.errors.empty());
  CHECK(contains(c.warnings, "t.conf:5: share [ok]: valid users: 'ghost': no such user in the users db"));
  CHECK(contains(c.warnings, "t.conf:9: share [ok]: read list: '&netgroup': NIS netgroups are not supported"));
  CHECK(c.warnings.size() == 2);
}

TEST_CASE("check_system: keys set in [global] are found there", "[config][check]") {
  auto c = checked("[global]\n  force user = mallory\n[a]\n  path = /srv/ok\n");
  CHECK(contains(c.errors, "t.conf:2: share [a]: force user: no Unix user 'mallory'"));
}

TEST_CASE("check_system: a missing guest account is an error only where guests are let in", "[config][check]") {
  auto quiet = checked("[global]\n  guest account = ghost\n[a]\n  path = /srv/ok\n");
  CHECK(quiet.errors.empty());
  CHECK(contains(quiet.warnings, "t.conf:2: guest account: no Unix user 'ghost'"));
  auto guests = checked("[global]\n  guest account = ghost\n[a]\n  path = /srv/ok\n  guest ok = yes\n");
  CHECK(contains(guests.errors, "t.conf:2: guest account: no Unix user 'ghost'; guest access fails"));
  auto mapped = checked("[global]\n  guest account = ghost\n  map to guest = bad user\n");
  CHECK(mapped.errors.size() == 1);
}

TEST_CASE("check_system: an unreadable users db skips the user names with a warning", "[config][check]") {
  CheckedConfig c = check_config_text("[a]\n  path = /srv/ok\n  valid users = carol\n", "t.conf");
  SystemView v = fake_machine();
  v.smb_users = [](const std::string&) -> std::expected<std::set<std::string>, std::string> {
    return std::unexpected("/var/lib/ringsmb/users.db: permission denied");
  };
  check_system(c, "t.conf", v);
  CHECK(c.errors.empty());
  CHECK(contains(c.warnings, "users db: /var/lib/ringsmb/users.db: permission denied; user names are not checked"));
}

TEST_CASE("check_system: with no users yet, user names are not checked", "[config][check]") {
  CheckedConfig c = check_config_text("[a]\n  path = /srv/ok\n  valid users = carol, @nogroup\n", "t.conf");
  SystemView v = fake_machine();
  v.smb_users = [](const std::string&) -> std::expected<std::set<std::string>, std::string> { return {}; };
  check_system(c, "t.conf", v);
  CHECK(c.errors.empty());
  CHECK(contains(c.warnings, "has no users yet (ringsmbctl user add NAME); user names are not checked"));
  CHECK(contains(c.warnings, "'@nogroup': no Unix group 'nogroup'"));
  CHECK(c.warnings.size() == 2);
}

TEST_CASE("check_config_file refuses a directory", "[config][check]") {
  auto r = check_config_file("/");
  REQUIRE_FALSE(r);
  CHECK(r.error() == "/: is a directory, not a configuration file");
  CHECK_FALSE(parse_config_file("/"));
}
