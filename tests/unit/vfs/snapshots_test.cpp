#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "vfs/snapshots.hpp"
#include "vfs/temp_dir.hpp"

using namespace ringsmb::vfs;

TEST_CASE("@GMT tokens", "[vfs][snapshots]") {
  CHECK(parse_gmt_token("@GMT-2026.01.02-11.30.00") == 1767353400);
  CHECK(gmt_token(1767353400) == "@GMT-2026.01.02-11.30.00");
  CHECK_FALSE(parse_gmt_token("@GMT-2026.01.02-11.30"));
  CHECK_FALSE(parse_gmt_token("@GMT-2026.01.02-11.30.00x"));
  CHECK_FALSE(parse_gmt_token("GMT-2026.01.02-11.30.00"));
  std::string p = "@GMT-2026.01.02-11.30.00/a/b";
  CHECK(take_gmt_token(p) == 1767353400);
  CHECK(p == "a/b");
  p = "a/@GMT-2026.01.02-11.30.00/b";
  CHECK(take_gmt_token(p));
  CHECK(p == "a/b");
  p = "a/@GMT-2026.01.02-11.30.00";
  CHECK(take_gmt_token(p));
  CHECK(p == "a");
  p = "@GMT-2026.01.02-11.30.00";
  CHECK(take_gmt_token(p));
  CHECK(p.empty());
  p = "a/@GMT-notatoken/b";
  CHECK_FALSE(take_gmt_token(p));
  CHECK(p == "a/@GMT-notatoken/b");
}

TEST_CASE("snapshot names under a format", "[vfs][snapshots]") {
  CHECK(snapshot_name_time("daily-2026-01-02_113000", "daily-%Y-%m-%d_%H%M%S", false) == 1767353400);
  CHECK_FALSE(snapshot_name_time("weekly-2026-01-02_113000", "daily-%Y-%m-%d_%H%M%S", false));
  CHECK_FALSE(snapshot_name_time("daily-2026-01-02_113000.old", "daily-%Y-%m-%d_%H%M%S", false));
}

TEST_CASE("snapshot layout stays beneath the mount point", "[vfs][snapshots]") {
  SnapshotSource s;
  s.share_path = "/pool/data/share";
  std::string why;
  auto l = snapshot_layout(s, "/pool", &why);
  REQUIRE(l);
  CHECK(l->snapdir_below_mount == ".snapshots");
  CHECK(l->share_in_snapshot == "data/share");
  s.basedir = "/pool/data";
  l = snapshot_layout(s, "/pool", &why);
  REQUIRE(l);
  CHECK(l->share_in_snapshot == "share");
  s.snapdir = "/elsewhere/snaps";
  CHECK_FALSE(snapshot_layout(s, "/pool", &why));
  CHECK(why.find("not beneath the mount point") != std::string::npos);
  s.snapdir = "/pool/snaps";
  l = snapshot_layout(s, "/pool", &why);
  REQUIRE(l);
  CHECK(l->snapdir_below_mount == "snaps");
  s.basedir = "/other";
  CHECK_FALSE(snapshot_layout(s, "/pool", &why));
}

TEST_CASE("snapshots are listed and opened beneath the snapshot directory", "[vfs][snapshots]") {
  test::TempDir d;
  namespace fs = std::filesystem;
  const fs::path root = d.path();
  fs::create_directories(root / "share");
  fs::create_directories(root / ".snapshots/@GMT-2026.01.01-10.00.00/share");
  fs::create_directories(root / ".snapshots/@GMT-2026.01.02-11.30.00/share");
  fs::create_directories(root / ".snapshots/@GMT-2026.01.03-00.00.00/other");  // lacks the share
  fs::create_directories(root / ".snapshots/not-a-snapshot/share");
  std::ofstream(root / ".snapshots/@GMT-2026.01.01-10.00.00/share/f") << "old";
  // A share copy that is a symlink out of the snapshot directory is no copy.
  fs::create_directories(root / ".snapshots/@GMT-2026.01.04-00.00.00");
  fs::create_directory_symlink("/etc", root / ".snapshots/@GMT-2026.01.04-00.00.00/share");
  SnapshotSource s;
  s.share_path = (root / "share").string();
  s.mountpoint = root.string();
  auto list = list_snapshots(s);
  REQUIRE(list.size() == 2);
  CHECK(list[0].name == "@GMT-2026.01.02-11.30.00");  // newest first by default
  CHECK(list[1].name == "@GMT-2026.01.01-10.00.00");
  s.sort_descending = false;
  CHECK(list_snapshots(s)[0].name == "@GMT-2026.01.01-10.00.00");
  auto fd = open_snapshot_root(s, 1767261600);  // 2026-01-01 10:00:00 UTC
  REQUIRE(fd);
  CHECK(faccessat(*fd, "f", F_OK, 0) == 0);
  close(*fd);
  CHECK(open_snapshot_root(s, 1767261601).error() == ringsmb::NtStatus::ObjectNameNotFound);
  CHECK(open_snapshot_root(s, 1767484800).error() == ringsmb::NtStatus::ObjectPathNotFound);  // the symlink
}
