// Where NT security descriptors live: the extended attribute
// trusted.ringsmb.ntacl of the file (one version byte, then the
// self-relative descriptor: owner, group, DACL; never a SACL). trusted.*
// attributes need CAP_SYS_ADMIN to read or write, so neither a local user
// nor an SMB client through another server can forge or strip one; the
// capability survives ringsmbd's per-thread fsuid switch (setfsuid drops
// only the file-system capabilities), so no identity change is needed.
//
// A file without the attribute has the descriptor its owner, group and
// mode imply (ntacl::from_mode) and only the Unix permissions decide.
//
// The cost on the CREATE path is kept out of shares that never stored a
// descriptor: the store is "in use" only once this server has written one
// (remembered across restarts by the file <state directory>/ntacl-in-use).
// Until then nothing is read. Once in use, descriptors are cached per
// inode (device, inode and birth time, so a reused inode number misses),
// bounded; only this server writes the attribute, and it updates the cache
// when it does, so a hit needs no syscall.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "vfs/file_info.hpp"
#include "vfs/ntacl.hpp"

namespace ringsmb::vfs {

inline constexpr const char* kNtAclXattr = "trusted.ringsmb.ntacl";
inline constexpr uint8_t kNtAclVersion = 1;
inline constexpr const char* kNtAclInUseFile = "ntacl-in-use";

using SharedSd = std::shared_ptr<const ntacl::SecurityDescriptor>;

// The stored descriptor of the file open as `fd` (an O_PATH fd works):
// null when none is stored. A value that does not parse, or of another
// version, reads as a DACL that grants nothing (fail closed).
SharedSd read_ntacl_xattr(int fd);
// Stores `sd` (owner, group, DACL); 0 or an errno (EPERM without
// CAP_SYS_ADMIN, ENOTSUP on a filesystem without trusted xattrs).
int write_ntacl_xattr(int fd, const ntacl::SecurityDescriptor& sd);
// Removes the stored descriptor; 0 when there is none afterwards.
int remove_ntacl_xattr(int fd);
// The attribute's value for `sd` and back (exposed for tests and fuzzing).
Bytes encode_ntacl_value(const ntacl::SecurityDescriptor& sd);
SharedSd decode_ntacl_value(ByteSpan value);

class NtAclStore {
 public:
  explicit NtAclStore(size_t max_entries = 8192);

  // Reads whether descriptors were stored before (at startup, as root).
  void load_state(const std::string& state_directory);
  bool in_use() const { return in_use_.load(std::memory_order_relaxed); }
  // Marks the store in use, in memory and (when a state directory was
  // loaded) on disk; the caller runs as root for the file.
  void mark_in_use();
  bool needs_marking() const { return !in_use(); }

  // The stored descriptor of the file `fd` whose statx is `st`: from the
  // cache, else from the attribute (then cached). Null: none stored.
  SharedSd lookup(int fd, const FileStat& st);
  // Writes (or, for null, removes) the file's descriptor and caches it.
  int store(int fd, const FileStat& st, SharedSd sd);
  // Records what a file is known to hold (a file this server just created).
  void remember(const FileStat& st, SharedSd sd);

  size_t size() const;

 private:
  struct Key {
    uint64_t dev = 0, ino = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.dev * 0x9E3779B97F4A7C15ULL ^ k.ino); }
  };
  struct Entry {
    uint64_t birth = 0;  // FileStat::creation_time: tells a reused inode number apart
    SharedSd sd;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<Key, Entry, KeyHash> map;
  };
  static constexpr size_t kShards = 16;
  Shard& shard(const Key& k) { return shards_[KeyHash()(k) % kShards]; }

  size_t max_per_shard_;
  std::array<Shard, kShards> shards_;
  std::atomic<bool> in_use_{false};
  std::string state_file_;
};

}  // namespace ringsmb::vfs
