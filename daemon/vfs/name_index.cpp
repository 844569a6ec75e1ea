// Per-directory case-folded name index and case-insensitive path resolution.
#include "vfs/name_index.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"

namespace ringsmb::vfs {
namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;
// A sample of a directory's ctime taken before a newer one but looked at
// after it is older by the moments in between; older by more than this,
// the clock was set back.
constexpr int64_t kClockStepNs = 1'000'000'000;
// Never trust a directory timestamp younger than this, even on a fine-grained clock.
constexpr int64_t kMinRacyWindowNs = 10'000'000;

int64_t now_coarse_ns() {
  struct timespec ts = {};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return int64_t(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// CPU time of the calling thread (user and system). A scan's cost is what it
// takes from a core: wall-clock time would count the moments the thread
// waited preempted, and the coarse clock rounds a sub-millisecond scan up to
// a whole tick (4 ms at HZ=250); either would put verification off for 100x
// that, seconds on a loaded server.
int64_t thread_cpu_ns() {
  struct timespec ts = {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// Directory timestamps come from the coarse clock, so two changes within one
// tick share a timestamp. Twice the tick covers that.
int64_t racy_window_ns() {
  static const int64_t window = [] {
    struct timespec res = {};
    clock_getres(CLOCK_REALTIME_COARSE, &res);
    return std::max(kMinRacyWindowNs, 2 * (int64_t(res.tv_sec) * kNsPerSec + res.tv_nsec));
  }();
  return window;
}

// Whether a later change could still get this very timestamp. A whole-second
// stamp hints at a filesystem without sub-second stamps, where anything in
// the same second shares it.
bool timestamp_is_recent(int64_t stamp_ns, int64_t now_ns) {
  const int64_t age = now_ns - stamp_ns;
  const bool whole_second = stamp_ns % kNsPerSec == 0;
  return age < racy_window_ns() || (whole_second && age < 2 * kNsPerSec);
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
                  int64_t(st.st_ctim.tv_sec) * kNsPerSec + st.st_ctim.tv_nsec};
}

// Reads the whole directory through a fresh descriptor, so the caller's fd
// (possibly O_PATH, possibly shared) keeps its own position.
std::optional<NameIndexCache::Scanned> NameIndexCache::read_directory(int dirfd) {
  const int64_t started = thread_cpu_ns();
  const int fd = open_beneath(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0) return std::nullopt;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return std::nullopt;
  }
  Scanned scanned;
  while (const struct dirent* de = readdir(dir)) {
    const std::string_view name = de->d_name;
    if (name == "." || name == "..") continue;
    scanned.names[fold_case(name)].emplace_back(name);
  }
  closedir(dir);
  scanned.cost_ns = thread_cpu_ns() - started;
  return scanned;
}

// The real name for `folded`: the client's own spelling when several
// entries differ only in case, else any of them.
std::optional<std::string> NameIndexCache::pick(const Names& names, const std::string& folded,
                                                std::string_view leaf) {
  const auto hit = names.find(folded);
  if (hit == names.end() || hit->second.empty()) return std::nullopt;
  const auto& real = hit->second;
  const auto exact = std::find(real.begin(), real.end(), leaf);
  return exact != real.end() ? *exact : real.front();
}

void NameIndexCache::apply(Names& names, const Note& note) {
  if (note.added) {
    add_name(names[fold_case(note.leaf)], note.leaf);
    return;
  }
  const auto it = names.find(fold_case(note.leaf));
  if (it == names.end()) return;
  std::erase(it->second, note.leaf);
  if (it->second.empty()) names.erase(it);
}

// The directory's index, created empty and untrusted when there is none,
// most recently used either way.
NameIndexCache::DirIndex& NameIndexCache::entry_locked(Shard& shard, const DirKey& key) {
  if (const auto it = shard.dirs.find(key); it != shard.dirs.end()) {
    shard.lru.splice(shard.lru.begin(), shard.lru, it->second.lru_pos);
    return it->second;
  }
  while (shard.dirs.size() >= shard.max_dirs && !shard.lru.empty()) {
    shard.dirs.erase(shard.lru.back());
    shard.lru.pop_back();
  }
  shard.lru.push_front(key);
  DirIndex& index = shard.dirs[key];
  index.generation = next_generation_++;
  index.lru_pos = shard.lru.begin();
  return index;
}

// The index a change or scan started with, unless it has been evicted since.
NameIndexCache::DirIndex* NameIndexCache::existing_locked(Shard& shard, const DirKey& key, uint64_t generation) {
  const auto it = shard.dirs.find(key);
  if (it == shard.dirs.end() || it->second.generation != generation) return nullptr;
  return &it->second;
}

namespace {

void make_racy(auto& index, int64_t now_ns) {
  ++index.racy_marks;
  if (index.racy_since_ns == 0) index.racy_since_ns = now_ns;
}

void distrust(auto& index) {
  index.trusted = false;
  ++index.distrusts;
}

}  // namespace

// One observation of the directory's ctime: see the invariant in the header.
void NameIndexCache::observe(DirIndex& index, int64_t ctime_ns, int64_t now_ns) {
  if (ctime_ns < index.ctime_ns - kClockStepNs) {
    // Far older than seen before: not a late sample but a clock set back.
    // Start over from this ctime, or every later change would look old.
    distrust(index);
    index.ctime_ns = ctime_ns;
  } else if (ctime_ns > index.ctime_ns) {
    if (index.unseen > 0) {
      --index.unseen;  // taken for one of ours in flight
      make_racy(index, now_ns);
    } else {
      distrust(index);  // nothing of ours can explain it
    }
    index.ctime_ns = ctime_ns;
  }
  // A later change in the same timestamp tick would leave this ctime as is.
  if (timestamp_is_recent(ctime_ns, now_ns)) make_racy(index, now_ns);
}

bool NameIndexCache::usable(const DirIndex& index, int64_t now_ns) const {
  if (!index.trusted) return false;
  if (index.racy_since_ns == 0) return true;
  if (racy_rescan_ns_ == 0) return false;  // verify at every lookup
  return now_ns - index.racy_since_ns <= std::max(racy_rescan_ns_, 100 * index.scan_cost_ns);
}

NameIndexCache::ScanTicket NameIndexCache::start_scan(DirIndex& index, int64_t ctime_ns, int64_t now_ns) {
  ++index.scans_running;
  return {index.generation, index.notes_total, index.distrusts, index.racy_marks, now_ns, ctime_ns};
}

// Installs a scan's result (or, with nullptr, only ends a failed scan). The
// scan read the directory at some point after it started: our changes that
// finished meanwhile may or may not be in it, so they are replayed; an
// outside change seen meanwhile may be missing from it, so it is trusted
// only if there was none.
void NameIndexCache::end_scan(Shard& shard, const DirKey& key, const ScanTicket& ticket, Scanned* scanned) {
  std::lock_guard lock(shard.mu);
  DirIndex* index = existing_locked(shard, key, ticket.generation);
  if (index == nullptr) return;  // evicted meanwhile: the next lookup starts over
  --index->scans_running;
  if (scanned != nullptr) {
    const uint64_t logged_from = index->notes_total - index->notes_log.size();
    for (size_t i = ticket.notes_total - logged_from; i < index->notes_log.size(); ++i)
      apply(scanned->names, index->notes_log[i]);
    index->names = std::move(scanned->names);
    index->trusted = index->distrusts == ticket.distrusts;
    index->scan_cost_ns = scanned->cost_ns;
    // The scan vouches for everything before it started, nothing after.
    const bool clean = index->racy_marks == ticket.racy_marks && !timestamp_is_recent(ticket.ctime_ns, ticket.started_ns);
    index->racy_since_ns = clean ? 0 : ticket.started_ns;
  }
  if (index->scans_running == 0) index->notes_log.clear();
}

std::optional<std::string> NameIndexCache::find(int dirfd, std::string_view leaf) {
  const auto ds = dir_state(dirfd);
  if (!ds) return std::nullopt;
  return find_observed(dirfd, *ds, leaf);
}

std::optional<std::string> NameIndexCache::find_observed(int dirfd, const DirState& ds, std::string_view leaf) {
  const std::string folded = fold_case(leaf);
  Shard& shard = shard_for(ds.key);
  ScanTicket ticket;
  {
    std::lock_guard lock(shard.mu);
    const int64_t now = now_coarse_ns();
    DirIndex& index = entry_locked(shard, ds.key);
    observe(index, ds.ctime_ns, now);
    if (usable(index, now)) return pick(index.names, folded, leaf);
    ticket = start_scan(index, ds.ctime_ns, now);
  }
  // Scan without the lock: a big directory must not stall other workers.
  auto scanned = read_directory(dirfd);
  std::optional<std::string> result;
  if (scanned) {
    ++scans_;
    result = pick(scanned->names, folded, leaf);
  }
  end_scan(shard, ds.key, ticket, scanned ? &*scanned : nullptr);
  return result;
}

std::optional<std::string> NameIndexCache::find_or_begin(int dirfd, std::string_view leaf,
                                                        std::optional<Change>& change) {
  change.reset();
  const auto ds = dir_state(dirfd);
  if (!ds) return std::nullopt;
  auto found = find_observed(dirfd, *ds, leaf);
  if (!found) change.emplace(begin_observed(dirfd, *ds));
  return found;
}

NameIndexCache::Change NameIndexCache::begin_change(int dirfd) {
  const auto ds = dir_state(dirfd);
  if (!ds) return Change(this, dirfd, std::nullopt, 0);
  return begin_observed(dirfd, *ds);
}

// DS was sampled before the change counts as in flight (now, under the
// lock), so what it shows came before ours; an outside change between the
// sample and now is met at the change's end like one made while it is in
// flight (taken for ours at most once, the index racy).
NameIndexCache::Change NameIndexCache::begin_observed(int dirfd, const DirState& ds) {
  Shard& shard = shard_for(ds.key);
  std::lock_guard lock(shard.mu);
  const auto it = shard.dirs.find(ds.key);
  if (it == shard.dirs.end()) return Change(this, dirfd, ds.key, 0);  // not indexed: nothing to keep current
  DirIndex& index = it->second;
  observe(index, ds.ctime_ns, now_coarse_ns());  // before it counts: what came before is not ours
  ++index.in_flight;
  ++index.unseen;
  return Change(this, dirfd, ds.key, index.generation);
}

// Applies a finished change of ours to the index, and keeps it for the
// scans running meanwhile.
void NameIndexCache::record(DirIndex& index, Change::Outcome outcome, std::string_view leaf) {
  if (outcome == Change::Outcome::Unknown) distrust(index);
  if (outcome != Change::Outcome::Added && outcome != Change::Outcome::Removed) return;
  Note note{std::string(leaf), outcome == Change::Outcome::Added};
  apply(index.names, note);
  ++index.notes_total;
  if (index.scans_running > 0) index.notes_log.push_back(std::move(note));
}

namespace {

// A change that counted as in flight stops counting. Credits are not tied
// to changes; the one left over, if any, was this change's.
void leave(auto& index) {
  --index.in_flight;
  index.unseen = std::min(index.unseen, index.in_flight);
}

// A change that did nothing takes its credit back. If some credit is spent
// already, it may have been this one's, spent on an outside change.
void withdraw(auto& index) {
  if (index.unseen < index.in_flight) distrust(index);
  leave(index);
}

}  // namespace

void NameIndexCache::end_change(Change& change, Change::Outcome outcome, std::string_view leaf) {
  if (!change.key_) return;
  // Only a change counted as in flight needs the directory's new ctime.
  const auto ds = change.generation_ != 0 ? dir_state(change.dirfd_) : std::nullopt;
  Shard& shard = shard_for(*change.key_);
  std::lock_guard lock(shard.mu);
  const auto it = shard.dirs.find(*change.key_);
  if (it == shard.dirs.end()) return;  // not indexed: nothing to keep current
  DirIndex& index = it->second;
  if (index.generation != change.generation_) {
    // Not counted: begun before the directory was indexed, or its index was
    // evicted since. Its effect on the ctime cannot be told from an outside one.
    distrust(index);
    record(index, outcome, leaf);
    return;
  }
  if (outcome == Change::Outcome::Unchanged) withdraw(index);
  if (ds && ds->key == *change.key_)
    observe(index, ds->ctime_ns, now_coarse_ns());  // while it still counts: its own change is explained
  else
    distrust(index);  // the fd no longer shows this directory: cannot tell
  if (outcome != Change::Outcome::Unchanged) leave(index);
  record(index, outcome, leaf);
}

NameIndexCache::Change::Change(Change&& other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)), dirfd_(other.dirfd_), key_(other.key_),
      generation_(other.generation_) {}

NameIndexCache::Change::~Change() {
  finish(Outcome::Unknown, {});
}

void NameIndexCache::Change::added(std::string_view leaf) {
  finish(Outcome::Added, leaf);
}

void NameIndexCache::Change::removed(std::string_view leaf) {
  finish(Outcome::Removed, leaf);
}

void NameIndexCache::Change::unchanged() {
  finish(Outcome::Unchanged, {});
}

void NameIndexCache::Change::finish(Outcome outcome, std::string_view leaf) {
  NameIndexCache* cache = std::exchange(cache_, nullptr);
  if (cache != nullptr) cache->end_change(*this, outcome, leaf);
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
// the entry whose generated 8.3 name it is, else the name as given.
std::string resolve_component(NameIndexCache& cache, int dirfd, std::string_view comp) {
  if (comp.empty() || comp == "." || comp == "..") return std::string(comp);
  const std::string name(comp);
  struct stat st = {};
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return name;
  if (errno != ENOENT) return name;  // e.g. EACCES: let the open report it
  if (auto real = cache.find(dirfd, comp)) return std::move(*real);
  if (auto real = find_by_short_name(dirfd, comp)) return std::move(*real);
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

bool unlink_noted(NameIndexCache& cache, int dirfd, const std::string& leaf, bool is_directory) {
  auto change = cache.begin_change(dirfd);
  if (unlinkat(dirfd, leaf.c_str(), is_directory ? AT_REMOVEDIR : 0) == 0) {
    change.removed(leaf);
    return true;
  }
  const int err = errno;
  change.unchanged();
  errno = err;  // the bracket's fstat must not hide why the unlink failed
  return false;
}

}  // namespace ringsmb::vfs
