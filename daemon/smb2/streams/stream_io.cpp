// Named streams over SMB2: CREATE's stream part, READ, WRITE, the SET_INFO
// classes that act on a stream, FileStreamInformation and the close.
#include "smb2/streams/stream_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>

#include "common/blocking_pool.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/async_write.hpp"
#include "smb2/fruit/afp_streams.hpp"
#include "smb2/fruit/fruit_share.hpp"
#include "smb2/fruit/netatalk.hpp"
#include "smb2/fruit/samba_streams.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "state/lock_table.hpp"
#include "vfs/fd_io.hpp"
#include "vfs/paths.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint32_t {
  FILE_SUPERSEDE = 0, FILE_OPEN = 1, FILE_CREATE = 2, FILE_OPEN_IF = 3, FILE_OVERWRITE = 4, FILE_OVERWRITE_IF = 5,
};
enum : uint32_t { FILE_SUPERSEDED = 0, FILE_OPENED = 1, FILE_CREATED = 2, FILE_OVERWRITTEN = 3 };
constexpr uint32_t FILE_DISPOSITION_DELETE = 0x1;
constexpr uint32_t kValidDispositionExFlags = 0x1F;

constexpr size_t kReadDataOffset = wire::kHeaderSize + 16;

// The stream name of a rename target: ":name", ":name:$DATA" or "::$DATA"
// (the unnamed stream: returned as ""). Anything else is no stream rename.
Result<std::string> rename_target_stream(ByteSpan utf16, bool& is_stream_name) {
  is_stream_name = utf16.size() >= 2 && utf16[0] == ':' && utf16[1] == 0;
  if (!is_stream_name) return std::string();
  std::string utf8;
  if (!vfs::utf16le_to_utf8(utf16, utf8)) return Unexpected(NtStatus::ObjectNameInvalid);
  // Reuse the CREATE parser on "x:...": a valid stream part parses.
  auto parsed = vfs::parse_smb_path(vfs::utf8_to_utf16le("x" + utf8));
  if (!parsed) return Unexpected(NtStatus::InvalidParameter);  // MS-FSA 2.1.5.15.11.1
  if (parsed->stream.empty() && !parsed->data_stream_type) return Unexpected(NtStatus::InvalidParameter);
  return parsed->stream;
}

// The copy of a stream onto the file's unnamed data stream, in 1 MiB
// pieces to its end (what a writer on another connection added meanwhile
// too), then the stream goes.
NtStatus move_stream_to_data(int fd, const std::string& key) {
  constexpr size_t kChunk = 1 << 20;
  for (uint64_t at = 0;;) {
    auto data = vfs::read_stream_range(fd, key, at, kChunk);
    if (!data) return data.error();
    if (NtStatus s = vfs::pwrite_all(fd, at, *data); s != NtStatus::Success) return s;
    at += data->size();
    if (data->size() < kChunk) break;
  }
  return vfs::remove_stream(fd, key);
}

// Streams up to this size move onto the unnamed stream on the worker, in
// a few milliseconds; larger ones (up to "max stream size") on the
// blocking pool, so that no request holds the worker's other connections.
constexpr uint64_t kMoveOnWorkerBytes = 1 << 20;
constexpr int64_t kMoveInterimDelayMs = 5;
constexpr uint8_t kSetInfoResponse[2] = {2, 0};  // StructureSize 2 (MS-SMB2 2.2.40)

// The SET_INFO's answer once the pool's move is done (on the worker).
void finish_move(ConnState& conn, uint64_t async_id, NtStatus status) {
  --conn.writes_in_flight;
  complete(conn, async_id, status, kSetInfoResponse);
}

// The move on the connection's write lane, as a large WRITE or a shrink of
// a large file: answered when it is done; until then the connection's
// later requests wait (smb2/engine/async_write.hpp), so they see the result.
NtStatus move_stream_on_pool(Request& req, const state::Open& open) {
  if (req.hdr.next_command != 0 || req.compound.in_chain || !has_room_to_wait(req))
    return NtStatus::InsufficientResources;  // not in a compound, and within the async engine's bounds
  // The pool's threads are root's; the user's rights were checked on the worker.
  return run_on_write_lane(
      req, open, kMoveInterimDelayMs, [key = open.stream->key](int fd) { return move_stream_to_data(fd, key); },
      finish_move);
}

// Renames a named stream onto the file's unnamed data stream, which must
// be empty (MS-FSA 2.1.5.15.11.1, NewDefaultStream): its data is copied
// into the file through the open's descriptor (ACCESS_DENIED when there is
// data and that is not open for writing), then the stream is removed.
NtStatus rename_to_unnamed(Request& req, state::Open& open, bool replace) {
  if (open.stream->base_is_directory) return NtStatus::InvalidParameter;
  struct stat st;
  if (fstat(open.fd.get(), &st) != 0) return nt_status_from_errno(errno);
  if (st.st_size != 0) return replace ? NtStatus::InvalidParameter : NtStatus::ObjectNameCollision;
  auto size = vfs::stream_size(open.fd.get(), open.stream->key);
  if (!size) return size.error();
  const int flags = fcntl(open.fd.get(), F_GETFL);
  if (*size && (flags < 0 || (flags & O_PATH) || (flags & O_ACCMODE) == O_RDONLY)) return NtStatus::AccessDenied;
  if (*size > kMoveOnWorkerBytes && req.server.blocking) return move_stream_on_pool(req, open);
  return move_stream_to_data(open.fd.get(), open.stream->key);
}

// The file of a stream open may be written by this thread's identity?
NtStatus check_open_stream_writable(Request& req, const state::Open& open) {
  auto st = vfs::stat_fd(open.fd.get());
  if (!st) return st.error();
  return check_stream_writable(req, open.fd.get(), *st);
}

NtStatus rename_stream_to(Request& req, state::Open& open, ByteSpan buf, bool ex) {
  auto change = vfs::read_name_change(buf, ex);
  if (!change) return change.error();
  const bool replace = change->replace;
  ByteSpan name = change->name;
  bool is_stream_name = false;
  auto target = rename_target_stream(name, is_stream_name);
  if (!target) return target.error();
  // A stream moves only within its file; "file:stream" as a target is what
  // Windows refuses this way (smb2.streams.rename2).
  if (!is_stream_name) return NtStatus::SharingViolation;
  // DELETE (checked by the caller) and write access to the file: a rename
  // replaces a stream's name, which is part of the file's data.
  if (NtStatus s = check_open_stream_writable(req, open); s != NtStatus::Success) return s;
  if (target->empty()) return rename_to_unnamed(req, open, replace);
  auto key = vfs::stream_xattr_name(*target);
  if (!key) return key.error() == NtStatus::NameTooLong ? key.error() : NtStatus::InvalidParameter;
  NtStatus s = vfs::rename_stream(open.fd.get(), open.stream->key, *key, *target, replace);
  if (s != NtStatus::Success) return s;
  open.stream->key = std::move(*key);
  open.stream->name = std::move(*target);
  return NtStatus::Success;
}

// The most bytes the open's stream may hold.
uint64_t stream_limit(const state::Open& open) {
  return open.stream->afp == fruit::kAfpResource ? fruit::max_resource_fork_bytes() : vfs::max_stream_bytes();
}

NtStatus set_stream_eof(state::Open& open, ByteSpan buf) {
  if (buf.size() < 8) return NtStatus::InfoLengthMismatch;
  uint64_t eof = load_le64(buf.data());
  if (eof > uint64_t(INT64_MAX)) return NtStatus::InvalidParameter;
  if (open.stream->afp == fruit::kAfpInfo) return fruit::set_afp_info_eof(eof);
  return vfs::set_stream_size(open.fd.get(), open.stream->key, eof, stream_limit(open));
}

NtStatus set_stream_delete_pending(Request& req, state::Open& open, bool pending) {
  if (pending)
    if (NtStatus s = check_open_stream_writable(req, open); s != NtStatus::Success) return s;
  req.server.files.set_delete_pending(open.node, pending);
  return NtStatus::Success;
}

}  // namespace

uint64_t stream_node_device(uint64_t device, const std::string& key) {
  uint64_t h = std::hash<std::string>()(key) ^ (device * 0x9E3779B97F4A7C15ull);
  return h | (1ull << 63);
}

NtStatus open_stream(Request& req, uint32_t disposition, const StreamTarget& target, StreamCreate& out) {
  const int fd = target.fd;
  const std::string& key = *target.key;
  auto existing = vfs::stream_entry(fd, key);
  if (existing && fruit::afp_absent(req, target.name, existing->size)) {
    if (disposition == FILE_OPEN || disposition == FILE_OVERWRITE) return NtStatus::ObjectNameNotFound;
    out.created = true;  // an empty resource fork is made anew
    out.action = FILE_CREATED;
    return NtStatus::Success;
  }
  if (existing) {
    if (disposition == FILE_OPEN && fruit::empty_stream_hidden(req, existing->size)) return NtStatus::ObjectNameNotFound;
    if (disposition == FILE_CREATE) return NtStatus::ObjectNameCollision;
    out.size = existing->size;
    out.name = std::move(existing->name);
    out.truncate = disposition == FILE_OVERWRITE || disposition == FILE_OVERWRITE_IF ||
                   disposition == FILE_SUPERSEDE;
    if (out.truncate) {  // the data is replaced: write access to the file, as an overwrite of the file needs
      if (NtStatus s = check_tree_change(*req.tree, Change::Overwrite); s != NtStatus::Success) return s;
      if (NtStatus s = check_stream_writable(req, fd, *target.base); s != NtStatus::Success) return s;
    }
    out.action = disposition == FILE_SUPERSEDE ? FILE_SUPERSEDED : out.truncate ? FILE_OVERWRITTEN : FILE_OPENED;
    return NtStatus::Success;
  }
  if (existing.error() != NtStatus::ObjectNameNotFound) return existing.error();
  if (disposition == FILE_OPEN || disposition == FILE_OVERWRITE) return NtStatus::ObjectNameNotFound;
  if (NtStatus s = check_tree_change(*req.tree, Change::CreateName); s != NtStatus::Success) return s;
  // A new stream changes the file (NTFS: FILE_WRITE_DATA on it), whatever
  // the open asks for; a file this request made is the user's own.
  if (!target.file_created)
    if (NtStatus s = check_stream_writable(req, fd, *target.base); s != NtStatus::Success) return s;
  NtStatus s = vfs::create_stream(fd, key, target.name);
  if (s == NtStatus::ObjectNameCollision && disposition != FILE_CREATE) {  // lost a race: open it
    out.action = FILE_OPENED;
    return NtStatus::Success;
  }
  if (s != NtStatus::Success) return s;
  out.created = true;
  out.action = FILE_CREATED;
  return NtStatus::Success;
}

NtStatus read_stream(Request& req, state::Open& open, uint64_t offset, uint32_t length, uint32_t minimum,
                     ByteWriter& w) {
  (void)req;
  auto data = open.stream->afp == fruit::kAfpInfo
                  ? fruit::read_afp_info(open.fd.get(), offset, length)
                  : vfs::read_stream_range(open.fd.get(), open.stream->key, offset, length);
  if (!data) return data.error();
  uint32_t got = uint32_t(data->size());
  if ((got == 0 && length > 0) || got < minimum) return NtStatus::EndOfFile;
  w.u16(17);
  w.u8(uint8_t(kReadDataOffset));
  w.u8(0);
  w.u32(got);  // DataLength
  w.u32(0);    // DataRemaining
  w.u32(0);    // Reserved2
  if (got) w.bytes(*data);
  else w.u8(0);  // the one-byte Buffer
  open.position = offset + got;
  return NtStatus::Success;
}

NtStatus write_stream(Request& req, state::Open& open, uint64_t offset, ByteSpan data, bool append, ByteWriter& w) {
  if (append) {
    auto size = vfs::stream_size(open.fd.get(), open.stream->key);
    if (!size) return size.error();
    offset = *size;
  }
  if (open.node) {  // byte-range locks of this stream (its own node)
    NtStatus st = req.server.locks.check_io(open.node->device, open.node->inode, &open, offset, uint32_t(data.size()),
                                            true);
    if (st != NtStatus::Success) return st;
  }
  NtStatus s = open.stream->afp == fruit::kAfpInfo ? fruit::write_afp_info(open, offset, data)
                                                   : vfs::write_stream_at(open.fd.get(), open.stream->key, offset, data,
                                                                          stream_limit(open));
  if (s != NtStatus::Success) return s;
  open.position = offset + data.size();
  w.u16(17);
  w.u16(0);
  w.u32(uint32_t(data.size()));
  w.u32(0);
  w.u16(0);
  w.u16(0);
  return NtStatus::Success;
}

void apply_stream_size(const state::Open& open, vfs::FileStat& st) {
  auto size = vfs::stream_size(open.fd.get(), open.stream->key);
  st.end_of_file = size ? *size : 0;
  if (open.stream->afp == fruit::kAfpInfo) st.end_of_file = fruit::kAfpInfoBytes;  // always, for macOS
  st.allocation_size = vfs::stream_allocation(st.end_of_file);
  st.is_directory = false;
  if (st.attributes) st.attributes = stream_attributes(st.attributes);
}

uint32_t stream_attributes(uint32_t file_attributes) {
  uint32_t a = file_attributes & ~vfs::FILE_ATTRIBUTE_DIRECTORY;
  return a ? a : vfs::FILE_ATTRIBUTE_NORMAL;
}

NtStatus query_stream_information(Request& req, state::Open& open, const vfs::FileStat& st, Bytes& data) {
  bool is_directory = open.stream ? open.stream->base_is_directory : open.is_directory;
  uint64_t size = st.end_of_file, allocation = st.allocation_size;
  if (open.stream) {  // the unnamed stream's figures, not this stream's
    struct stat base;
    if (fstat(open.fd.get(), &base) != 0) return nt_status_from_errno(errno);
    size = uint64_t(base.st_size);
    allocation = uint64_t(base.st_blocks) * 512;
  }
  std::vector<vfs::StreamEntry> streams;
  if (req.tree->streams) {
    if (fruit::fruit_share(req)) fruit::import_samba_streams(open.fd.get());
    if (fruit::netatalk_metadata(req)) fruit::import_netatalk_metadata(open.fd.get());
    auto listed = vfs::list_streams(open.fd.get());
    if (!listed) return listed.error();
    streams = std::move(*listed);
    fruit::filter_stream_list(req, open.fd.get(), streams);
  }
  vfs::encode_stream_information(is_directory, size, allocation, streams, data);
  return NtStatus::Success;
}

std::optional<NtStatus> set_stream_info(Request& req, state::Open& open, vfs::FileInfoClass cls, ByteSpan buf) {
  using vfs::FileInfoClass;
  switch (cls) {
    case FileInfoClass::EndOfFile: return set_stream_eof(open, buf);
    case FileInfoClass::Allocation:  // a hint; a stream's storage is its value
      return buf.size() < 8 ? NtStatus::InfoLengthMismatch : NtStatus::Success;
    case FileInfoClass::Disposition:
      if (buf.size() < 1) return NtStatus::InfoLengthMismatch;
      return set_stream_delete_pending(req, open, buf[0] != 0);
    case FileInfoClass::DispositionEx: {
      if (buf.size() < 4) return NtStatus::InfoLengthMismatch;
      uint32_t flags = load_le32(buf.data());
      if (flags & ~kValidDispositionExFlags) return NtStatus::InvalidParameter;
      return set_stream_delete_pending(req, open, flags & FILE_DISPOSITION_DELETE);
    }
    case FileInfoClass::Rename: return rename_stream_to(req, open, buf, false);
    case FileInfoClass::RenameEx: return rename_stream_to(req, open, buf, true);
    default: return std::nullopt;
  }
}

bool close_stream(ServerContext& server, state::Open& open, int fd, bool delete_stream) {
  if (open.stream->afp != fruit::kAfpNone && (!delete_stream || open.stream->ignore_delete)) {
    auto size = vfs::stream_size(fd, open.stream->key);
    delete_stream = size && *size == 0;  // an empty AFP stream does not exist
  }
  if (delete_stream) {
    vfs::remove_stream(fd, open.stream->key);  // gone already is fine
    if (open.stream->netatalk_metadata) fruit::export_netatalk_metadata(fd, {});
  }
  auto base = std::move(open.stream->base);
  if (!base) return false;
  bool pending = server.files.is_delete_pending(base);
  return server.files.close(base, &open) && pending;
}

}  // namespace ringsmb::smb2
