// SMB2 READ (MS-SMB2 2.2.19, 2.2.20, 3.3.5.12).
#include <unistd.h>

#include "smb2/access.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/pipe_io.hpp"
#include "state/lock_table.hpp"

namespace ringsmb::smb2 {

NtStatus handle_read(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  r.u8();  // Padding
  r.u8();  // Flags
  uint32_t length = r.u32();
  uint64_t offset = r.u64();
  FileId id{r.u64(), r.u64()};
  uint32_t minimum = r.u32();
  if (!r.ok()) return NtStatus::InvalidParameter;
  state::Open* open = req.find_open(id);
  if (!open) return NtStatus::FileClosed;
  if (length > req.server.max_read) return NtStatus::InvalidParameter;
  if (open->is_directory) return NtStatus::InvalidDeviceRequest;
  if (!(open->granted_access & (FILE_READ_DATA | FILE_EXECUTE))) return NtStatus::AccessDenied;
  if (find_pipe(req.conn, *open)) return read_pipe(req, *open, length, w);  // Offset means nothing on a pipe
  if (offset > uint64_t(INT64_MAX) - length) return NtStatus::InvalidParameter;
  if (open->node) {
    NtStatus st = state::lock_table().check_io(open->node->device, open->node->inode, open, offset, length, false);
    if (st != NtStatus::Success) return st;
  }

  constexpr size_t kDataOffset = wire::kHeaderSize + 16;
  size_t start = w.size();
  w.u16(17);
  w.u8(uint8_t(kDataOffset));
  w.u8(0);
  w.u32(0);  // DataLength, patched
  w.u32(0);  // DataRemaining
  w.u32(0);  // Reserved2
  Bytes& buf = w.buffer();
  size_t data_at = buf.size();
  buf.resize(data_at + length);
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(open->fd.get(), buf.data() + data_at + got, length - got, off_t(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return nt_status_from_errno(errno);
    }
    if (n == 0) break;
    got += size_t(n);
  }
  buf.resize(data_at + got);
  if (got == 0 && length > 0) return NtStatus::EndOfFile;
  if (got < minimum) return NtStatus::EndOfFile;
  if (got == 0) w.u8(0);  // zero-length read still carries the one-byte Buffer
  store_le32(buf.data() + start + 4, uint32_t(got));
  open->position = offset + got;
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
