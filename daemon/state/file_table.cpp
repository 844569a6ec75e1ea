#include "state/file_table.hpp"

#include <algorithm>

namespace ringsmb::state {
namespace {

// MS-SMB2 2.2.13.1 access mask bits that matter for sharing.
constexpr uint32_t FILE_READ_DATA = 0x1, FILE_WRITE_DATA = 0x2, FILE_APPEND_DATA = 0x4, FILE_EXECUTE = 0x20,
                   DELETE = 0x10000;
constexpr uint32_t FILE_SHARE_READ = 1, FILE_SHARE_WRITE = 2, FILE_SHARE_DELETE = 4;

bool reads(uint32_t a) { return a & (FILE_READ_DATA | FILE_EXECUTE); }
bool writes(uint32_t a) { return a & (FILE_WRITE_DATA | FILE_APPEND_DATA); }
bool deletes(uint32_t a) { return a & DELETE; }

// Only opens that read, write or delete take part in sharing: an open for
// attributes or the security descriptor alone neither checks nor records a
// share mode (MS-FSA 2.1.5.1.2.1; what Windows' IoCheckShareAccess does).
// Word opens the parent directory that way, with no sharing, and still
// renames files inside it (smb2.rename.msword).
bool participates(uint32_t a) { return reads(a) || writes(a) || deletes(a); }

// MS-FSA 2.1.5.1.2.1: does an existing open conflict with a new one?
bool conflicts(uint32_t held_access, uint32_t held_share, uint32_t new_access, uint32_t new_share) {
  if (!participates(held_access) || !participates(new_access)) return false;
  if (reads(held_access) && !(new_share & FILE_SHARE_READ)) return true;
  if (writes(held_access) && !(new_share & FILE_SHARE_WRITE)) return true;
  if (deletes(held_access) && !(new_share & FILE_SHARE_DELETE)) return true;
  if (reads(new_access) && !(held_share & FILE_SHARE_READ)) return true;
  if (writes(new_access) && !(held_share & FILE_SHARE_WRITE)) return true;
  if (deletes(new_access) && !(held_share & FILE_SHARE_DELETE)) return true;
  return false;
}

}  // namespace

FileTable::Shard& FileTable::shard_for(uint64_t dev, uint64_t ino) {
  return shards_[(ino ^ (dev * 31)) % kShards];
}

Result<std::shared_ptr<FileNode>> FileTable::open(uint64_t dev, uint64_t ino, const void* owner, uint32_t access,
                                                  uint32_t share_access) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard lock(s.mu);
  auto& slot = s.nodes[{dev, ino}];
  std::shared_ptr<FileNode> node = slot.lock();
  if (!node) {
    node = std::make_shared<FileNode>();
    node->device = dev;
    node->inode = ino;
    slot = node;
  }
  if (node->delete_pending) return Unexpected(NtStatus::DeletePending);
  for (const auto& o : node->opens)
    if (conflicts(o.access, o.share_access, access, share_access)) return Unexpected(NtStatus::SharingViolation);
  node->opens.push_back({owner, access, share_access});
  return node;
}

bool FileTable::close(const std::shared_ptr<FileNode>& node, const void* owner) {
  Shard& s = shard_for(node->device, node->inode);
  std::lock_guard lock(s.mu);
  auto& v = node->opens;
  v.erase(std::remove_if(v.begin(), v.end(), [&](const FileNode::OpenRef& r) { return r.owner == owner; }), v.end());
  if (!v.empty()) return false;
  s.nodes.erase({node->device, node->inode});
  return true;
}

bool FileTable::delete_pending(uint64_t dev, uint64_t ino) {
  Shard& s = shard_for(dev, ino);
  std::lock_guard lock(s.mu);
  auto it = s.nodes.find({dev, ino});
  if (it == s.nodes.end()) return false;
  auto node = it->second.lock();
  return node && node->delete_pending;
}

void FileTable::set_delete_pending(const std::shared_ptr<FileNode>& node, bool pending) {
  std::lock_guard lock(mutex_for(*node));
  node->delete_pending = pending;
}

bool FileTable::is_delete_pending(const std::shared_ptr<FileNode>& node) {
  std::lock_guard lock(mutex_for(*node));
  return node->delete_pending;
}

size_t FileTable::open_count(const std::shared_ptr<FileNode>& node) {
  std::lock_guard lock(mutex_for(*node));
  return node->opens.size();
}

bool FileTable::others_share_delete(const std::shared_ptr<FileNode>& node, const void* owner) {
  std::lock_guard lock(mutex_for(*node));
  for (const auto& o : node->opens)
    if (o.owner != owner && !(o.share_access & FILE_SHARE_DELETE)) return false;
  return true;
}

}  // namespace ringsmb::state
