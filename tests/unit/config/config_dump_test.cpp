// config show's text: every setting, and it parses back to the same values.
#include <catch2/catch.hpp>

#include "config/config.hpp"
#include "config/config_dump.hpp"

using namespace ringsmb::config;

namespace {

std::string dump(const Config& c) {
  std::string out = render_section("global", global_settings(c.global));
  for (const auto& s : c.shares) out += render_section(s.name, share_settings(s, c.global));
  return out;
}

Config parsed(const std::string& text) {
  auto r = parse_config_text(text, "t.conf");
  if (!r) FAIL(r.error());
  return r->config;
}

}  // namespace

TEST_CASE("config show prints the defaults of every key", "[config][dump]") {
  std::string text = dump(parsed(""));
  for (const char* line : {"\tserver min protocol = SMB2_02\n", "\tserver max protocol = SMB3_11\n",
                           "\tlog level = 1\n", "\tmetrics listen = no\n", "\tguest account = nobody\n",
                           "\tsmb2 max write = 1048576\n", "\tmap to guest = never\n"})
    CHECK(text.find(line) != std::string::npos);
}

TEST_CASE("config show's text parses back to the same configuration", "[config][dump]") {
  Config c = parsed(
      "[global]\n  tcp port = 10445 445\n  metrics listen = [::1]:9922\n  admin users = alice, \"Big Boss\"\n"
      "  server min protocol = SMB3\n  smb3 encryption = desired\n  map to guest = bad user\n  log level = 3\n"
      "[media]\n  path = /srv/media\n  writeable = yes\n  valid users = @\"Domain Users\", bob\n"
      "  hosts allow = 10.0.0.0/8\n  hosts deny = 10.1.0.0/16\n  create mask = 0640\n  veto files = /a b/*.tmp/\n"
      "  force group = +staff\n  smb3 encryption = required\n");
  Config again = parsed(dump(c));
  CHECK(dump(again) == dump(c));
  const ShareConfig& s = again.shares.at(0);
  CHECK(s.valid_users == std::vector<std::string>{"@Domain Users", "bob"});
  CHECK(s.veto_files == std::vector<std::string>{"a b", "*.tmp"});
  CHECK(s.create_mask == 0640);
  CHECK(s.smb3_encryption == EncryptionPolicy::Required);
  CHECK(again.global.metrics_host == "::1");
  CHECK(again.global.metrics_port == 9922);
  CHECK(again.global.admin_users == std::vector<std::string>{"alice", "Big Boss"});
  CHECK(again.global.log_level == 3);
}

TEST_CASE("a share shows the global encryption it inherits", "[config][dump]") {
  Config c = parsed("[global]\nsmb3 encryption = required\n[a]\npath = /srv/a\n");
  bool found = false;
  for (const auto& [k, v] : share_settings(c.shares.at(0), c.global)) found = found || (k == "smb3 encryption" && v == "required");
  CHECK(found);
}
