// Previous Versions (MS-SMB2 3.3.5.9.4, 3.3.5.15.1): a share with
// "vfs objects = shadow_copy2" shows its snapshots (vfs/snapshots.hpp).
//
//  - FSCTL_SRV_ENUMERATE_SNAPSHOTS lists them as @GMT tokens.
//  - A CREATE names one by SMB2_CREATE_TIMEWARP_TOKEN (TWrp, a FILETIME)
//    or by a "@GMT-YYYY.MM.DD-HH.MM.SS" component anywhere in its path
//    (taken out of the path). The open then goes beneath the snapshot's
//    copy of the share root (Open::snapshot_root), with its descriptor
//    read-only whatever access was granted.
//  - Nothing changes a snapshot: a CREATE that would create, overwrite or
//    delete on close answers STATUS_MEDIA_WRITE_PROTECTED, and so does
//    every change check_change() judges (WRITE, FLUSH, SET_INFO, the FSCTLs
//    that write); a rename or a hard link out of it STATUS_NOT_SAME_DEVICE
//    (as Samba's vfs_shadow_copy2 answers).
//  - A snapshot open is never durable: a reconnect would find the file by
//    its path in the share, not in the snapshot.
// On a share without shadow_copy2 the FSCTL is INVALID_DEVICE_REQUEST, a
// @GMT component an ordinary name and a TWrp context OBJECT_NAME_NOT_FOUND.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/fsctl/fsctl.hpp"

namespace ringsmb::smb2 {

// FSCTL_SRV_ENUMERATE_SNAPSHOTS (MS-SMB2 2.2.31, 2.2.32.2).
inline constexpr uint32_t FSCTL_SRV_ENUMERATE_SNAPSHOTS = 0x00144064;

// The snapshot a CREATE names, and its copy of the share root once found.
struct SnapshotTarget {
  std::optional<int64_t> unix_time;
  std::shared_ptr<state::UniqueFd> root;
};

// Reads the TWrp context (FILETIME) and takes a @GMT component out of
// PATH; opens the snapshot's share root when one is named. InvalidParameter
// for a malformed TWrp, ObjectNameNotFound for a snapshot that does not
// exist (or a share without snapshots and a TWrp context).
NtStatus find_snapshot(Request& req, ByteSpan contexts, std::string& path, SnapshotTarget& out);

// What a CREATE in a snapshot may not do, before anything is opened.
NtStatus check_snapshot_create(uint32_t disposition, uint32_t create_options);

// The root an open's paths are relative to: its snapshot's, or the share's.
inline int open_root_fd(const state::Tree& tree, const state::Open& open) {
  return open.snapshot_root ? open.snapshot_root->get() : tree.root.get();
}

NtStatus fsctl_enumerate_snapshots(FsctlCall& call);

}  // namespace ringsmb::smb2
