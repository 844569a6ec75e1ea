#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "temp_dir.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

// Directory mtimes come from a coarse clock: let the setup's changes age so
// the first scan is trusted, and so the next change gets a new mtime.
void let_mtime_age() { std::this_thread::sleep_for(std::chrono::milliseconds(60)); }

int64_t mtime_ns(const std::filesystem::path& p) {
  struct stat st;
  REQUIRE(stat(p.c_str(), &st) == 0);
  return int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

TEST_CASE("fold_case", "[vfs]") {
  CHECK(fold_case("Foo.TXT") == "foo.txt");
  CHECK(fold_case("\xC3\x89T\xC3\x89") == "\xC3\xA9t\xC3\xA9");               // ÉTÉ
  CHECK(fold_case("\xC4\x80\xC4\xB9") == "\xC4\x81\xC4\xBA");                 // ĀĹ -> āĺ
  CHECK(fold_case("\xC5\xB8") == "\xC3\xBF");                                 // Ÿ -> ÿ
  CHECK(fold_case("\xCE\x86\xCE\xA3\xCF\x82") == "\xCE\xAC\xCF\x83\xCF\x83"); // ΆΣς
  CHECK(fold_case("\xD0\x81\xD0\x96") == "\xD1\x91\xD0\xB6");                 // ЁЖ
  CHECK(fold_case("\xE4\xB8\xAD") == "\xE4\xB8\xAD");                         // CJK unchanged
  CHECK(fold_case("\xC3\x97") == "\xC3\x97");                                 // × is not a letter
}

TEST_CASE("name index resolves names in another case", "[vfs]") {
  test::TempDir share;
  share.mkdir("Dir/Sub");
  share.write_file("Foo.TXT", "x");
  share.write_file("Dir/Sub/Leaf.Dat", "y");
  let_mtime_age();
  NameIndexCache cache;
  const int root = share.fd();

  CHECK(resolve_case_insensitive(cache, root, "foo.txt") == "Foo.TXT");
  CHECK(resolve_case_insensitive(cache, root, "FOO.TXT") == "Foo.TXT");
  CHECK(resolve_case_insensitive(cache, root, "DIR/sub/LEAF.dat") == "Dir/Sub/Leaf.Dat");
  // Exact names never need a scan.
  const uint64_t scans = cache.scans();
  CHECK(resolve_case_insensitive(cache, root, "Dir/Sub/Leaf.Dat") == "Dir/Sub/Leaf.Dat");
  CHECK(resolve_case_insensitive(cache, root, "Foo.TXT") == "Foo.TXT");
  CHECK(resolve_case_insensitive(cache, root, "") == "");
  // A second case-insensitive lookup uses the cached index.
  CHECK(resolve_case_insensitive(cache, root, "fOO.txt") == "Foo.TXT");
  CHECK(cache.scans() == scans);
  CHECK(cache.size() == 3);  // root, Dir, Dir/Sub
}

TEST_CASE("name index leaves missing names as given", "[vfs]") {
  test::TempDir share;
  share.mkdir("Dir");
  share.write_file("Dir/File", "x");
  let_mtime_age();
  NameIndexCache cache;
  const int root = share.fd();
  CHECK(resolve_case_insensitive(cache, root, "dir/NewFile") == "Dir/NewFile");
  CHECK(resolve_case_insensitive(cache, root, "nodir/sub/x") == "nodir/sub/x");
  CHECK(resolve_case_insensitive(cache, root, "DIR/FILE/below") == "Dir/File/below");
  CHECK(resolve_case_insensitive(cache, root, "dir/../etc") == "Dir/../etc");
}

TEST_CASE("name index follows the server's own changes without a rescan", "[vfs]") {
  test::TempDir share;
  share.write_file("Existing.txt");
  let_mtime_age();
  NameIndexCache cache;
  const int root = share.fd();
  REQUIRE(resolve_case_insensitive(cache, root, "existing.TXT") == "Existing.txt");
  REQUIRE(cache.scans() == 1);

  // The server creates a file and tells the cache.
  const int fd = open_beneath(root, "NewName.Doc", O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  ::close(fd);
  cache.note_created(root, "NewName.Doc");
  CHECK(resolve_case_insensitive(cache, root, "newname.doc") == "NewName.Doc");
  CHECK(cache.scans() == 1);

  // ... and removes one.
  REQUIRE(unlinkat(root, "Existing.txt", 0) == 0);
  cache.note_removed(root, "Existing.txt");
  CHECK(resolve_case_insensitive(cache, root, "existing.txt") == "existing.txt");
  CHECK(cache.find(root, "EXISTING.TXT") == std::nullopt);
  CHECK(cache.scans() == 1);
}

TEST_CASE("name index rebuilds after changes made outside the server", "[vfs]") {
  test::TempDir share;
  share.write_file("First.txt");
  let_mtime_age();
  NameIndexCache cache;
  const int root = share.fd();
  REQUIRE(cache.find(root, "first.txt") == std::optional<std::string>("First.txt"));
  REQUIRE(cache.scans() == 1);
  const int64_t before = mtime_ns(share.path());

  let_mtime_age();
  share.write_file("External.TXT");  // not announced to the cache
  REQUIRE(mtime_ns(share.path()) != before);
  CHECK(cache.find(root, "external.txt") == std::optional<std::string>("External.TXT"));
  CHECK(cache.scans() == 2);
}

TEST_CASE("name index keeps directories apart and evicts the oldest", "[vfs]") {
  test::TempDir share;
  share.mkdir("A");
  share.mkdir("B");
  share.mkdir("C");
  share.write_file("A/Same");
  share.write_file("B/SAME");
  share.write_file("C/same");
  let_mtime_age();
  NameIndexCache cache(2);
  const int root = share.fd();
  CHECK(resolve_case_insensitive(cache, root, "a/same") == "A/Same");
  CHECK(resolve_case_insensitive(cache, root, "b/same") == "B/SAME");
  CHECK(cache.size() == 2);
  CHECK(resolve_case_insensitive(cache, root, "c/SAME") == "C/same");
  CHECK(cache.size() == 2);
}

TEST_CASE("name index prefers the exact spelling among several matches", "[vfs]") {
  test::TempDir share;
  share.write_file("readme");
  share.write_file("README");
  let_mtime_age();
  NameIndexCache cache;
  CHECK(cache.find(share.fd(), "README") == std::optional<std::string>("README"));
  CHECK(cache.find(share.fd(), "readme") == std::optional<std::string>("readme"));
  const auto any = cache.find(share.fd(), "ReadMe");
  REQUIRE(any);
  CHECK((*any == "readme" || *any == "README"));
}

TEST_CASE("name index does not leave the share through symlinks", "[vfs]") {
  test::TempDir outside;
  outside.write_file("Secret");
  test::TempDir share;
  share.mkdir("Real");
  share.write_file("Real/Inner");
  std::filesystem::create_symlink(outside.path(), share.path() / "Out");
  std::filesystem::create_symlink("Real", share.path() / "Alias");
  let_mtime_age();
  NameIndexCache cache;
  const int root = share.fd();
  // The escaping directory is never opened, so nothing below it is matched.
  CHECK(resolve_case_insensitive(cache, root, "out/secret") == "Out/secret");
  // A link that stays inside is followed.
  CHECK(resolve_case_insensitive(cache, root, "alias/INNER") == "Alias/Inner");
}

TEST_CASE("name index is safe to share between threads", "[vfs]") {
  test::TempDir share;
  for (int d = 0; d < 8; ++d) {
    share.mkdir("Dir" + std::to_string(d));
    share.write_file("Dir" + std::to_string(d) + "/File");
  }
  let_mtime_age();
  NameIndexCache cache(4);
  const int root = share.fd();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int d = (i + t) % 8;
        const std::string want = "Dir" + std::to_string(d) + "/File";
        if (resolve_case_insensitive(cache, root, "dir" + std::to_string(d) + "/file") != want) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(cache.size() <= 4);
}

TEST_CASE("a racy index serves lookups until its verification is due", "[vfs]") {
  // Files created just now: the directory mtime is inside the racy window,
  // as it is all the time while a client writes many files into it.
  test::TempDir share;
  share.write_file("Fresh.txt");
  const int root = share.fd();

  NameIndexCache trusting;  // default bound: a second
  REQUIRE(trusting.find(root, "fresh.TXT") == std::optional<std::string>("Fresh.txt"));
  REQUIRE(trusting.scans() == 1);
  for (int i = 0; i < 50; ++i) {
    const std::string name = "New" + std::to_string(i);
    const int fd = open_beneath(root, name.c_str(), O_CREAT | O_WRONLY, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
    trusting.note_created(root, name);
    CHECK(trusting.find(root, "NEW" + std::to_string(i)) == std::optional<std::string>(name));
    CHECK(trusting.find(root, "absent" + std::to_string(i)) == std::nullopt);
  }
  CHECK(trusting.scans() == 1);  // not one scan per create

  NameIndexCache verifying(16, 0);  // verify at every use while racy
  REQUIRE(verifying.find(root, "fresh.txt") == std::optional<std::string>("Fresh.txt"));
  share.write_file("Outside.TXT");  // possibly within the same mtime tick
  CHECK(verifying.find(root, "outside.txt") == std::optional<std::string>("Outside.TXT"));
  CHECK(verifying.scans() == 2);
}

TEST_CASE("a sharded name index serves many directories from several threads", "[vfs]") {
  test::TempDir share;
  constexpr int kDirs = 40;
  for (int d = 0; d < kDirs; ++d) share.write_file("Dir" + std::to_string(d) + ".keep");
  for (int d = 0; d < kDirs; ++d) {
    share.mkdir("D" + std::to_string(d));
    share.write_file("D" + std::to_string(d) + "/Name.Txt");
  }
  let_mtime_age();
  NameIndexCache cache;  // the default size: sharded
  const int root = share.fd();
  // Catch2 assertions are not thread-safe: the threads only record.
  std::vector<std::string> found(kDirs);
  auto look_up_half = [&](int first) {
    for (int d = first; d < kDirs; d += 2)
      found[d] = resolve_case_insensitive(cache, root, "d" + std::to_string(d) + "/NAME.TXT");
  };
  std::thread even(look_up_half, 0), odd(look_up_half, 1);
  even.join();
  odd.join();
  for (int d = 0; d < kDirs; ++d) CHECK(found[d] == "D" + std::to_string(d) + "/Name.Txt");
  CHECK(cache.size() == kDirs + 1);  // every D<n> and the root
  const uint64_t scans = cache.scans();
  look_up_half(0);
  look_up_half(1);
  CHECK(cache.scans() == scans);
}
