// Case-insensitive name lookup without an O(n) directory scan per lookup.
//
// Windows clients expect "FOO.TXT" to open "foo.txt". The exact name is
// always tried first (one openat2/statx). Only on a miss does the cache
// consult a per-directory index of case-folded names -> real names, built
// by one scan of the directory the first time it is needed and kept current
// by the server's own creates, renames and deletes. An index is trusted only
// while the directory's mtime (ns) and inode match what was recorded, so
// changes made outside the server rebuild it.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ringsmb::vfs {

// Simple Unicode-aware case folding for ASCII and the Latin-1/Latin Extended-A,
// Greek and Cyrillic ranges, on UTF-8 strings; other code points unchanged.
std::string fold_case(std::string_view utf8);

class NameIndexCache {
 public:
  explicit NameIndexCache(size_t max_directories = 4096) : max_dirs_(max_directories) {}

  // The real on-disk name of `leaf` inside directory `dirfd` when it exists
  // under another case; nullopt when no entry matches case-insensitively.
  std::optional<std::string> find(int dirfd, std::string_view leaf);
  // Tell the cache the server created / removed `leaf` in `dirfd`, so the
  // index stays valid without a rescan.
  void note_created(int dirfd, std::string_view leaf);
  void note_removed(int dirfd, std::string_view leaf);

 private:
  struct DirIndex;
  size_t max_dirs_;
  std::mutex mu_;
  // key: (dev, ino) packed; LRU list of keys.
  std::unordered_map<std::string, std::list<std::string>::iterator> lru_pos_;
  std::list<std::string> lru_;
  std::unordered_map<std::string, std::unordered_map<std::string, std::string>> index_;
  std::unordered_map<std::string, std::pair<int64_t, uint32_t>> mtime_;
};

// Resolves `path` (relative Unix path from parse_smb_path) under `root_fd`
// component by component: each component is used as given when it exists,
// else replaced by its case-insensitive match from the cache. The returned
// path names the same file as `path` would on a case-insensitive filesystem;
// a missing final component (or a missing directory) is left as given so a
// create uses the client's spelling.
std::string resolve_case_insensitive(NameIndexCache& cache, int root_fd, std::string_view path);

}  // namespace ringsmb::vfs
