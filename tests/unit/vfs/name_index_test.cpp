#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <filesystem>
#include <thread>
#include <vector>

#include "temp_dir.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

// Directory timestamps come from a coarse clock: let the setup's changes
// age so the first scan is trusted, and so the next change gets a new ctime.
void let_mtime_age() { std::this_thread::sleep_for(std::chrono::milliseconds(60)); }

int64_t ctime_ns(const std::filesystem::path& p) {
  struct stat st;
  REQUIRE(stat(p.c_str(), &st) == 0);
  return int64_t(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
}

// A file made behind the server's back (or, bracketed, by the server).
void make_file(int dirfd, const std::string& name) {
  const int fd = ::openat(dirfd, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  ::close(fd);
}

// A create by the server, which tells the index as the handlers do.
void server_create(NameIndexCache& cache, int dirfd, const std::string& name) {
  auto change = cache.begin_change(dirfd);
  make_file(dirfd, name);
  change.added(name);
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
  server_create(cache, root, "NewName.Doc");
  CHECK(resolve_case_insensitive(cache, root, "newname.doc") == "NewName.Doc");
  CHECK(cache.scans() == 1);

  // ... and removes one.
  auto change = cache.begin_change(root);
  REQUIRE(unlinkat(root, "Existing.txt", 0) == 0);
  change.removed("Existing.txt");
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
  const int64_t before = ctime_ns(share.path());

  let_mtime_age();
  share.write_file("External.TXT");  // not announced to the cache
  REQUIRE(ctime_ns(share.path()) != before);
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
    server_create(trusting, root, name);
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

// ---- the server's changes in flight, and outside changes meanwhile ---------
//
// These caches never verify a racy index on their own (an hour), so each
// test sees what the in-flight accounting alone decides: a rescan (scans()
// grows) or trust.

namespace {

constexpr int64_t kAnHour = 3600LL * 1'000'000'000;

// A directory with one file, indexed by one scan; IndexedDir(0) verifies
// a racy index at every lookup.
struct IndexedDir {
  test::TempDir share;
  NameIndexCache cache;
  int root = -1;
  explicit IndexedDir(int64_t racy_rescan_ns = kAnHour) : cache(16, racy_rescan_ns) {
    share.write_file("First.txt");
    let_mtime_age();
    root = share.fd();
    REQUIRE(cache.find(root, "FIRST.TXT") == std::optional<std::string>("First.txt"));
    REQUIRE(cache.scans() == 1);
  }
  std::optional<std::string> find(const std::string& leaf) { return cache.find(root, leaf); }
};

}  // namespace

TEST_CASE("a create of ours that is noted late costs no rescan", "[vfs]") {
  IndexedDir d;
  auto change = d.cache.begin_change(d.root);
  make_file(d.root, "Mine.txt");
  // Another worker looks up meanwhile: the new ctime is ours, in flight.
  CHECK(d.find("other.txt") == std::nullopt);
  CHECK(d.find("first.TXT") == std::optional<std::string>("First.txt"));
  change.added("Mine.txt");
  CHECK(d.find("MINE.TXT") == std::optional<std::string>("Mine.txt"));
  CHECK(d.cache.scans() == 1);
}

TEST_CASE("an outside create right after ours is seen at once", "[vfs]") {
  // The case the 100 ms "it must be ours" window got wrong.
  IndexedDir d;
  server_create(d.cache, d.root, "Mine.txt");
  CHECK(d.find("mine.txt") == std::optional<std::string>("Mine.txt"));
  make_file(d.root, "Outside.TXT");
  CHECK(d.find("outside.txt") == std::optional<std::string>("Outside.TXT"));
  CHECK(d.cache.scans() == 2);
}

TEST_CASE("an outside create right before ours begins is not taken for ours", "[vfs]") {
  IndexedDir d;
  make_file(d.root, "Outside.TXT");
  server_create(d.cache, d.root, "Mine.txt");  // its begin sees the outside ctime first
  CHECK(d.find("outside.txt") == std::optional<std::string>("Outside.TXT"));
  CHECK(d.find("MINE.txt") == std::optional<std::string>("Mine.txt"));
  CHECK(d.cache.scans() == 2);
}

TEST_CASE("an outside create while ours is in flight, after ours was seen, is seen", "[vfs]") {
  IndexedDir d;
  auto change = d.cache.begin_change(d.root);
  make_file(d.root, "Mine.txt");
  CHECK(d.find("nothing") == std::nullopt);  // spends our change's credit on its ctime
  make_file(d.root, "Outside.TXT");
  CHECK(d.find("outside.txt") == std::optional<std::string>("Outside.TXT"));
  CHECK(d.cache.scans() == 2);
  change.added("Mine.txt");
  CHECK(d.find("mine.TXT") == std::optional<std::string>("Mine.txt"));
}

TEST_CASE("an outside create in the same moment as ours is found by the verification", "[vfs]") {
  // Ours and the outside create land between the same two observations: the
  // ctime is one value, so the outside one can be taken for ours. The index
  // is then racy, and a cache that verifies racy indexes at once finds it.
  IndexedDir d(0);
  auto change = d.cache.begin_change(d.root);
  make_file(d.root, "Mine.txt");
  make_file(d.root, "Outside.TXT");
  change.added("Mine.txt");
  CHECK(d.find("OUTSIDE.txt") == std::optional<std::string>("Outside.TXT"));
  CHECK(d.find("mine.txt") == std::optional<std::string>("Mine.txt"));
}

TEST_CASE("two workers creating at once cost no rescan, in any order", "[vfs]") {
  // Each create is b(egin), c(reate), e(nd), by worker A or B; a lookup
  // follows every step. All interleavings that keep each create's order.
  const std::vector<std::string> orders = {
      "Ab Ac Ae Bb Bc Be", "Ab Bb Ac Bc Ae Be", "Ab Bb Bc Ac Ae Be", "Ab Bb Ac Bc Be Ae",
      "Ab Ac Bb Ae Bc Be", "Ab Ac Bb Bc Ae Be", "Ab Bb Bc Be Ac Ae", "Ab Ac Bb Bc Be Ae",
  };
  for (const auto& order : orders) {
    INFO("order " << order);
    IndexedDir d;
    std::optional<NameIndexCache::Change> change[2];
    const std::string names[2] = {"Alpha.dat", "Beta.dat"};
    for (size_t i = 0; i + 1 < order.size(); i += 3) {
      const int w = order[i] == 'A' ? 0 : 1;
      switch (order[i + 1]) {
        case 'b': change[w].emplace(d.cache.begin_change(d.root)); break;
        case 'c': make_file(d.root, names[w]); break;
        case 'e': change[w]->added(names[w]); break;
      }
      CHECK(d.find("nothing.here") == std::nullopt);
    }
    CHECK(d.find("ALPHA.DAT") == std::optional<std::string>("Alpha.dat"));
    CHECK(d.find("beta.DAT") == std::optional<std::string>("Beta.dat"));
    CHECK(d.cache.scans() == 1);
    make_file(d.root, "Outside.TXT");  // and nothing of ours in flight
    CHECK(d.find("outside.txt") == std::optional<std::string>("Outside.TXT"));
    CHECK(d.cache.scans() == 2);
  }
}

TEST_CASE("a rename between directories is followed in both", "[vfs]") {
  test::TempDir share;
  share.mkdir("From");
  share.mkdir("To");
  share.write_file("From/Moving.Txt");
  share.write_file("To/Staying.Txt");
  let_mtime_age();
  NameIndexCache cache(16, kAnHour);
  const int root = share.fd();
  REQUIRE(resolve_case_insensitive(cache, root, "FROM/moving.txt") == "From/Moving.Txt");
  REQUIRE(resolve_case_insensitive(cache, root, "TO/staying.txt") == "To/Staying.Txt");
  const uint64_t scans = cache.scans();
  const int from = open_beneath(root, "From", O_PATH | O_DIRECTORY, 0);
  const int to = open_beneath(root, "To", O_PATH | O_DIRECTORY, 0);
  REQUIRE(from >= 0);
  REQUIRE(to >= 0);

  auto src = cache.begin_change(from);
  auto dst = cache.begin_change(to);
  REQUIRE(renameat(from, "Moving.Txt", to, "Moved.Txt") == 0);
  CHECK(cache.find(to, "staying.txt") == std::optional<std::string>("Staying.Txt"));  // in flight
  src.removed("Moving.Txt");
  dst.added("Moved.Txt");
  CHECK(cache.find(from, "moving.txt") == std::nullopt);
  CHECK(cache.find(to, "MOVED.TXT") == std::optional<std::string>("Moved.Txt"));
  CHECK(cache.scans() == scans);

  // A rename behind the server's back rescans both.
  REQUIRE(renameat(to, "Staying.Txt", from, "Back.Txt") == 0);
  CHECK(cache.find(from, "back.txt") == std::optional<std::string>("Back.Txt"));
  CHECK(cache.find(to, "staying.txt") == std::nullopt);
  CHECK(cache.scans() == scans + 2);
  ::close(from);
  ::close(to);
}

TEST_CASE("a rename within one directory is followed", "[vfs]") {
  IndexedDir d;
  auto src = d.cache.begin_change(d.root);
  auto dst = d.cache.begin_change(d.root);
  REQUIRE(renameat(d.root, "First.txt", d.root, "Second.TXT") == 0);
  src.removed("First.txt");
  dst.added("Second.TXT");
  CHECK(d.find("first.txt") == std::nullopt);
  CHECK(d.find("second.txt") == std::optional<std::string>("Second.TXT"));
  CHECK(d.cache.scans() == 1);
}

TEST_CASE("an unlink of ours is followed, one from outside rescans", "[vfs]") {
  IndexedDir d;
  server_create(d.cache, d.root, "Second.txt");
  auto change = d.cache.begin_change(d.root);
  REQUIRE(unlinkat(d.root, "First.txt", 0) == 0);
  change.removed("First.txt");
  CHECK(d.find("FIRST.TXT") == std::nullopt);
  CHECK(d.cache.scans() == 1);
  REQUIRE(unlinkat(d.root, "Second.txt", 0) == 0);  // not announced
  CHECK(d.find("second.TXT") == std::nullopt);
  CHECK(d.cache.scans() == 2);
}

TEST_CASE("a change that failed explains nothing", "[vfs]") {
  IndexedDir d;
  SECTION("nothing else happened: no rescan") {
    auto change = d.cache.begin_change(d.root);
    REQUIRE(::openat(d.root, "First.txt", O_CREAT | O_EXCL | O_WRONLY, 0644) < 0);  // EEXIST
    change.unchanged();
    CHECK(d.find("first.txt") == std::optional<std::string>("First.txt"));
    CHECK(d.cache.scans() == 1);
  }
  SECTION("an outside create during it is seen") {
    auto change = d.cache.begin_change(d.root);
    make_file(d.root, "Outside.TXT");
    REQUIRE(::openat(d.root, "First.txt", O_CREAT | O_EXCL | O_WRONLY, 0644) < 0);
    change.unchanged();
    CHECK(d.find("outside.txt") == std::optional<std::string>("Outside.TXT"));
    CHECK(d.cache.scans() == 2);
  }
  SECTION("... even when a lookup took its ctime for the failed change's") {
    auto change = d.cache.begin_change(d.root);
    make_file(d.root, "Outside.TXT");
    CHECK(d.find("nothing") == std::nullopt);  // excused: ours was in flight
    REQUIRE(::openat(d.root, "First.txt", O_CREAT | O_EXCL | O_WRONLY, 0644) < 0);
    change.unchanged();  // so it was not ours
    CHECK(d.find("outside.txt") == std::optional<std::string>("Outside.TXT"));
    CHECK(d.cache.scans() == 2);
  }
}

// A CREATE looks the name up and then makes it: the change begins on the
// lookup's observation of the directory (one fstat for both).
TEST_CASE("a lookup that finds no entry begins the create after it", "[vfs]") {
  IndexedDir d;
  std::optional<NameIndexCache::Change> change;
  SECTION("the create is followed without a rescan") {
    CHECK(d.cache.find_or_begin(d.root, "NEW.txt", change) == std::nullopt);
    REQUIRE(change);
    make_file(d.root, "New.txt");
    change->added("New.txt");
    CHECK(d.find("new.TXT") == std::optional<std::string>("New.txt"));
    CHECK(d.find("first.txt") == std::optional<std::string>("First.txt"));
    CHECK(d.cache.scans() == 1);
  }
  SECTION("an entry in another case begins nothing") {
    CHECK(d.cache.find_or_begin(d.root, "FIRST.txt", change) == std::optional<std::string>("First.txt"));
    CHECK_FALSE(change);
  }
  SECTION("a create given up costs no rescan") {
    CHECK(d.cache.find_or_begin(d.root, "new.txt", change) == std::nullopt);
    REQUIRE(change);
    change->unchanged();
    CHECK(d.find("first.TXT") == std::optional<std::string>("First.txt"));
    CHECK(d.cache.scans() == 1);
  }
  SECTION("an outside create after the lookup is found by the verification") {
    // Between the lookup and our create it counts as made while ours was
    // in flight: the index is racy, and a verifying cache finds it.
    IndexedDir v(0);
    std::optional<NameIndexCache::Change> mine;
    CHECK(v.cache.find_or_begin(v.root, "mine.txt", mine) == std::nullopt);
    REQUIRE(mine);
    make_file(v.root, "Outside.TXT");
    make_file(v.root, "Mine.txt");
    mine->added("Mine.txt");
    CHECK(v.find("OUTSIDE.txt") == std::optional<std::string>("Outside.TXT"));
    CHECK(v.find("MINE.txt") == std::optional<std::string>("Mine.txt"));
  }
}

TEST_CASE("a change never finished makes the index rescan", "[vfs]") {
  IndexedDir d;
  {
    auto change = d.cache.begin_change(d.root);
    make_file(d.root, "Lost.txt");
  }  // an early return: the index cannot know what happened
  CHECK(d.find("lost.txt") == std::optional<std::string>("Lost.txt"));
  CHECK(d.cache.scans() == 2);
}

TEST_CASE("a change begun before the directory was indexed counts as outside", "[vfs]") {
  test::TempDir share;
  let_mtime_age();
  const int root = share.fd();
  NameIndexCache cache(16, kAnHour);
  auto change = cache.begin_change(root);  // no index yet: not counted
  CHECK(cache.find(root, "nothing") == std::nullopt);  // the first scan
  make_file(root, "Early.txt");
  change.added("Early.txt");  // its own new ctime is not accounted for: distrust
  CHECK(cache.find(root, "EARLY.txt") == std::optional<std::string>("Early.txt"));
  CHECK(cache.scans() == 2);
}

namespace {

// A thread interrupted up to 20 times, 200 us of wall-clock time apart, to
// sleep 30 ms in a signal handler waits far longer than it runs, like one
// preempted on a loaded server, but every time.
std::atomic<int> g_pauses_left{0};
timer_t g_pause_timer;

void pause_and_rearm(int) {
  const timespec pause = {0, 30'000'000};
  nanosleep(&pause, nullptr);
  const itimerspec next = {{0, 0}, {0, 200'000}};
  if (--g_pauses_left > 0) timer_settime(g_pause_timer, 0, &next, nullptr);
}

void run_often_paused(const std::function<void()>& work) {
  struct sigaction pausing = {};
  pausing.sa_handler = pause_and_rearm;
  pausing.sa_flags = SA_RESTART;
  sigemptyset(&pausing.sa_mask);
  REQUIRE(sigaction(SIGRTMIN, &pausing, nullptr) == 0);
  sigevent to_this_thread = {};
  to_this_thread.sigev_notify = SIGEV_THREAD_ID;
  to_this_thread.sigev_signo = SIGRTMIN;
  to_this_thread._sigev_un._tid = gettid();
  REQUIRE(timer_create(CLOCK_MONOTONIC, &to_this_thread, &g_pause_timer) == 0);
  g_pauses_left = 20;
  const itimerspec first = {{0, 0}, {0, 200'000}};
  timer_settime(g_pause_timer, 0, &first, nullptr);
  work();
  g_pauses_left = 0;
  const itimerspec off = {};
  timer_settime(g_pause_timer, 0, &off, nullptr);
  timer_delete(g_pause_timer);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;  // a signal still queued must not end the tests
  sigaction(SIGRTMIN, &ignore, nullptr);
}

}  // namespace

TEST_CASE("a racy index is verified on time even when its scan waited", "[vfs]") {
  // Verification of a huge directory is put off by 100 times its scan's
  // cost. A small directory's scan that spent most of its time preempted
  // must not count as expensive, or its racy index stays trusted for
  // seconds and a file made on the server meanwhile stays unseen.
  test::TempDir share;
  for (int i = 0; i < 2000; ++i) share.write_file("File_" + std::to_string(i));
  let_mtime_age();
  const int root = share.fd();
  // Long enough that 100 times the scan's CPU time stays inside it even in
  // the sanitizer build (2,000 entries: about 5 ms there); the pauses below
  // add 600 ms of waiting, which counted would put verification off by 60 s.
  constexpr int64_t kVerifyNs = 1'000'000'000;
  NameIndexCache cache(16, kVerifyNs);
  run_often_paused([&] { CHECK(cache.find(root, "FILE_7") == std::optional<std::string>("File_7")); });
  REQUIRE(cache.scans() == 1);
  server_create(cache, root, "Mine.txt");  // its new ctime, taken for ours, makes the index racy
  // Poll rather than sleep a fixed time: on a loaded machine 100 times the
  // scan's CPU time can exceed kVerifyNs. The deadline stays far below the
  // 60 s that counting the pauses would give.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  std::this_thread::sleep_for(std::chrono::nanoseconds(kVerifyNs));
  while (cache.scans() == 1 && std::chrono::steady_clock::now() < deadline) {
    CHECK(cache.find(root, "MINE.TXT") == std::optional<std::string>("Mine.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(cache.find(root, "MINE.TXT") == std::optional<std::string>("Mine.txt"));
  CHECK(cache.scans() == 2);  // verified
}

TEST_CASE("concurrent creates, lookups and outside creates end consistent", "[vfs]") {
  // Two "workers" create through the index while looking up, a third
  // thread creates behind its back. Every name of ours is found as soon as
  // its create has finished (even across the rescans the outside creates
  // cause, whose results must replay our changes); the outside ones at the
  // latest when the racy index has been verified.
  test::TempDir share;
  const int root = share.fd();
  constexpr int64_t kVerifyNs = 50'000'000;
  NameIndexCache cache(16, kVerifyNs);
  REQUIRE(cache.find(root, "nothing") == std::nullopt);
  constexpr int kPerWorker = 300;
  std::atomic<int> missing_own{0};
  auto worker = [&](char tag) {
    for (int i = 0; i < kPerWorker; ++i) {
      const std::string name = std::string(1, tag) + "_File_" + std::to_string(i);
      auto change = cache.begin_change(root);
      const int fd = ::openat(root, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::close(fd);
        change.added(name);
      } else {
        change.unchanged();
      }
      if (cache.find(root, fold_case(name)) != std::optional<std::string>(name)) ++missing_own;
    }
  };
  auto outsider = [&] {
    for (int i = 0; i < 40; ++i) {
      const std::string name = "Outside_" + std::to_string(i);
      const int fd = ::openat(root, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (fd >= 0) ::close(fd);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  };
  std::thread a(worker, 'A'), b(worker, 'B'), o(outsider);
  a.join();
  b.join();
  o.join();
  CHECK(missing_own == 0);
  // A racy index is trusted for max(kVerifyNs, 100 scans' time): on a
  // loaded machine a scan of these 640 names can take milliseconds, so
  // wait for the rescan rather than a fixed time (up to 10 s).
  auto outside_found = [&] {
    for (int i = 0; i < 40; ++i) {
      const std::string name = "Outside_" + std::to_string(i);
      if (cache.find(root, fold_case(name)) != std::optional<std::string>(name)) return false;
    }
    return true;
  };
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kVerifyNs));
  for (int tries = 0; tries < 100 && !outside_found(); ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(outside_found());
  for (char tag : {'A', 'B'})
    for (int i = 0; i < kPerWorker; i += 37) {
      const std::string name = std::string(1, tag) + "_File_" + std::to_string(i);
      CHECK(cache.find(root, fold_case(name)) == std::optional<std::string>(name));
    }
}
