// Files open anywhere in the server, keyed by (device, inode), so share
// modes and delete-on-close work across connections and worker threads.
// Sharded: a create locks one shard, never a global lock.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "common/ntstatus.hpp"

namespace ringsmb::state {

struct FileNode {
  uint64_t device = 0;
  uint64_t inode = 0;
  struct OpenRef {
    const void* owner;  // the Open
    uint32_t access;
    uint32_t share_access;
  };
  std::vector<OpenRef> opens;  // guarded by the shard's mutex
  bool delete_pending = false;
  // Path (relative to the share root fd) and that fd's identity, for the
  // unlink when the last handle closes with delete pending.
  std::string path;
  int root_fd = -1;
};

class FileTable {
 public:
  // Registers an open of (dev, ino) after checking share modes against the
  // existing opens (MS-FSA 2.1.5.1.2 share access check). On success the
  // returned node is shared by every open of that file.
  Result<std::shared_ptr<FileNode>> open(uint64_t dev, uint64_t ino, const void* owner, uint32_t access,
                                         uint32_t share_access);
  // Removes the open; returns true when it was the last one (the caller then
  // performs a pending delete).
  bool close(const std::shared_ptr<FileNode>& node, const void* owner);
  // Is this (dev, ino) open with delete pending?
  bool delete_pending(uint64_t dev, uint64_t ino);
  void set_delete_pending(const std::shared_ptr<FileNode>& node, bool pending);
  bool is_delete_pending(const std::shared_ptr<FileNode>& node);
  // Count of other opens on the node (rename/delete checks).
  size_t open_count(const std::shared_ptr<FileNode>& node);
  // Re-checks share modes for delete access on an already-open file: true
  // when every other open shares delete.
  bool others_share_delete(const std::shared_ptr<FileNode>& node, const void* owner);

 private:
  static constexpr size_t kShards = 64;
  using Key = std::pair<uint64_t, uint64_t>;
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second); }
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<Key, std::weak_ptr<FileNode>, KeyHash> nodes;
  };
  Shard& shard_for(uint64_t dev, uint64_t ino);
  std::mutex& mutex_for(const FileNode& n) { return shard_for(n.device, n.inode).mu; }
  std::array<Shard, kShards> shards_;
};

}  // namespace ringsmb::state
