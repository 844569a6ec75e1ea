// The server's own metadata changes, told to CHANGE_NOTIFY watchers with
// the filter Windows reports them under (MS-FSA 2.1.5.14.2: a changed
// CreationTime is FILE_NOTIFY_CHANGE_CREATION, LastAccessTime
// LAST_ACCESS, LastWriteTime LAST_WRITE, FileAttributes ATTRIBUTES,
// ChangeTime nothing; a security descriptor SECURITY).
//
// Why the server says it itself: inotify reports such a change (if it
// reaches the disk at all) as one IN_ATTRIB, which cannot tell an
// attribute from a time, an ACL or a stream; HIDDEN/SYSTEM/ARCHIVE on a
// share without "store dos attributes" never reach the disk. So SET_INFO
// records the change in OwnChanges before it touches the file, and tells
// the watchers of the file's directory (and the WATCH_TREE watchers above
// it), on whichever worker, with the exact filter; each watch then drops
// the IN_ATTRIB the same change brings for that name (whichever comes
// first), so each watcher sees one FILE_ACTION_MODIFIED under the right
// filter only.
//
// Cost: one relaxed atomic load (FileTable::notify_watched) while no
// directory is watched anywhere.
#pragma once

#include <cstdint>
#include <string>

#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

// The filter a FileBasicInformation SET_INFO reports under (MS-FSA
// 2.1.5.14.2), for a file whose attributes were ORIGINAL_ATTRS; 0: nothing
// to report. Times <= 0 (0 unchanged, -1/-2 freeze and thaw) change nothing.
uint32_t basic_info_filter(uint32_t original_attrs, uint64_t creation, uint64_t access, uint64_t write,
                           uint32_t attrs);

// SET_INFO is about to change metadata of PATH (relative to share root
// ROOT_FD): its IN_ATTRIB will be dropped by the watches. Returns false
// (and records nothing) when nobody watches.
bool note_own_change(ServerContext& server, int root_fd, const std::string& path);
// ... and has changed it: the watchers of its directory (and WATCH_TREE
// watchers above) get FILE_ACTION_MODIFIED for it if FILTER matches theirs.
void report_own_change(ServerContext& server, int root_fd, const std::string& path, uint32_t filter);

}  // namespace ringsmb::smb2
