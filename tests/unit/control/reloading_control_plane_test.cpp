#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.hpp"
#include "control/reloading_control_plane.hpp"

using namespace ringsmb;
using namespace ringsmb::ipc;
using namespace ringsmb::control;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

NtStatus connect(ControlPlane& cp, const std::string& share) {
  TreeConnectRequest req;
  req.share = share;
  req.user = "alice";
  return cp.tree_connect(req).status;
}

}  // namespace

TEST_CASE("the --no-ctld control plane applies the file on reload, and only a valid one", "[ipc][reload]") {
  char tmpl[] = "/tmp/ringsmb-reload-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string dir = tmpl, path = dir + "/ringsmb.conf";
  std::string base = "[global]\nusers db = " + dir + "/users.db\n\n[a]\npath = " + dir + "\n";
  write(path, base);
  auto parsed = config::parse_config_file(path);
  REQUIRE(parsed);
  auto cp = make_reloading_local_control_plane(parsed->config, path);
  CHECK(connect(*cp, "a") == NtStatus::Success);
  CHECK(connect(*cp, "b") == NtStatus::BadNetworkName);

  write(path, base + "\n[b]\npath = " + dir + "\nread only = no\n");
  CHECK(connect(*cp, "b") == NtStatus::BadNetworkName);  // not before the reload
  REQUIRE(cp->reload_config());
  CHECK(connect(*cp, "b") == NtStatus::Success);

  write(path, base + "[broken\n");
  auto bad = cp->reload_config();
  REQUIRE_FALSE(bad);
  CHECK(bad.error().starts_with(path + ":"));
  CHECK(connect(*cp, "b") == NtStatus::Success);  // the previous configuration stays

  cp->reload();  // SIGHUP's entry point: the same, without the message
  CHECK(connect(*cp, "b") == NtStatus::Success);
  write(path, base);
  cp->reload();
  CHECK(connect(*cp, "b") == NtStatus::BadNetworkName);
  std::filesystem::remove_all(dir);
}
