// Per-directory case-folded name index and case-insensitive path resolution.
#include "vfs/name_index.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "vfs/paths.hpp"

namespace ringsmb::vfs {
namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;
// Never trust an mtime younger than this, even on a fine-grained clock.
constexpr int64_t kMinRacyWindowNs = 10'000'000;

int64_t now_coarse_ns() {
  struct timespec ts = {};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return int64_t(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// Directory timestamps come from the coarse clock, so two changes within one
// tick share an mtime. Twice the tick covers that.
int64_t racy_window_ns() {
  static const int64_t window = [] {
    struct timespec res = {};
    clock_getres(CLOCK_REALTIME_COARSE, &res);
    return std::max(kMinRacyWindowNs, 2 * (int64_t(res.tv_sec) * kNsPerSec + res.tv_nsec));
  }();
  return window;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void add_name(std::vector<std::string>& names, std::string_view leaf) {
  if (std::find(names.begin(), names.end(), leaf) == names.end()) names.emplace_back(leaf);
}

}  // namespace

NameIndexCache::NameIndexCache(size_t max_directories, int64_t racy_rescan_ns)
    : racy_rescan_ns_(racy_rescan_ns), shard_count_(max_directories >= 256 ? 16 : 1),
      shards_(std::make_unique<Shard[]>(shard_count_)) {
  const size_t total = max_directories ? max_directories : 1;
  for (size_t i = 0; i < shard_count_; ++i) shards_[i].max_dirs = (total + shard_count_ - 1) / shard_count_;
}

std::optional<NameIndexCache::DirState> NameIndexCache::dir_state(int dirfd) {
  struct stat st = {};
  if (fstat(dirfd, &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
  return DirState{{uint64_t(st.st_dev), uint64_t(st.st_ino)},
                  int64_t(st.st_mtim.tv_sec) * kNsPerSec + st.st_mtim.tv_nsec};
}

// Reads the whole directory through a fresh descriptor, so the caller's fd
// (possibly O_PATH, possibly shared) keeps its own position.
std::optional<NameIndexCache::DirIndex> NameIndexCache::scan(int dirfd, int64_t mtime_ns) {
  const int fd = open_beneath(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0) return std::nullopt;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return std::nullopt;
  }
  DirIndex index;
  index.mtime_ns = mtime_ns;
  index.scanned_ns = now_coarse_ns();
  const int64_t age = now_coarse_ns() - mtime_ns;
  // A whole-second mtime hints at a filesystem without sub-second stamps,
  // where anything in the same second shares it.
  const bool whole_second = mtime_ns % kNsPerSec == 0;
  index.racy = age < racy_window_ns() || (whole_second && age < 2 * kNsPerSec);
  while (const struct dirent* de = readdir(dir)) {
    const std::string_view name = de->d_name;
    if (name == "." || name == "..") continue;
    index.names[fold_case(name)].emplace_back(name);
  }
  closedir(dir);
  index.scan_cost_ns = now_coarse_ns() - index.scanned_ns;
  return index;
}

bool NameIndexCache::lookup_locked(Shard& shard, const DirState& ds, const std::string& folded,
                                   std::string_view leaf, std::optional<std::string>& result) {
  const auto it = shard.dirs.find(ds.key);
  if (it == shard.dirs.end()) return false;
  DirIndex& index = it->second;
  if (index.mtime_ns != ds.mtime_ns) return false;
  if (index.racy && now_coarse_ns() - index.scanned_ns > std::max(racy_rescan_ns_, 100 * index.scan_cost_ns))
    return false;
  shard.lru.splice(shard.lru.begin(), shard.lru, index.lru_pos);
  result.reset();
  if (const auto hit = index.names.find(folded); hit != index.names.end() && !hit->second.empty()) {
    const auto& real = hit->second;
    const auto exact = std::find(real.begin(), real.end(), leaf);
    result = exact != real.end() ? *exact : real.front();
  }
  return true;
}

void NameIndexCache::insert_locked(Shard& shard, const DirKey& key, DirIndex&& index) {
  if (const auto old = shard.dirs.find(key); old != shard.dirs.end()) {
    shard.lru.erase(old->second.lru_pos);
    shard.dirs.erase(old);
  }
  while (shard.dirs.size() >= shard.max_dirs && !shard.lru.empty()) {
    shard.dirs.erase(shard.lru.back());
    shard.lru.pop_back();
  }
  shard.lru.push_front(key);
  index.lru_pos = shard.lru.begin();
  shard.dirs.emplace(key, std::move(index));
}

std::optional<std::string> NameIndexCache::find(int dirfd, std::string_view leaf) {
  const auto ds = dir_state(dirfd);
  if (!ds) return std::nullopt;
  const std::string folded = fold_case(leaf);
  std::optional<std::string> result;
  Shard& shard = shard_for(ds->key);
  {
    std::lock_guard lock(shard.mu);
    if (lookup_locked(shard, *ds, folded, leaf, result)) return result;
  }
  // Scan without the lock: a big directory must not stall other workers.
  // The mtime sampled before the scan is recorded, so a change during the
  // scan invalidates the new index at once.
  auto index = scan(dirfd, ds->mtime_ns);
  if (!index) return std::nullopt;
  if (const auto hit = index->names.find(folded); hit != index->names.end()) {
    const auto& real = hit->second;
    const auto exact = std::find(real.begin(), real.end(), leaf);
    result = exact != real.end() ? *exact : real.front();
  }
  ++scans_;
  std::lock_guard lock(shard.mu);
  insert_locked(shard, ds->key, std::move(*index));
  return result;
}

template <typename Fn>
void NameIndexCache::update(int dirfd, Fn&& fn) {
  const auto ds = dir_state(dirfd);
  if (!ds) return;
  Shard& shard = shard_for(ds->key);
  std::lock_guard lock(shard.mu);
  const auto it = shard.dirs.find(ds->key);
  if (it == shard.dirs.end()) return;  // not indexed: nothing to keep current
  fn(it->second);
  it->second.mtime_ns = ds->mtime_ns;
  // An outside change in the same tick as ours would go unnoticed: treat
  // the index like a fresh racy scan (verified within kRacyRescanNs) unless
  // it is already racy, which keeps its original scan time.
  if (!it->second.racy && now_coarse_ns() - ds->mtime_ns < racy_window_ns()) {
    it->second.racy = true;
    it->second.scanned_ns = now_coarse_ns();
  }
}

void NameIndexCache::note_created(int dirfd, std::string_view leaf) {
  update(dirfd, [&](DirIndex& index) { add_name(index.names[fold_case(leaf)], leaf); });
}

void NameIndexCache::note_removed(int dirfd, std::string_view leaf) {
  update(dirfd, [&](DirIndex& index) {
    const auto it = index.names.find(fold_case(leaf));
    if (it == index.names.end()) return;
    std::erase(it->second, leaf);
    if (it->second.empty()) index.names.erase(it);
  });
}

uint64_t NameIndexCache::scans() const {
  return scans_.load();
}

size_t NameIndexCache::size() const {
  size_t n = 0;
  for (size_t i = 0; i < shard_count_; ++i) {
    std::lock_guard lock(shards_[i].mu);
    n += shards_[i].dirs.size();
  }
  return n;
}

namespace {

// The on-disk spelling of one component inside `dirfd`: the exact name when
// it exists (one fstatat, no scan), else the case-insensitive match, else
// the name as given.
std::string resolve_component(NameIndexCache& cache, int dirfd, std::string_view comp) {
  if (comp.empty() || comp == "." || comp == "..") return std::string(comp);
  const std::string name(comp);
  struct stat st = {};
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return name;
  if (errno != ENOENT) return name;  // e.g. EACCES: let the open report it
  if (auto real = cache.find(dirfd, comp)) return std::move(*real);
  return name;
}

}  // namespace

std::string resolve_case_insensitive(NameIndexCache& cache, int root_fd, std::string_view path) {
  std::string resolved;
  resolved.reserve(path.size());
  size_t pos = 0;
  while (pos <= path.size() && !path.empty()) {
    const size_t slash = path.find('/', pos);
    const std::string_view comp = path.substr(pos, slash == std::string_view::npos ? slash : slash - pos);
    // Re-open the parent from the root each time, so a symlink inside the
    // share that points elsewhere inside the share still resolves.
    const Fd dir(open_beneath(root_fd, resolved.empty() ? "." : resolved.c_str(), O_PATH | O_DIRECTORY, 0));
    if (dir.get() < 0) {
      resolved.append(path.substr(pos));  // missing directory: the rest as given
      break;
    }
    resolved.append(resolve_component(cache, dir.get(), comp));
    if (slash == std::string_view::npos) break;
    resolved.push_back('/');
    pos = slash + 1;
  }
  return resolved;
}

}  // namespace ringsmb::vfs
