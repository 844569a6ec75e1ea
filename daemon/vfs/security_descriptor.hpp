// Applying a security descriptor's DACL to the mode bits, the only ACL the
// server stores (see build_security_descriptor in file_info.hpp).
#pragma once

#include <sys/types.h>

#include <optional>

#include "common/bytes.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::vfs {

// The mode that grants exactly what `dacl` (a self-relative ACL, MS-DTYP
// 2.4.5) grants on the file `st`, or nullopt when no mode can: ACEs other
// than plain ACCESS_ALLOWED without inheritance flags, SIDs other than the
// file's owner, its group and Everyone, or masks that do not match what the
// rwx bits grant. Rights Unix always grants (reading attributes and the
// descriptor; for the owner also changing them, and DELETE) may be left out.
std::optional<mode_t> mode_from_dacl(const FileStat& st, ByteSpan dacl);

}  // namespace ringsmb::vfs
