#include "smb2/fruit/copyfile.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "smb2/engine/conn_state.hpp"
#include "smb2/fruit/fruit_share.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2::fruit {
namespace {

// copy_file_range, or read/write where the kernel refuses (other
// filesystems, old kernels).
NtStatus copy_data(int src, int dst, uint64_t size) {
  uint64_t done = 0;
  while (done < size) {
    loff_t in = loff_t(done), out = loff_t(done);
    ssize_t n = copy_file_range(src, &in, dst, &out, size - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      done += uint64_t(n);
      continue;
    }
    if (n == 0) return NtStatus::InvalidViewSize;  // the source shrank
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return nt_status_from_errno(errno);
    Bytes buf(64 * 1024);
    while (done < size) {
      ssize_t r = pread(src, buf.data(), std::min<uint64_t>(buf.size(), size - done), off_t(done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return r < 0 ? nt_status_from_errno(errno) : NtStatus::InvalidViewSize;
      for (ssize_t put = 0; put < r;) {
        ssize_t w = pwrite(dst, buf.data() + put, size_t(r - put), off_t(done + uint64_t(put)));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return nt_status_from_errno(errno);
        put += w;
      }
      done += uint64_t(r);
    }
  }
  return NtStatus::Success;
}

NtStatus copy_streams(int src, int dst) {
  auto streams = vfs::list_streams(src);
  if (!streams) return streams.error();
  for (const vfs::StreamEntry& s : *streams) {
    auto key = vfs::stream_xattr_name(s.name);
    if (!key) continue;
    auto data = vfs::read_stream(src, *key);
    if (!data) return data.error();
    vfs::remove_stream(dst, *key);  // a stream of the target's own is replaced
    if (NtStatus st = vfs::create_stream(dst, *key, s.name); st != NtStatus::Success) return st;
    if (!data->empty())
      if (NtStatus st = vfs::write_stream_at(dst, *key, 0, *data); st != NtStatus::Success) return st;
  }
  return NtStatus::Success;
}

}  // namespace

bool is_copyfile(const Request& req, uint32_t chunk_count, const state::Open& src, const state::Open& dst) {
  return chunk_count == 0 && (req.conn.aapl_flags & kAaplCopyfile) && !src.stream && !dst.stream;
}

NtStatus copyfile(const state::Open& src, state::Open& dst, Bytes& out) {
  struct stat st;
  if (fstat(src.fd.get(), &st) != 0) return nt_status_from_errno(errno);
  const uint64_t size = uint64_t(st.st_size);
  if (size > kMaxCopyfileBytes) return NtStatus::NotSupported;
  if (NtStatus s = copy_data(src.fd.get(), dst.fd.get(), size); s != NtStatus::Success) return s;
  dst.note_end(size);
  if (NtStatus s = copy_streams(src.fd.get(), dst.fd.get()); s != NtStatus::Success) return s;
  ByteWriter w(out);
  w.u32(0);  // ChunksWritten
  w.u32(0);  // ChunkBytesWritten
  w.u32(uint32_t(size));
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2::fruit
