// Hard links (MS-FSCC 2.4.27.2 FileLinkInformation, 2.4.27.3 ...Ex;
// MS-FSA 2.1.5.14.6): SET_INFO gives the open's file a second name, a
// Linux hard link (linkat) beneath the share root. ReplaceIfExists (or
// FILE_LINK_REPLACE_IF_EXISTS) replaces an existing file atomically (a
// link under a temporary name renamed over it); a directory is never
// replaced nor linked (FILE_IS_A_DIRECTORY), a file some client holds
// open is not replaced (ACCESS_DENIED), and a name that already is this
// file succeeds and changes nothing. Names go through the same checks as
// a rename's target ('..' above the root, veto files, case). The link
// count shows in FileStandardInformation (vfs/file_info.cpp).
#pragma once

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

NtStatus set_hard_link(Request& req, state::Open& open, ByteSpan buf, bool ex);

}  // namespace ringsmb::smb2
