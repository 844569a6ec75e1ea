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
  CHECK(l->snapdir_below_mount.empty());  // found at the mount point
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
  CHECK(list[0].name == ".snapshots/@GMT-2026.01.02-11.30.00");  // newest first by default
  CHECK(list[1].name == ".snapshots/@GMT-2026.01.01-10.00.00");
  s.sort_descending = false;
  CHECK(list_snapshots(s)[0].name == ".snapshots/@GMT-2026.01.01-10.00.00");
  auto fd = open_snapshot_root(s, 1767261600);  // 2026-01-01 10:00:00 UTC
  REQUIRE(fd);
  CHECK(faccessat(*fd, "f", F_OK, 0) == 0);
  close(*fd);
  CHECK(open_snapshot_root(s, 1767261601).error() == ringsmb::NtStatus::ObjectNameNotFound);
  CHECK(open_snapshot_root(s, 1767484800).error() == ringsmb::NtStatus::ObjectPathNotFound);  // the symlink
}

TEST_CASE("snapper's and ZFS's snapshots are found without a snapshot directory", "[vfs][snapshots]") {
  test::TempDir d;
  namespace fs = std::filesystem;
  const fs::path root = d.path();
  fs::create_directories(root / "share");
  // snapper: .snapshots/<N>/snapshot, the time (UTC) in <N>/info.xml.
  fs::create_directories(root / ".snapshots/7/snapshot/share");
  std::ofstream(root / ".snapshots/7/info.xml")
      << "<?xml version=\"1.0\"?>\n<snapshot>\n  <type>single</type>\n  <num>7</num>\n"
         "  <date>2026-01-02 11:30:00</date>\n</snapshot>\n";
  std::ofstream(root / ".snapshots/7/snapshot/share/f") << "snapper";
  fs::create_directories(root / ".snapshots/8/snapshot/share");  // no info.xml: no time, no snapshot
  fs::create_directories(root / ".zfs/snapshot/@GMT-2026.01.03-00.00.00/share");
  SnapshotSource s;
  s.share_path = (root / "share").string();
  s.mountpoint = root.string();
  auto list = list_snapshots(s);
  REQUIRE(list.size() == 2);
  CHECK(list[0].name == ".zfs/snapshot/@GMT-2026.01.03-00.00.00");
  CHECK(list[1].name == ".snapshots/7/snapshot");
  CHECK(list[1].unix_time == 1767353400);
  auto fd = open_snapshot_root(s, 1767353400);
  REQUIRE(fd);
  CHECK(faccessat(*fd, "f", F_OK, 0) == 0);
  close(*fd);
  // A configured directory is the only place looked at.
  s.snapdir = ".zfs/snapshot";
  list = list_snapshots(s);
  REQUIRE(list.size() == 1);
  CHECK(list[0].name == ".zfs/snapshot/@GMT-2026.01.03-00.00.00");
}
