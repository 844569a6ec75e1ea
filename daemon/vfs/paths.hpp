// SMB path names to paths under a share root, and opening beneath the root.
#pragma once

#include <fcntl.h>

#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/unicode.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

// UTF-16LE <-> UTF-8. Invalid UTF-16 (unpaired surrogates) fails.
using ringsmb::unicode::utf16le_to_utf8;
using ringsmb::unicode::utf8_to_utf16le;
Bytes utf8_to_utf16le(std::string_view in);

// Converts an SMB2 CREATE name (UTF-16LE, '\' separators, relative to the
// share root) to a relative Unix path ('/' separators, no leading '/').
// "" means the share root. Leading '\' is tolerated (smb2.create.leading-slash).
// A '..' component removes the one before it ("a\\..\\b" is "b"); one that
// would climb above the share root is ObjectPathSyntaxBad, as on Windows.
// '/' is a separator too, as in Samba (Windows clients never send it; MS-FSCC
// 2.1.5.2 forbids it in a name, so it cannot name anything else).
// Rejects: '.' components (ObjectNameInvalid), embedded NUL
// or characters Windows forbids ("*?<>| and 0x01-0x1F, MS-FSCC 2.1.5.2),
// empty components ("a\\b"), components over 255 UTF-16 code units
// (ObjectNameInvalid) or over 255 UTF-8 bytes (NameTooLong: legal for
// Windows, but no Linux filesystem can store it). ':' introduces a stream
// in the last component only: "name:stream" or "name:stream:$DATA" give
// stream "stream"; "name::$DATA" is the unnamed data stream, i.e. the file
// itself (stream ""). Any other type than $DATA is ObjectNameInvalid.
// One trailing '\' is accepted and reported in `trailing_separator`, since
// Windows only allows it when the target is a directory.
struct SmbPath {
  std::string path;    // relative Unix path, "" for the root
  std::string stream;  // named stream in the last component, "" if none
  bool data_stream_type = false;  // ":$DATA" was spelled out ("name::$DATA", "name:s:$DATA")
  bool trailing_separator = false;
};
Result<SmbPath> parse_smb_path(ByteSpan utf16le_name);

// FILE_RENAME_INFORMATION and FILE_LINK_INFORMATION (MS-FSCC 2.4.42,
// 2.4.27) share one layout, classic (a ReplaceIfExists byte) or Ex (a
// Flags word whose bit 0x1 is REPLACE_IF_EXISTS): whether the new name may
// replace an existing file, and the new name as UTF-16LE. A RootDirectory
// (never sent over SMB2), an empty or odd-length name is INVALID_PARAMETER;
// a buffer shorter than the fixed part INFO_LENGTH_MISMATCH.
struct NameChange {
  bool replace = false;
  ByteSpan name;  // within the buffer
};
Result<NameChange> read_name_change(ByteSpan buf, bool ex);

// openat2(dirfd, path, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): nothing
// escapes `dirfd` through '..', absolute names or symlinks (an escape fails
// with -EXDEV). Returns the fd or -errno. O_CLOEXEC is always added; `mode`
// is only passed on with O_CREAT/O_TMPFILE; "" or nullptr means ".".
int open_beneath(int dirfd, const char* path, int flags, mode_t mode);
// The NTSTATUS for a negative open_beneath result (what CREATE answers). An
// escape attempt (-EXDEV, or -ELOOP from a magic link or a final symlink
// opened with O_NOFOLLOW) is ACCESS_DENIED: the name exists, but not for the
// client, and it is not a cross-device error.
NtStatus open_beneath_status(int neg_errno);

// Splits "a/b/c" into parent "a/b" and leaf "c" ("" parent for "c").
void split_parent(std::string_view path, std::string_view& parent, std::string_view& leaf);

}  // namespace ringsmb::vfs
