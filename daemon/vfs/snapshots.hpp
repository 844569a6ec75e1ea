// A share's snapshots as Samba's vfs_shadow_copy2 finds them: a snapshot
// directory (shadow:snapdir, relative to the mount point of the share's
// file system, or absolute beneath it) holds one directory per snapshot,
// named by a strftime format (shadow:format) in UTC or local time
// (shadow:localtime); in each, the share's own copy lies at the share's
// path relative to the mount point (or shadow:basedir, or exactly at
// shadow:snapsharepath).
//
// Without a configured snapshot directory the usual layouts are found at
// the mount point (for btrfs: the share's subvolume), as Samba's
// vfs_snapper and vfs_shadow_copy2 read them: snapper's
// .snapshots/<N>/snapshot with the time in .snapshots/<N>/info.xml,
// .snapshots/<name in the format>, and ZFS's .zfs/snapshot/<name in the
// format>.
//
// Nothing here reaches outside the snapshot directory: it is opened
// beneath the mount point and each snapshot's copy of the share beneath
// it (openat2 RESOLVE_BENEATH), and every client open then goes beneath
// that copy. Snapshots are read-only whatever the file system says;
// smb2/snapshots/ refuses every change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

struct SnapshotSource {
  std::string share_path;                    // absolute, as configured
  std::string snapdir;                       // relative to the mount point, or absolute; "": found (above)
  std::string format = "@GMT-%Y.%m.%d-%H.%M.%S";
  bool localtime = false;                    // snapshot names in local time, not UTC
  bool sort_descending = true;               // newest first ("desc"); false: oldest first
  std::string mountpoint;                    // "": found by walking up while st_dev stays the same
  std::string basedir;                       // "": the mount point
  std::string snapsharepath;                 // "": the share's path relative to basedir
};

struct Snapshot {
  int64_t unix_time = 0;
  std::string name;  // the snapshot's top, relative to the mount point (".snapshots/7/snapshot")
};

// "@GMT-YYYY.MM.DD-HH.MM.SS" (MS-SMB2 2.2.13.2.7's token) <-> seconds since
// 1970 UTC. A malformed token is nullopt.
std::optional<int64_t> parse_gmt_token(std::string_view token);
std::string gmt_token(int64_t unix_time);
// Takes a "@GMT-..." component out of a relative Unix path ("a/@GMT-.../b"
// becomes "a/b"), as clients put the token at any level; returns its time.
std::optional<int64_t> take_gmt_token(std::string& path);

// The time a snapshot directory's name stands for under FORMAT, or nullopt
// when the name does not follow it (the whole name must match).
std::optional<int64_t> snapshot_name_time(std::string_view name, std::string_view format, bool localtime);

// The share's snapshots, sorted as configured; only those that hold a copy
// of the share root, one per time. An unusable source (no snapshot
// directory, one that is not beneath the mount point) has none.
std::vector<Snapshot> list_snapshots(const SnapshotSource& src);

// An O_PATH directory fd of the share root as it was at UNIX_TIME (the
// snapshot of exactly that time), or an error: ObjectNameNotFound when
// there is no such snapshot, ObjectPathNotFound when it lacks the share.
Result<int> open_snapshot_root(const SnapshotSource& src, int64_t unix_time);

// Where the share's copies lie, for the snapshot directory: the mount point
// and the share's path below it in a snapshot. Pure string work on
// absolute, normalized paths; errors name what is wrong.
struct SnapshotLayout {
  std::string snapdir_below_mount;  // the snapshot directory relative to the mount point; "": found
  std::string share_in_snapshot;    // the share root relative to a snapshot's top
};
std::optional<SnapshotLayout> snapshot_layout(const SnapshotSource& src, std::string_view mountpoint,
                                              std::string* why);

}  // namespace ringsmb::vfs
