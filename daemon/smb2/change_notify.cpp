// SMB2 CHANGE_NOTIFY (MS-SMB2 2.2.35, 2.2.36, 3.3.5.19).
//
// A change notification completes asynchronously (an interim
// STATUS_PENDING response, then the final one when something changes), and
// the async request machinery does not exist yet. Until it does, a valid
// request on a directory is answered STATUS_NOT_SUPPORTED, which clients
// (Windows Explorer, smbclient "notify") accept and stop watching; anything
// malformed or on a non-directory fails as the spec says.
#include "smb2/access.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/negotiated_sizes.hpp"

namespace ringsmb::smb2 {
namespace {
enum : uint16_t { SMB2_WATCH_TREE = 0x0001 };
// MS-FSCC 2.4.42 / MS-SMB2 2.2.35 CompletionFilter bits: FILE_NOTIFY_CHANGE_*.
constexpr uint32_t kValidCompletionFilter = 0x00000FFF;
}  // namespace

NtStatus handle_change_notify(Request& req, ByteWriter&) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t flags = r.u16();
  uint32_t output_length = r.u32();
  r.skip(16);  // FileId: Request::open_file()
  uint32_t filter = r.u32();
  if (!r.ok()) return NtStatus::InvalidParameter;
  (void)flags;
  state::Open* open = req.open_file();
  if (!open) return NtStatus::FileClosed;
  if (!open->is_directory) return NtStatus::InvalidParameter;
  if (output_length > negotiated_sizes(req.conn, req.server).max_trans) return NtStatus::InvalidParameter;
  if (filter == 0 || (filter & ~kValidCompletionFilter)) return NtStatus::InvalidParameter;
  if (!(open->granted_access & FILE_READ_DATA)) return NtStatus::AccessDenied;  // FILE_LIST_DIRECTORY
  // A notification waits, and a request that would wait in the middle of a
  // compound chain fails with STATUS_INTERNAL_ERROR, as on Windows
  // (MS-SMB2 3.3.5.2.7 <262>); the elements after it still run.
  if (req.hdr.next_command != 0) return NtStatus::InternalError;
  return NtStatus::NotSupported;
}

}  // namespace ringsmb::smb2
