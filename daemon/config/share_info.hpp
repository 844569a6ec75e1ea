// A share as a tree connect reached it: its configuration resolved for
// that connect by the control plane (control/share_access.hpp), applied
// by the data plane.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/unix_user.hpp"
#include "config/config.hpp"

namespace ringsmb::config {

struct ShareInfo {
  std::string name;
  std::string path;
  std::string comment;
  bool is_ipc = false;
  bool read_only = true;
  bool browseable = true;
  bool case_sensitive = false;
  EncryptionPolicy encryption = EncryptionPolicy::Off;
  // Per-share options the data plane applies (docs/configuration.md).
  bool hide_dot_files = true;
  bool oplocks = true;
  bool leases = true;
  bool store_dos_attributes = false;
  bool streams = false;  // named streams wanted ("streams = yes", the default)
  // NT security descriptors stored in trusted.ringsmb.ntacl ("nt acl
  // support"); off: the mode alone (docs/security.md).
  bool nt_acl_support = true;
  // SE_DACL_AUTO_INHERITED kept only with SE_DACL_AUTO_INHERIT_REQ, as
  // Windows does ("acl flag inherited canonicalization").
  bool acl_flag_inherited_canonicalization = true;
  // Clients may make symbolic links ("client symlinks", smb2/fsctl/fsctl_symlink.cpp).
  bool client_symlinks = false;
  uint32_t create_mask = 0744;
  uint32_t directory_mask = 0755;
  std::vector<std::string> veto_files;
  // The recycle bin (smb2/files/recycle.hpp); its repository is relative to
  // the share root, with %U, %S and %H expanded for this tree connect.
  RecycleConfig recycle;
  // Previous Versions from snapshots ("vfs objects = shadow_copy2"); unset: off.
  std::optional<ShadowCopyConfig> shadow_copy;
  FruitOptions fruit;  // Apple's extensions (smb2/fruit/)
  // force user / force group, resolved by the control plane at tree
  // connect: file operations on the tree run with this identity instead of
  // the session's. force_user carries the forced user's uid, primary gid and
  // groups; force_gid then replaces the primary gid.
  std::optional<UnixUser> force_user;
  std::optional<uint32_t> force_gid;
};

}  // namespace ringsmb::config
