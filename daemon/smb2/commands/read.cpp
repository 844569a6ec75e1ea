// SMB2 READ (MS-SMB2 2.2.19, 2.2.20, 3.3.5.12).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/streams/stream_io.hpp"
#include "state/lock_table.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr size_t kDataOffset = wire::kHeaderSize + 16;

// Each FileSegment holds a dup'd fd until the socket takes its data; a
// client that pipelines reads and never reads its socket must not use up
// the server's descriptors, so beyond this many the data is copied.
constexpr size_t kMaxPendingFileSegments = 64;

// The fixed part of the response; returns where DataLength goes.
size_t write_response_head(ByteWriter& w) {
  size_t start = w.size();
  w.u16(17);
  w.u8(uint8_t(kDataOffset));
  w.u8(0);
  w.u32(0);  // DataLength, patched
  w.u32(0);  // DataRemaining
  w.u32(0);  // Reserved2
  return start + 4;
}

// How many bytes a read at `offset` of up to `length` returns, from the
// file's size now; nullopt when the open is not a regular file (or fstat
// fails), whose size says nothing.
std::optional<uint32_t> bytes_available(int fd, uint64_t offset, uint32_t length) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  uint64_t size = uint64_t(st.st_size);
  if (offset >= size) return 0;
  return uint32_t(std::min<uint64_t>(length, size - offset));
}

// Reads up to `length` bytes at `offset` into `to`; the number read (short
// at the end of the file), or -errno.
int64_t read_fully(int fd, uint64_t offset, uint32_t length, uint8_t* to) {
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd, to + got, length - got, off_t(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    got += size_t(n);
  }
  return int64_t(got);
}

// Copies up to `length` bytes at `offset` into the reply; the number read,
// or -errno.
int64_t read_into_reply(int fd, uint64_t offset, uint32_t length, Bytes& buf) {
  size_t data_at = buf.size();
  buf.resize(data_at + length);  // zero-fills: what read_into_segment avoids
  int64_t got = read_fully(fd, offset, length, buf.data() + data_at);
  buf.resize(data_at + size_t(std::max<int64_t>(got, 0)));
  return got;
}

// A large signed or encrypted READ reads into a buffer of its own that is
// not zero-filled first (a Bytes would be: one pass over 1 MiB per READ),
// from the frame buffer cache (common/large_buffer.hpp),
// sent after the response body (FileSegment::data). Only the bytes pread
// returned are sent: the segment's length is that count.
int64_t read_into_segment(Request& req, int fd, uint64_t offset, uint32_t length) {
  FileSegment f{.offset = offset, .length = length};
  int64_t got = read_fully(fd, offset, length, f.allocate_data());
  if (got <= 0) return got;
  f.length = uint32_t(got);
  req.file_data = std::move(f);
  return got;
}

// Leaves the data of a large read in the page cache for the transport's
// sendfile (a FileSegment after the body) instead of copying it; DataLength
// is the size now, and if the file shrinks before the send, the transport
// pads with zeros. False when the data must be copied.
bool leave_in_file(Request& req, const state::Open& open, uint64_t offset, uint32_t want) {
  if (!req.may_send_file || want < req.server.sendfile_min_read) return false;
  if (req.conn.out_files.size() >= kMaxPendingFileSegments) return false;
  state::ResourceBudget& budget = req.server.budget;
  if (!budget.open_file_fits(req.server.connections.load(std::memory_order_relaxed))) return false;
  int fd = fcntl(open.fd.get(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return false;  // out of descriptors: copy instead
  req.file_data = FileSegment{0, state::UniqueFd(fd), offset, want, state::OpenCharge(&budget.open_files, nullptr)};
  return true;
}

// The largest frame the Direct TCP transport's 24-bit length can carry
// (MS-SMB2 2.1), and what the rest of a compound chain may still add after
// a READ's data.
constexpr size_t kMaxFrameLength = 0xFFFFFF;
constexpr size_t kChainTailRoom = 64 * 1024;

// The transport bounds what a connection has queued between frames ("max
// send queue size"), but one frame may be a compound of many READs, each
// granted by the credits the client holds (8192 x 64 KiB: 512 MiB). The
// data copied for one output buffer stays within the bound plus one
// largest READ, and one frame's responses within the 24-bit frame length
// (MS-SMB2 2.1); beyond, the READ fails (MS-SMB2 names no status for a
// server out of memory). Uncompounded READs never reach it: the transport
// stops reading requests before its queue passes the bound.
bool fits_reply_memory(const Request& req, ByteWriter& w, uint32_t want) {
  size_t limit = size_t(req.server.config.global.max_send_queue_bytes) + req.server.max_read;
  size_t frame_bytes = w.buffer().size() - std::min(req.reply_start, w.buffer().size());
  return w.buffer().size() + want <= limit && frame_bytes + want + kChainTailRoom <= kMaxFrameLength;
}

}  // namespace

NtStatus handle_read(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  r.u8();  // Padding
  r.u8();  // Flags
  uint32_t length = r.u32();
  uint64_t offset = r.u64();
  r.skip(16);  // FileId: Request::open
  uint32_t minimum = r.u32();
  if (!r.ok()) return NtStatus::InvalidParameter;
  state::Open* open = req.open;
  if (length > negotiated_sizes(req.conn, req.server).max_read) return NtStatus::InvalidParameter;
  if (open->is_directory) return NtStatus::InvalidDeviceRequest;
  if (!(open->granted_access & (FILE_READ_DATA | FILE_EXECUTE))) return NtStatus::AccessDenied;
  if (find_pipe(req.conn, *open)) return read_pipe(req, *open, length, w);  // Offset means nothing on a pipe
  if (offset > uint64_t(INT64_MAX) - length) return NtStatus::InvalidParameter;
  if (open->node) {
    NtStatus st = req.server.locks.check_io(open->node->device, open->node->inode, open, offset, length, false);
    if (st != NtStatus::Success) return st;
  }
  if (open->stream) return read_stream(req, *open, offset, length, minimum, w);

  // For a large read, the regular file's size bounds the reply: it is the
  // DataLength of a sendfile reply, and a long Length on a short file does
  // not grow the buffer by Length. (Small reads skip the fstat.)
  std::optional<uint32_t> available;
  if (length >= req.server.sendfile_min_read) available = bytes_available(open->fd.get(), offset, length);
  uint32_t want = available.value_or(length);
  if (want == 0 && length > 0) return NtStatus::EndOfFile;
  if (want < minimum) return NtStatus::EndOfFile;

  size_t data_length_at = write_response_head(w);
  uint32_t got = want;
  if (!available || !leave_in_file(req, *open, offset, want)) {
    if (!fits_reply_memory(req, w, want)) return NtStatus::InsufficientResources;
    int64_t n = available && req.may_read_to_memory ? read_into_segment(req, open->fd.get(), offset, want)
                                                     : read_into_reply(open->fd.get(), offset, want, w.buffer());
    if (n < 0) return nt_status_from_errno(int(-n));
    got = uint32_t(n);
    if (got == 0 && length > 0) return NtStatus::EndOfFile;
    if (got < minimum) {
      req.file_data.reset();
      return NtStatus::EndOfFile;
    }
    if (got == 0) w.u8(0);  // zero-length read still carries the one-byte Buffer
  }
  w.patch_u32(data_length_at, got);
  open->position = offset + got;
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
