// Case-insensitive name lookup without an O(n) directory scan per lookup.
//
// Windows clients expect "FOO.TXT" to open "foo.txt". The exact name is
// always tried first (one openat2/statx). Only on a miss does the cache
// consult a per-directory index of case-folded names -> real names, built
// by one scan of the directory the first time it is needed and kept current
// by the server's own creates, renames and deletes. An index is trusted only
// while the directory's mtime (ns) and inode match what was recorded, so
// changes made outside the server rebuild it.
//
// Directory mtimes come from a coarse clock: an outside change in the same
// tick as the scan (or as one of the server's own changes) leaves the mtime
// as recorded. Such a "racy" index is still used, so a busy directory costs
// no scan per create (that made writing n files O(n^2)), but it is verified
// by a fresh scan once it is older than kRacyRescanNs, or than 100 times
// what its scan took for a huge directory, so verification never costs more
// than about 1% of a core: an outside change is seen within that bound.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ringsmb::vfs {

// Simple Unicode-aware case folding for ASCII and the Latin-1/Latin Extended-A,
// Greek and Cyrillic ranges, on UTF-8 strings; other code points unchanged.
std::string fold_case(std::string_view utf8);

class NameIndexCache {
 public:
  // How long a racy index is trusted before a verifying rescan.
  static constexpr int64_t kRacyRescanNs = 1'000'000'000;

  // A cache of at least 256 directories is split into 16 shards, each with
  // its own lock and LRU, so workers creating files in different
  // directories never wait for each other; a small one (tests) is one shard
  // with an exact LRU.
  explicit NameIndexCache(size_t max_directories = 4096, int64_t racy_rescan_ns = kRacyRescanNs);

  // The real on-disk name of `leaf` inside directory `dirfd` when it exists
  // under another case; nullopt when no entry matches case-insensitively.
  // `dirfd` may be an O_PATH descriptor.
  std::optional<std::string> find(int dirfd, std::string_view leaf);
  // Tell the cache the server created / removed `leaf` in `dirfd`, so the
  // index stays valid without a rescan. Call right after the change: the
  // directory's new mtime is recorded as ours, so an outside change landing
  // in the same timestamp tick goes unnoticed until the next one.
  void note_created(int dirfd, std::string_view leaf);
  void note_removed(int dirfd, std::string_view leaf);

  // Number of directory scans so far (for tests and statistics).
  uint64_t scans() const;
  // Number of directories currently indexed.
  size_t size() const;

 private:
  struct DirKey {
    uint64_t dev = 0;
    uint64_t ino = 0;
    bool operator==(const DirKey&) const = default;
  };
  struct DirKeyHash {
    size_t operator()(const DirKey& k) const { return std::hash<uint64_t>()(k.dev * 0x9E3779B97F4A7C15ULL ^ k.ino); }
  };
  // What fstat of a directory fd says about it.
  struct DirState {
    DirKey key;
    int64_t mtime_ns = 0;
  };
  struct DirIndex {
    int64_t mtime_ns = 0;  // directory mtime the index reflects
    // Built or updated while the mtime was so recent that a later change
    // could share the same timestamp; such an index is rescanned once it is
    // older than kRacyRescanNs.
    bool racy = false;
    int64_t scanned_ns = 0;  // coarse realtime of the scan
    int64_t scan_cost_ns = 0;  // how long the scan took
    // fold_case(name) -> real names (several on a case-sensitive disk).
    std::unordered_map<std::string, std::vector<std::string>> names;
    std::list<DirKey>::iterator lru_pos;
  };

  static std::optional<DirState> dir_state(int dirfd);
  static std::optional<DirIndex> scan(int dirfd, int64_t mtime_ns);
  // Looks `folded` up in a valid index; false when there is none.
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<DirKey, DirIndex, DirKeyHash> dirs;
    std::list<DirKey> lru;  // most recently used first
    size_t max_dirs = 1;
  };
  Shard& shard_for(const DirKey& key) const { return shards_[DirKeyHash()(key) % shard_count_]; }
  bool lookup_locked(Shard& shard, const DirState& ds, const std::string& folded, std::string_view leaf,
                     std::optional<std::string>& result);
  static void insert_locked(Shard& shard, const DirKey& key, DirIndex&& index);
  // Applies `fn` to the directory's index, if it has one, and records its new mtime.
  template <typename Fn>
  void update(int dirfd, Fn&& fn);

  int64_t racy_rescan_ns_;
  size_t shard_count_;
  std::unique_ptr<Shard[]> shards_;
  std::atomic<uint64_t> scans_{0};
};

// Resolves `path` (relative Unix path from parse_smb_path) under `root_fd`
// component by component: each component is used as given when it exists,
// else replaced by its case-insensitive match from the cache. The returned
// path names the same file as `path` would on a case-insensitive filesystem;
// a missing final component (or a missing directory) is left as given so a
// create uses the client's spelling.
std::string resolve_case_insensitive(NameIndexCache& cache, int root_fd, std::string_view path);

}  // namespace ringsmb::vfs
