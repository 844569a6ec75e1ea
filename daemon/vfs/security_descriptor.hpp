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

// How a user stands to a file, as the mode's descriptor sees it: its owner
// (S-1-22-1-<uid>), a member of its group (S-1-22-2-<gid>), and always
// Everyone.
struct ModeRole {
  bool owner = false;
  bool in_group = false;
};
// The rights a user in `role` has on a file without a stored descriptor
// (MS-DTYP 2.5.3.2 against the descriptor its mode implies, computed from
// the mode without building one: CREATE asks it for every open of an
// existing file). Anyone else: the union of the group ACE (when a member)
// and the Everyone ACE of build_security_descriptor, exactly what
// ntacl::maximal_access(ntacl::from_mode(st), token) answers (the unit
// tests hold the two together). The owner: full control, as Samba gives
// the creator of a file. Its ACE already grants READ_CONTROL, WRITE_DAC
// and WRITE_OWNER, so it could give itself any right with a SET_INFO; the
// kernel still binds its data access to the rwx bits.
uint32_t mode_maximal_access(const FileStat& st, ModeRole role);

}  // namespace ringsmb::vfs
