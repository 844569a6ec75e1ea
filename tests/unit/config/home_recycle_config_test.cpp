#include <catch2/catch.hpp>

#include "config/config.hpp"
#include "config/substitution.hpp"

using namespace ringsmb::config;

namespace {

CheckedConfig check(const std::string& text) { return check_config_text(text, "t.conf"); }

bool has_error(const CheckedConfig& c, const std::string& part) {
  for (const auto& e : c.errors)
    if (e.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("substitutions: %U %S %H expanded, other tokens kept and reported", "[config][substitution]") {
  Substitutions v{"alice", "docs", "/home/alice"};
  CHECK(substitute("/srv/%S/%U", v) == "/srv/docs/alice");
  CHECK(substitute("%H/.recycle", v) == "/home/alice/.recycle");
  CHECK(substitute("100% sure %m", v) == "100% sure %m");
  CHECK(has_substitution("a%Ub"));
  CHECK_FALSE(has_substitution("100%"));
  CHECK(unexpanded_token("/srv/%m") == "%m");
  CHECK(unexpanded_token("/srv/%$(HOME)") == "%$(");
  CHECK_FALSE(unexpanded_token("/srv/%U/%S/%H/50%"));
}

TEST_CASE("[homes]: a template, not a share; a fixed path is refused", "[config][homes]") {
  auto c = check("[homes]\nbrowseable = no\nread only = no\nvalid users = %S\n");
  REQUIRE(c.errors.empty());
  REQUIRE(c.config.homes);
  CHECK(c.config.shares.empty());
  CHECK(c.config.homes->path.empty());
  CHECK_FALSE(c.config.homes->browseable);
  CHECK(c.config.homes->valid_users == std::vector<std::string>{"%S"});

  auto fixed = check("[global]\nworkgroup = W\n[homes]\npath = /srv/homes\n");
  CHECK(has_error(fixed, "t.conf:4: [homes]: path /srv/homes is the same for every user"));
  CHECK(check("[homes]\npath = /srv/homes/%S\n").errors.empty());
  CHECK(has_error(check("[homes]\n[homes]\n"), "duplicate [homes]"));
}

TEST_CASE("%-tokens: refused where nothing expands them, with the line", "[config][substitution]") {
  CHECK(has_error(check("[a]\npath = /srv/%m\n"), "t.conf:2: path: '%m' is not expanded"));
  CHECK(has_error(check("[a]\npath = /srv\nforce user = %U\n"), "t.conf:3: force user: %U, %S and %H are not expanded"));
  CHECK(check("[a]\npath = /srv/%U\ncomment = %U's files\nvalid users = %U, @staff\n").errors.empty());
  CHECK(has_error(check("[a]\npath = /srv/a\nvfs objects = recycle\nrecycle:repository = %H/bin\n"), "is outside"));
}

TEST_CASE("recycle: Samba's keys and defaults", "[config][recycle]") {
  auto c = check(
      "[a]\npath = /srv/a\nvfs objects = recycle\nrecycle:repository = .recycle/%U\nrecycle:keeptree = yes\n"
      "recycle:versions = yes\nrecycle:touch = yes\nrecycle:maxsize = 10M\nrecycle: minsize = 1\n"
      "recycle:exclude = *.tmp, *.temp ~$*\nrecycle:exclude_dir = tmp;cache\nrecycle:noversions = *.doc\n"
      "recycle:directory_mode = 0770\nrecycle:subdir_mode = 0700\n");
  REQUIRE(c.errors.empty());
  CHECK(c.warnings.empty());
  const RecycleConfig& r = c.config.shares.at(0).recycle;
  CHECK(r.enabled);
  CHECK(r.repository == ".recycle/%U");
  CHECK(r.keeptree);
  CHECK(r.versions);
  CHECK(r.touch);
  CHECK_FALSE(r.touch_mtime);
  CHECK(r.maxsize_bytes == 10u << 20);
  CHECK(r.minsize_bytes == 1);
  CHECK(r.exclude == std::vector<std::string>{"*.tmp", "*.temp", "~$*"});
  CHECK(r.exclude_dir == std::vector<std::string>{"tmp", "cache"});
  CHECK(r.noversions == std::vector<std::string>{"*.doc"});
  CHECK(r.directory_mode == 0770);
  CHECK(r.subdir_mode == 0700u);

  auto d = check("[a]\npath = /srv/a\nvfs objects = recycle\n");
  CHECK(d.config.shares.at(0).recycle.repository == ".recycle");
  CHECK(d.config.shares.at(0).recycle.directory_mode == 0700);
  CHECK_FALSE(check("[a]\npath = /srv/a\nrecycle:keeptree = yes\n").config.shares.at(0).recycle.enabled);
}

TEST_CASE("recycle: a repository outside the share is refused with its line", "[config][recycle]") {
  CHECK(has_error(check("[a]\npath = /srv/a\nvfs objects = recycle\nrecycle:repository = ../bin\n"),
                  "t.conf:4: share [a]: recycle:repository ../bin leaves the share"));
  CHECK(has_error(check("[a]\npath = /srv/a\nvfs objects = recycle\nrecycle:repository = /srv/b/.recycle\n"),
                  "t.conf:4: share [a]: recycle:repository /srv/b/.recycle is outside"));
  CHECK(has_error(check("[a]\npath = /srv/a\nvfs objects = recycle\nrecycle:repository = /srv/ab\n"), "is outside"));
  auto abs = check("[a]\npath = /srv/a\nvfs objects = recycle\nrecycle:repository = /srv/a/bin/%U\n");
  REQUIRE(abs.errors.empty());
  CHECK(abs.config.shares.at(0).recycle.repository == "bin/%U");
  CHECK(has_error(check("[a]\npath = /srv/a\nvfs objects = recycle\nrecycle:repository = a/../..\n"), "'..'"));
  CHECK(has_error(check("[a]\npath = /srv/a\nrecycle:exclude = a/b\n"), "contains '/'"));
  auto homes = check("[homes]\nvfs objects = recycle\nrecycle:repository = %H/.bin\n");
  REQUIRE(homes.errors.empty());
  CHECK(homes.config.homes->recycle.repository == ".bin");
  CHECK(has_error(check("[homes]\nvfs objects = recycle\nrecycle:repository = /tmp/x\n"), "[homes]: recycle"));
}

TEST_CASE("vfs objects: unknown modules are reported, not fatal", "[config][recycle]") {
  auto c = check("[a]\npath = /srv/a\nvfs objects = full_audit recycle\n");
  REQUIRE(c.errors.empty());
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("t.conf:3: vfs objects: 'full_audit' is not supported") != std::string::npos);
  CHECK(c.config.shares.at(0).recycle.enabled);
}
