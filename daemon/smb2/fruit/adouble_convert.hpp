// Conversion of AppleDouble "._NAME" files into NAME's streams, as Samba's
// vfs_fruit does for the files macOS (or an old Netatalk) left on a share
// before it had named streams: the attributes macOS packed into the "._"
// file become streams of their own names (":" and the other characters
// NTFS forbids as U+F0xx), its Finder info the AFP_AfpInfo stream and its
// resource fork the AFP_Resource stream. The "._" file is then rewritten
// empty (82 bytes: nothing left to convert, so converting again changes
// nothing), or removed with fruit:delete_empty_adfiles. With
// fruit:wipe_intentionally_left_blank_rfork, macOS's blank resource fork
// is dropped instead of kept.
//
// When, as in Samba: on a fruit share, when a CREATE names AFP_AfpInfo or
// AFP_Resource of a file, and for each entry of a directory listing with
// AAPL's READDIR_ATTR. A share without fruit never gets here; with fruit,
// a file without a "._" file costs one failed openat.
#pragma once

#include <string_view>

#include "smb2/engine/dispatch.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2::fruit {

// Converts "._`leaf`" in directory `dir_fd` into the streams of `leaf`,
// open as `fd` (stat `st`), with the session user's identity: it must be
// able to write both. Anything that does not parse is left alone.
void convert_appledouble(Request& req, int dir_fd, std::string_view leaf, int fd, const vfs::FileStat& st);

// Whether `leaf` is an AppleDouble file's name ("._" and more).
bool is_appledouble_name(std::string_view leaf);

}  // namespace ringsmb::smb2::fruit
