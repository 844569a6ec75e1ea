#include "smb2/files/share_options.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "state/file_table.hpp"
#include "vfs/dos_xattr.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/veto.hpp"

namespace ringsmb::smb2 {
namespace {

// The umask, read once from /proc: umask(2) can only read it by setting it,
// which would race with other threads creating files.
mode_t process_umask() {
  static const mode_t mask = [] {
    mode_t m = 022;
    if (FILE* f = fopen("/proc/self/status", "re")) {
      char line[256];
      unsigned v;
      while (fgets(line, sizeof line, f))
        if (sscanf(line, "Umask: %o", &v) == 1) {
          m = mode_t(v);
          break;
        }
      fclose(f);
    }
    return m;
  }();
  return mask;
}

}  // namespace

void restore_masked_mode(int fd, mode_t wanted) {
  if (wanted & process_umask()) fchmod(fd, wanted);
}

NtStatus veto_status(const ipc::ShareInfo& share, std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view leaf = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (vfs::is_vetoed_name(share.veto_files, leaf, share.case_sensitive)) return NtStatus::ObjectNameNotFound;
  if (slash != std::string_view::npos &&
      vfs::is_vetoed_path(share.veto_files, path.substr(0, slash), share.case_sensitive))
    return NtStatus::ObjectPathNotFound;
  return NtStatus::Success;
}

uint32_t reported_attributes(const ipc::ShareInfo& share, const vfs::FileStat& st, std::string_view name, int fd) {
  uint32_t a = vfs::dos_attributes(st, name, share.hide_dot_files);
  if (!share.store_dos_attributes) return a;
  auto stored = vfs::read_dos_xattr(fd);
  return stored ? vfs::merge_dos_attributes(a, *stored) : a;
}

uint32_t reported_attributes_at(const ipc::ShareInfo& share, const vfs::FileStat& st, int dirfd,
                                std::string_view name) {
  uint32_t a = vfs::dos_attributes(st, name, share.hide_dot_files);
  if (!share.store_dos_attributes) return a;
  auto stored = vfs::read_dos_xattr_at(dirfd, name);
  return stored ? vfs::merge_dos_attributes(a, *stored) : a;
}

NtStatus store_dos_attributes(const state::Tree& tree, int fd, uint32_t attrs) {
  become_root();
  int err = vfs::write_dos_xattr(fd, attrs);
  become_user(tree.identity);
  if (err == 0 || err == ENOTSUP) return NtStatus::Success;
  LOG_DEBUG("store dos attributes on share [%s]: %s", tree.share.name.c_str(), strerror(err));
  return nt_status_from_errno(err);
}

void store_new_file_attributes(const state::Tree& tree, int fd, const vfs::FileStat& st, uint32_t requested) {
  constexpr uint32_t kSettable = vfs::FILE_ATTRIBUTE_HIDDEN | vfs::FILE_ATTRIBUTE_SYSTEM | vfs::FILE_ATTRIBUTE_ARCHIVE;
  uint32_t want = requested & kSettable;
  if (!st.is_directory) want |= vfs::FILE_ATTRIBUTE_ARCHIVE;
  uint32_t implied = vfs::dos_attributes(st, {}, false) & kSettable;
  if (want != implied) store_dos_attributes(tree, fd, want);  // best effort: the file exists either way
}

void apply_stored_metadata(vfs::FileStat& st, int fd) { vfs::apply_file_meta(vfs::read_file_meta(fd), st); }

namespace {

// The node of the file whose metadata OPEN reads and writes: a named
// stream's open has the stream's node, and the file's fd.
state::FileNode* file_node(const state::Open& open) {
  return open.stream ? open.stream->base.get() : open.node.get();
}

}  // namespace

vfs::FileMeta stored_meta(const state::Open& open) {
  state::FileNode* node = file_node(open);
  if (!node) return vfs::read_file_meta(open.fd.get());
  vfs::FileMeta meta;
  if (node->known_meta(meta)) return meta;
  const uint32_t generation = node->meta_generation();  // before the getxattr: a write after it shows
  bool none = false;
  meta = vfs::read_file_meta(open.fd.get(), &none);
  if (none) node->learn_no_meta(generation);
  return meta;
}

void apply_stored_metadata(vfs::FileStat& st, const state::Open& open) { vfs::apply_file_meta(stored_meta(open), st); }

int write_stored_meta(const state::Open& open, const vfs::FileMeta& meta) {
  state::FileNode* node = file_node(open);
  const uint32_t before = node ? node->meta_written() : 0;
  const int err = vfs::write_file_meta(open.fd.get(), meta);
  if (!node) return err;
  const uint32_t after = node->meta_written();
  // No other write through the node since this one began: the node knows
  // the value, as a getxattr would read it back.
  if (err == 0 && after == before + 2) {
    const vfs::FileMeta stored =
        meta.empty() ? vfs::FileMeta{} : vfs::parse_file_meta(vfs::encode_file_meta(meta)).value_or(vfs::FileMeta{});
    node->learn_meta(after, stored);
  }
  return err;
}

void apply_stored_metadata_at(vfs::FileStat& st, int dirfd, std::string_view name) {
  vfs::apply_file_meta(vfs::read_file_meta_at(dirfd, name), st);
}

bool is_vetoed_name(const ipc::ShareInfo& share, std::string_view leaf) {
  return vfs::is_vetoed_name(share.veto_files, leaf, share.case_sensitive);
}

}  // namespace ringsmb::smb2
