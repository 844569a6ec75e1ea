#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "smb2/files/recycle.hpp"

using namespace ringsmb;
namespace fs = std::filesystem;

namespace {

struct Share {
  fs::path root;
  int root_fd = -1;
  vfs::NameIndexCache names;
  Share() {
    char tmpl[] = "/tmp/recycle_test.XXXXXX";
    root = mkdtemp(tmpl);
    root_fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  ~Share() {
    close(root_fd);
    fs::remove_all(root);
  }
  void write(const std::string& rel, const std::string& data) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << data;
  }
  smb2::RecycleOutcome remove(const std::string& rel, const config::RecycleConfig& r) {
    fs::path p(rel);
    int dir = open((root / rel).parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    auto out = smb2::move_to_recycle_bin(names, root_fd, dir, rel, p.filename().string(), r);
    close(dir);
    return out;
  }
  bool has(const std::string& rel) const { return fs::exists(root / rel); }
};

config::RecycleConfig bin() {
  config::RecycleConfig r;
  r.enabled = true;
  return r;
}

}  // namespace

TEST_CASE("recycle: a deleted file moves into .recycle, a name taken is replaced", "[smb2][recycle]") {
  Share s;
  s.write("a/doc.txt", "one");
  CHECK(s.remove("a/doc.txt", bin()) == smb2::RecycleOutcome::Moved);
  CHECK_FALSE(s.has("a/doc.txt"));
  CHECK(s.has(".recycle/doc.txt"));
  CHECK((fs::status(s.root / ".recycle").permissions() & fs::perms::all) == fs::perms::owner_all);
  s.write("b/doc.txt", "two");
  CHECK(s.remove("b/doc.txt", bin()) == smb2::RecycleOutcome::Moved);
  std::ifstream in(s.root / ".recycle/doc.txt");
  std::string text;
  in >> text;
  CHECK(text == "two");
  CHECK_FALSE(s.has(".recycle/Copy #1 of doc.txt"));
}

TEST_CASE("recycle: keeptree and versions", "[smb2][recycle]") {
  Share s;
  auto r = bin();
  r.keeptree = true;
  r.versions = true;
  r.noversions = {"*.log"};
  for (int i = 0; i < 3; ++i) {
    s.write("x/y/f.txt", "v");
    CHECK(s.remove("x/y/f.txt", r) == smb2::RecycleOutcome::Moved);
  }
  CHECK(s.has(".recycle/x/y/f.txt"));
  CHECK(s.has(".recycle/x/y/Copy #1 of f.txt"));
  CHECK(s.has(".recycle/x/y/Copy #2 of f.txt"));
  for (int i = 0; i < 2; ++i) {
    s.write("x/app.log", "v");
    CHECK(s.remove("x/app.log", r) == smb2::RecycleOutcome::Moved);
  }
  CHECK(s.has(".recycle/x/app.log"));
  CHECK_FALSE(s.has(".recycle/x/Copy #1 of app.log"));
}

TEST_CASE("recycle: what is not for the bin is left to the caller", "[smb2][recycle]") {
  Share s;
  auto r = bin();
  r.exclude = {"*.TMP"};
  r.exclude_dir = {"cache"};
  r.maxsize_bytes = 5;
  r.minsize_bytes = 2;
  s.write("a.tmp", "abc");
  CHECK(s.remove("a.tmp", r) == smb2::RecycleOutcome::NotMoved);
  s.write("cache/sub/b.txt", "abc");
  CHECK(s.remove("cache/sub/b.txt", r) == smb2::RecycleOutcome::NotMoved);
  s.write("big.txt", "123456");
  CHECK(s.remove("big.txt", r) == smb2::RecycleOutcome::NotMoved);
  s.write("small.txt", "1");
  CHECK(s.remove("small.txt", r) == smb2::RecycleOutcome::NotMoved);
  s.write("ok.txt", "123");
  CHECK(s.remove("ok.txt", r) == smb2::RecycleOutcome::Moved);
  // A file in the bin already is deleted, not recycled again.
  CHECK(s.remove(".recycle/ok.txt", r) == smb2::RecycleOutcome::NotMoved);
  CHECK(s.has("a.tmp"));  // NotMoved leaves the file in place for the caller's unlink
  auto off = bin();
  off.enabled = false;
  CHECK(s.remove("a.tmp", off) == smb2::RecycleOutcome::NotMoved);
}

TEST_CASE("recycle: a symlink in the repository's path is never followed", "[smb2][recycle]") {
  Share s;
  char tmpl[] = "/tmp/recycle_outside.XXXXXX";
  fs::path outside = mkdtemp(tmpl);
  fs::create_directory_symlink(outside, s.root / ".recycle");
  s.write("f.txt", "x");
  CHECK(s.remove("f.txt", bin()) == smb2::RecycleOutcome::NotMoved);
  CHECK(fs::is_empty(outside));
  auto r = bin();
  r.repository = "../escape";
  CHECK(s.remove("f.txt", r) == smb2::RecycleOutcome::NotMoved);
  CHECK_FALSE(fs::exists(s.root.parent_path() / "escape"));
  fs::remove_all(outside);
}
