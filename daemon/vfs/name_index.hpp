// Case-insensitive name lookup without an O(n) directory scan per lookup.
//
// Windows clients expect "FOO.TXT" to open "foo.txt". The exact name is
// always tried first (one openat2/statx). Only on a miss does the cache
// consult a per-directory index of case-folded names -> real names, built
// by one scan of the directory the first time it is needed and kept current
// by the server's own creates, renames and deletes. Changes made outside
// the server are noticed through the directory's ctime (and inode).
//
// The server's own changes are bracketed: begin_change() right before the
// syscall, Change::added()/removed()/unchanged() right after it. While the
// bracket is open the change is "in flight", and the directory is observed
// (fstat) at both ends. A new ctime is taken for the server's own only while
// a change of ours is in flight that can account for it; anything else is
// an outside change and makes the next lookup rescan (the invariant is
// written out above DirIndex). What that gives the callers:
//
//  - An outside change made while none of the server's changes to that
//    directory is in flight is seen by the next lookup: it rescans.
//  - One made while a change of ours is in flight can be taken for ours (a
//    timestamp is one value, not a count), and one in the same timestamp
//    tick as a ctime already seen leaves no trace where timestamps are
//    coarse. Whenever either could have happened the index is "racy" and is
//    verified by a fresh scan once it has been racy for kRacyRescanNs, or
//    100 times the CPU time its scan took for a huge directory, so verification
//    never costs more than about 1% of a core.
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
  struct DirKey {
    uint64_t dev = 0;
    uint64_t ino = 0;
    bool operator==(const DirKey&) const = default;
  };

 public:
  // How long a racy index is trusted before a verifying rescan.
  static constexpr int64_t kRacyRescanNs = 1'000'000'000;

  // A cache of at least 256 directories is split into 16 shards, each with
  // its own lock and LRU, so workers creating files in different
  // directories never wait for each other; a small one (tests) is one shard
  // with an exact LRU.
  // `racy_rescan_ns` 0 verifies a racy index at every lookup (for tests).
  explicit NameIndexCache(size_t max_directories = 4096, int64_t racy_rescan_ns = kRacyRescanNs);

  // The real on-disk name of `leaf` inside directory `dirfd` when it exists
  // under another case; nullopt when no entry matches case-insensitively.
  // `dirfd` may be an O_PATH descriptor.
  std::optional<std::string> find(int dirfd, std::string_view leaf);

  // One change the server makes to a directory: create, mkdir, unlink,
  // rmdir, either side of a rename. Begin it right before the syscall and
  // finish it right after with what the syscall did; `dirfd` must stay open
  // until then. A Change destroyed unfinished (an early return) makes the
  // index distrust the directory, since what happened is unknown.
  class Change {
   public:
    Change(Change&& other) noexcept;
    Change& operator=(Change&&) = delete;
    ~Change();
    void added(std::string_view leaf);    // the syscall made `leaf`
    void removed(std::string_view leaf);  // the syscall took `leaf` away
    void unchanged();                     // the syscall failed: nothing changed

   private:
    friend class NameIndexCache;
    enum class Outcome { Added, Removed, Unchanged, Unknown };
    Change(NameIndexCache* cache, int dirfd, std::optional<DirKey> key, uint64_t generation)
        : cache_(cache), dirfd_(dirfd), key_(key), generation_(generation) {}
    void finish(Outcome outcome, std::string_view leaf);

    NameIndexCache* cache_;
    int dirfd_;
    std::optional<DirKey> key_;  // nullopt: the directory could not be stat'ed
    uint64_t generation_;        // the index the change counts in; 0: none
  };
  [[nodiscard]] Change begin_change(int dirfd);
  // find(), and when no entry matches, a change begun on the same
  // observation of the directory (one fstat, not two), as a CREATE that
  // looks the name up and then makes it does; `change` is left empty when
  // an entry matched or the directory could not be stat'ed. The change
  // counts as in flight from the lookup on: the caller finishes it as any
  // other (unchanged() when it makes nothing after all).
  std::optional<std::string> find_or_begin(int dirfd, std::string_view leaf, std::optional<Change>& change);

  // Number of directory scans so far (for tests and statistics).
  uint64_t scans() const;
  // Number of directories currently indexed.
  size_t size() const;

 private:
  struct DirKeyHash {
    size_t operator()(const DirKey& k) const { return std::hash<uint64_t>()(k.dev * 0x9E3779B97F4A7C15ULL ^ k.ino); }
  };
  // What fstat of a directory fd says about it.
  struct DirState {
    DirKey key;
    int64_t ctime_ns = 0;
  };
  using Names = std::unordered_map<std::string, std::vector<std::string>>;  // fold_case(name) -> real names
  struct Note {  // one of our changes, kept for the scans running meanwhile
    std::string leaf;
    bool added = false;
  };
  // One directory's index and the accounting that keeps it honest.
  //
  // The invariant, under the shard's lock: `ctime_ns` is the newest ctime
  // of the directory the server has observed (at a lookup, or at either end
  // of one of its changes), and while `trusted` every change to the
  // directory between the scan that built `names` and that observation is
  //   (a) one of the server's changes that has finished: it is in `names`
  //       (one that finished during a scan is replayed onto the scan's
  //       result from `notes_log`), or
  //   (b) one of the server's changes still in flight, not in `names` yet:
  //       a lookup racing with a create may miss the new name, as it would
  //       had it come a moment earlier, or
  //   (c) an outside change the ctime could not show, for which the index
  //       is racy (`racy_since_ns`) and will be verified by a scan.
  // How observations keep it: a ctime newer than `ctime_ns` is explained
  // only by an in-flight change of ours whose effect has not been seen yet
  // (`unseen`: one per change, spent by the first new ctime observed while
  // it is in flight; that may hide an outside change made meanwhile, so it
  // makes the index racy). With none to spend, the change is an outside
  // one: `trusted` is cleared and the next lookup rescans. A change begins
  // with an observation made before it counts as in flight, so an outside
  // change from before ours can never be taken for ours; it ends with one
  // made while it still counts, so its own new ctime is explained. A change
  // that did nothing gives its credit back, and the index is distrusted if
  // the credit may already have explained something.
  // ctime, not mtime: nobody can set a ctime, so it only moves forward (a
  // backward mtime, from touch -d or tar, would hide a change), and an
  // observation sampled before a newer one but locked after it is simply
  // older and says nothing new. (One older by more than a second means the
  // clock was set back: the index is distrusted and starts over from it.)
  struct DirIndex {
    uint64_t generation = 0;  // tells this index from an evicted one with the same key
    Names names;
    bool trusted = false;
    int64_t ctime_ns = 0;
    uint32_t in_flight = 0;   // our changes begun and not finished
    uint32_t unseen = 0;      // credits of in-flight changes, <= in_flight
    uint64_t distrusts = 0;   // outside changes seen so far (a scan compares it)
    int64_t racy_since_ns = 0;  // 0: verified; else since when a change may be hidden
    uint64_t racy_marks = 0;    // times it was made racy (a scan compares it)
    int64_t scan_cost_ns = 0;
    uint32_t scans_running = 0;
    uint64_t notes_total = 0;     // our finished changes so far
    std::vector<Note> notes_log;  // the last ones, kept while scans run
    std::list<DirKey>::iterator lru_pos;
  };
  // What a scan remembers of the index when it starts.
  struct ScanTicket {
    uint64_t generation = 0;
    uint64_t notes_total = 0;
    uint64_t distrusts = 0;
    uint64_t racy_marks = 0;
    int64_t started_ns = 0;
    int64_t ctime_ns = 0;
  };
  struct Scanned {
    Names names;
    int64_t cost_ns = 0;  // CPU time the scan took
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<DirKey, DirIndex, DirKeyHash> dirs;
    std::list<DirKey> lru;  // most recently used first
    size_t max_dirs = 1;
  };

  static std::optional<DirState> dir_state(int dirfd);
  std::optional<std::string> find_observed(int dirfd, const DirState& ds, std::string_view leaf);
  Change begin_observed(int dirfd, const DirState& ds);
  static std::optional<Scanned> read_directory(int dirfd);
  static std::optional<std::string> pick(const Names& names, const std::string& folded, std::string_view leaf);
  static void apply(Names& names, const Note& note);

  Shard& shard_for(const DirKey& key) const { return shards_[DirKeyHash()(key) % shard_count_]; }
  DirIndex& entry_locked(Shard& shard, const DirKey& key);
  DirIndex* existing_locked(Shard& shard, const DirKey& key, uint64_t generation);
  static void observe(DirIndex& index, int64_t ctime_ns, int64_t now_ns);
  bool usable(const DirIndex& index, int64_t now_ns) const;
  static ScanTicket start_scan(DirIndex& index, int64_t ctime_ns, int64_t now_ns);
  void end_scan(Shard& shard, const DirKey& key, const ScanTicket& ticket, Scanned* scanned);
  void end_change(Change& change, Change::Outcome outcome, std::string_view leaf);
  static void record(DirIndex& index, Change::Outcome outcome, std::string_view leaf);

  int64_t racy_rescan_ns_;
  size_t shard_count_;
  std::unique_ptr<Shard[]> shards_;
  std::atomic<uint64_t> scans_{0};
  std::atomic<uint64_t> next_generation_{1};
};

// Resolves `path` (relative Unix path from parse_smb_path) under `root_fd`
// component by component: each component is used as given when it exists,
// else replaced by its case-insensitive match from the cache. The returned
// path names the same file as `path` would on a case-insensitive filesystem;
// a missing final component (or a missing directory) is left as given so a
// create uses the client's spelling.
std::string resolve_case_insensitive(NameIndexCache& cache, int root_fd, std::string_view path);

// Unlinks `leaf` (a directory with `is_directory`) from `dirfd` as one of
// the server's changes, telling `cache` what happened. False with errno set
// when unlinkat failed.
bool unlink_noted(NameIndexCache& cache, int dirfd, const std::string& leaf, bool is_directory);

}  // namespace ringsmb::vfs
