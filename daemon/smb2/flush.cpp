// SMB2 FLUSH (MS-SMB2 2.2.17, 2.2.18, 3.3.5.11).
#include <unistd.h>

#include "smb2/access.hpp"
#include "smb2/access_check.hpp"
#include "smb2/dispatch.hpp"

namespace ringsmb::smb2 {

NtStatus handle_flush(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(8);
  r.skip(16);  // FileId: Request::open_file()
  state::Open* open = req.open_file();
  if (!open) return NtStatus::FileClosed;
  if (NtStatus s = check_change(*req.tree, *open, Change::WriteData); s != NtStatus::Success) return s;
  if (fsync(open->fd.get()) != 0 && errno != EINVAL && errno != EBADF) return nt_status_from_errno(errno);
  w.u16(4);
  w.u16(0);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
