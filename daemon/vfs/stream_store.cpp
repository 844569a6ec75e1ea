// Named streams in trusted.ringsmb.stream.* extended attributes (see
// stream_store.hpp for the layout and its limits).
#include "vfs/stream_store.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "common/unicode.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/stream_sidecar.hpp"
#include "vfs/xattr_io.hpp"

namespace ringsmb::vfs {
namespace {

constexpr char kMagic[4] = {'R', 'S', 'S', '1'};         // the data follows the name
constexpr char kSidecarMagic[4] = {'R', 'S', 'S', '2'};  // a sidecar id follows the name
constexpr size_t kHeaderFixed = 6;        // magic + u16 name length
constexpr size_t kMaxXattrNameBytes = 255;  // XATTR_NAME_MAX
constexpr size_t kMaxStreamNameUnits = 255;  // MS-FSCC 2.1.5.3: as a file name

using namespace xattr_io;

std::atomic<uint64_t> g_max_stream_bytes{kDefaultMaxStreamBytes};

NtStatus status_of(int err) {
  switch (err) {
    case ENODATA: return NtStatus::ObjectNameNotFound;
    case EEXIST: return NtStatus::ObjectNameCollision;
    // The value does not fit the filesystem's limit for one attribute.
    case E2BIG:
    case ENOSPC:
    case ERANGE: return NtStatus::DiskFull;
    default: return nt_status_from_errno(err);
  }
}

// A stream value split into its parts; false when it is not ours.
struct Value {
  std::string_view name;
  ByteSpan data;                     // inline data
  std::optional<SidecarId> sidecar;  // or where the data is
};

bool parse_value(ByteSpan v, Value& out) {
  if (v.size() < kHeaderFixed) return false;
  const bool in_sidecar = memcmp(v.data(), kSidecarMagic, sizeof kSidecarMagic) == 0;
  if (!in_sidecar && memcmp(v.data(), kMagic, sizeof kMagic) != 0) return false;
  const size_t name_len = load_le16(v.data() + 4);
  if (v.size() < kHeaderFixed + name_len) return false;
  out.name = std::string_view(reinterpret_cast<const char*>(v.data()) + kHeaderFixed, name_len);
  out.data = v.subspan(kHeaderFixed + name_len);
  out.sidecar.reset();
  if (in_sidecar) {
    if (out.data.size() != sizeof(SidecarId)) return false;
    SidecarId id;
    memcpy(id.data(), out.data.data(), id.size());
    out.sidecar = id;
    out.data = {};
  }
  return true;
}

Bytes make_value(std::string_view name, ByteSpan data, bool in_sidecar = false) {
  Bytes v(kHeaderFixed + name.size() + data.size());
  memcpy(v.data(), in_sidecar ? kSidecarMagic : kMagic, sizeof kMagic);
  store_le16(v.data() + 4, uint16_t(name.size()));
  memcpy(v.data() + kHeaderFixed, name.data(), name.size());
  if (!data.empty()) memcpy(v.data() + kHeaderFixed + name.size(), data.data(), data.size());
  return v;
}

// The whole value of `key` (header and data).
Result<Bytes> read_value(int fd, const char* key) {
  Bytes buf;
  if (int err = read_whole(fd, key, buf)) return Unexpected(err == EAGAIN ? NtStatus::InternalError : status_of(err));
  return buf;
}

Result<Bytes> read_parsed(int fd, const std::string& key, Value& parsed) {
  auto v = read_value(fd, key.c_str());
  if (!v) return v;
  if (!parse_value(*v, parsed)) return Unexpected(NtStatus::InternalError);  // not written by us
  return v;
}

NtStatus write_value(int fd, const std::string& key, std::string_view name, ByteSpan data, int flags) {
  if (kHeaderFixed + name.size() + data.size() > kMaxStreamValueBytes) return NtStatus::DiskFull;
  Bytes v = make_value(name, data);
  if (set_value(fd, key.c_str(), v.data(), v.size(), flags) != 0) return status_of(errno);
  return NtStatus::Success;
}

NtStatus write_sidecar_value(int fd, const std::string& key, std::string_view name, const SidecarId& id, int flags) {
  Bytes v = make_value(name, ByteSpan(id.data(), id.size()), true);
  if (set_value(fd, key.c_str(), v.data(), v.size(), flags) != 0) return status_of(errno);
  return NtStatus::Success;
}

// The owner of the file open as `fd`, whom its streams' sidecars belong to.
SidecarOwner owner_of(int fd) {
  struct stat st {};
  fstat(fd, &st);
  return {st.st_uid, st.st_gid};
}

// Moves a stream that no longer fits one value into a new sidecar holding
// `data` extended or cut to `size`, and points the value at it. Without
// sidecars: DiskFull, and nothing changes.
NtStatus spill(int fd, const std::string& key, std::string_view name, ByteSpan data, uint64_t size) {
  auto id = sidecar_create(data.first(size_t(std::min<uint64_t>(data.size(), size))), size, owner_of(fd));
  if (!id) return id.error();
  NtStatus s = write_sidecar_value(fd, key, name, *id, XATTR_REPLACE);
  if (s != NtStatus::Success) sidecar_remove(*id);
  return s;
}

// Read-modify-write of a stream must not interleave with another worker's:
// one lock per (file, stream key), striped.
std::mutex& lock_for(int fd, const std::string& key) {
  static std::array<std::mutex, 64> stripes;
  struct stat st {};
  fstat(fd, &st);
  size_t h = std::hash<std::string>()(key) ^ (uint64_t(st.st_ino) * 0x9E3779B97F4A7C15ull) ^ uint64_t(st.st_dev);
  return stripes[h % stripes.size()];
}

// Streams up to this many bytes are kept in the value, as long as the
// filesystem takes it; larger ones go to a sidecar at once instead of
// being built in memory first.
constexpr uint64_t kMaxInlineBytes = kMaxStreamValueBytes - 1024;

// Writes `data` at `offset` (or, when `resize`, sets the size to
// `offset`) on an inline stream: in the value while it fits, else spilled.
NtStatus change_inline(int fd, const std::string& key, const Value& parsed, uint64_t offset, ByteSpan data,
                       bool resize) {
  const uint64_t end = resize ? offset : offset + data.size();
  const uint64_t size = resize ? end : std::max<uint64_t>(parsed.data.size(), end);
  if (size > kMaxInlineBytes) {
    if (!stream_sidecars_enabled()) return NtStatus::DiskFull;
    auto id = sidecar_create(parsed.data.first(size_t(std::min<uint64_t>(parsed.data.size(), size))), size,
                             owner_of(fd));
    if (!id) return id.error();
    NtStatus s = resize ? NtStatus::Success : sidecar_write(*id, offset, data);
    if (s == NtStatus::Success) s = write_sidecar_value(fd, key, parsed.name, *id, XATTR_REPLACE);
    if (s != NtStatus::Success) sidecar_remove(*id);
    return s;
  }
  Bytes d(parsed.data.begin(), parsed.data.end());
  d.resize(size_t(size));
  if (!resize && !data.empty()) memcpy(d.data() + offset, data.data(), data.size());
  NtStatus s = write_value(fd, key, parsed.name, d, XATTR_REPLACE);
  if (s == NtStatus::DiskFull && stream_sidecars_enabled()) return spill(fd, key, parsed.name, d, size);
  return s;
}

NtStatus change(int fd, const std::string& key, uint64_t offset, ByteSpan data, bool resize) {
  std::lock_guard lock(lock_for(fd, key));
  Value parsed;
  auto v = read_parsed(fd, key, parsed);
  if (!v) return v.error();
  if (parsed.sidecar)
    return resize ? sidecar_truncate(*parsed.sidecar, offset) : sidecar_write(*parsed.sidecar, offset, data);
  return change_inline(fd, key, parsed, offset, data, resize);
}

// Removes the sidecar a value points at, if any.
void drop_sidecar_of(ByteSpan value) {
  Value parsed;
  if (parse_value(value, parsed) && parsed.sidecar) sidecar_remove(*parsed.sidecar);
}

bool has_stream_prefix(std::string_view attr) { return attr.starts_with(kStreamXattrPrefix); }

// Calls FN(key) for each stream xattr in NAMES (the NUL-separated list
// listxattr gave) until it returns false.
template <typename Fn>
void for_each_stream_key(const std::string& names, Fn fn) {
  for_each_name(names, [&](std::string_view key) { return !has_stream_prefix(key) || fn(std::string(key)); });
}

}  // namespace

void set_max_stream_bytes(uint64_t bytes) {
  g_max_stream_bytes.store(std::min<uint64_t>(bytes, INT64_MAX), std::memory_order_relaxed);
}
uint64_t max_stream_bytes() { return g_max_stream_bytes.load(std::memory_order_relaxed); }

Result<std::string> stream_xattr_name(std::string_view name) {
  if (name.empty() || !unicode::is_valid_utf8(name)) return Unexpected(NtStatus::ObjectNameInvalid);
  for (unsigned char c : name)
    if (c == 0 || c == '/' || c == '\\' || c == ':') return Unexpected(NtStatus::ObjectNameInvalid);
  if (unicode::utf16_length(name) > kMaxStreamNameUnits) return Unexpected(NtStatus::ObjectNameInvalid);
  std::string key(kStreamXattrPrefix);
  key += fold_case(name);
  if (key.size() > kMaxXattrNameBytes) return Unexpected(NtStatus::NameTooLong);
  return key;
}

Result<uint64_t> stream_size(int fd, const std::string& key) {
  Value parsed;
  auto v = read_parsed(fd, key, parsed);
  if (!v) return Unexpected(v.error());
  if (parsed.sidecar) return sidecar_size(*parsed.sidecar);
  return uint64_t(parsed.data.size());
}

Result<StreamEntry> stream_entry(int fd, const std::string& key) {
  Value parsed;
  auto v = read_parsed(fd, key, parsed);
  if (!v) return Unexpected(v.error());
  StreamEntry e{std::string(parsed.name), parsed.data.size()};
  if (parsed.sidecar) {
    auto size = sidecar_size(*parsed.sidecar);
    if (!size) return Unexpected(size.error());
    e.size = *size;
  }
  return e;
}

Result<Bytes> read_stream(int fd, const std::string& key) {
  auto size = stream_size(fd, key);
  if (!size) return Unexpected(size.error());
  if (*size > kMaxWholeStreamBytes) return Unexpected(NtStatus::InsufficientResources);
  return read_stream_range(fd, key, 0, size_t(*size));
}

Result<Bytes> read_stream_range(int fd, const std::string& key, uint64_t offset, size_t length) {
  Value parsed;
  auto v = read_parsed(fd, key, parsed);
  if (!v) return Unexpected(v.error());
  if (parsed.sidecar) return sidecar_read(*parsed.sidecar, offset, length);
  if (offset >= parsed.data.size()) return Bytes();
  ByteSpan part = parsed.data.subspan(size_t(offset), std::min<size_t>(length, parsed.data.size() - size_t(offset)));
  return Bytes(part.begin(), part.end());
}

NtStatus create_stream(int fd, const std::string& key, std::string_view name) {
  return write_value(fd, key, name, {}, XATTR_CREATE);
}

NtStatus write_stream_at(int fd, const std::string& key, uint64_t offset, ByteSpan data, uint64_t limit_bytes) {
  if (offset > limit_bytes || data.size() > limit_bytes - offset) return NtStatus::DiskFull;
  return change(fd, key, offset, data, false);
}

NtStatus set_stream_size(int fd, const std::string& key, uint64_t size, uint64_t limit_bytes) {
  if (size > limit_bytes) return NtStatus::DiskFull;
  return change(fd, key, size, {}, true);
}

NtStatus remove_stream(int fd, const std::string& key) {
  std::lock_guard lock(lock_for(fd, key));  // not while a write of it changes its sidecar
  auto v = read_value(fd, key.c_str());
  if (!v) return v.error();
  if (remove_value(fd, key.c_str()) != 0) return status_of(errno);
  drop_sidecar_of(*v);
  return NtStatus::Success;
}

NtStatus rename_stream(int fd, const std::string& from, const std::string& to_key, std::string_view to_name,
                       bool replace) {
  std::lock_guard lock(lock_for(fd, from));
  Value parsed;
  auto v = read_parsed(fd, from, parsed);
  if (!v) return v.error();
  auto rewrite = [&](const std::string& key, int flags) {
    return parsed.sidecar ? write_sidecar_value(fd, key, to_name, *parsed.sidecar, flags)
                          : write_value(fd, key, to_name, parsed.data, flags);
  };
  if (from == to_key) return rewrite(from, XATTR_REPLACE);  // a change of case
  auto target = stream_size(fd, to_key);
  if (target) {
    if (!replace) return NtStatus::ObjectNameCollision;
    if (*target != 0) return NtStatus::InvalidParameter;
  } else if (target.error() != NtStatus::ObjectNameNotFound) {
    return target.error();
  }
  std::optional<Bytes> old_target;
  if (target) old_target = read_value(fd, to_key.c_str()).value_or(Bytes());
  if (NtStatus s = rewrite(to_key, target ? XATTR_REPLACE : XATTR_CREATE); s != NtStatus::Success) return s;
  if (old_target) drop_sidecar_of(*old_target);  // the empty target's sidecar, if it had one
  if (remove_value(fd, from.c_str()) != 0) return status_of(errno);
  return NtStatus::Success;
}

Result<std::vector<StreamEntry>> list_streams(int fd) {
  std::vector<StreamEntry> out;
  std::string names;
  if (int err = list_all(fd, names)) return Unexpected(status_of(err));  // no xattrs here: no streams
  for_each_stream_key(names, [&](const std::string& key) {
    Value parsed;  // views into v
    auto v = read_parsed(fd, key, parsed);
    if (!v) return true;  // removed meanwhile, or not ours
    uint64_t size = parsed.data.size();
    if (parsed.sidecar) size = sidecar_size(*parsed.sidecar).value_or(0);
    out.push_back({std::string(parsed.name), size});
    return true;
  });
  return out;
}

NtStatus remove_all_streams(int fd) {
  std::string names;
  if (int err = list_all(fd, names)) return status_of(err);
  NtStatus status = NtStatus::Success;
  for_each_stream_key(names, [&](const std::string& key) {
    std::lock_guard lock(lock_for(fd, key));
    auto v = read_value(fd, key.c_str());
    if (remove_value(fd, key.c_str()) != 0 && errno != ENODATA) {
      status = status_of(errno);
      return false;
    }
    if (v) drop_sidecar_of(*v);
    return true;
  });
  return status;
}

void forget_deleted_streams(int fd) {
  if (!stream_sidecars_in_use()) return;
  std::string names;
  if (list_all(fd, names) != 0) return;
  for_each_stream_key(names, [&](const std::string& key) {
    if (auto v = read_value(fd, key.c_str())) drop_sidecar_of(*v);
    return true;
  });
}

bool streams_supported(int dir_fd) {
  // XATTR_REPLACE of an attribute that is not there changes nothing: the
  // kernel first checks the privilege (EPERM without CAP_SYS_ADMIN), the
  // filesystem then its support (EOPNOTSUPP) and finds nothing (ENODATA).
  std::string probe(kStreamXattrPrefix);
  probe += "probe";
  int r = set_value(dir_fd, probe.c_str(), "", 0, XATTR_REPLACE);
  return r == 0 || errno == ENODATA;
}

void encode_stream_information(bool is_directory, uint64_t unnamed_size, uint64_t unnamed_allocation,
                               const std::vector<StreamEntry>& streams, Bytes& out) {
  ByteWriter w(out);
  size_t previous = SIZE_MAX;
  auto entry = [&](std::string_view name, uint64_t size, uint64_t allocation) {
    if (previous != SIZE_MAX) {
      w.align(8, 0);  // entries start 8-byte aligned (MS-FSCC 2.4.43)
      w.patch_u32(previous, uint32_t(w.size() - previous));
    }
    const Bytes utf16 = utf8_to_utf16le(name);
    previous = w.size();
    w.u32(0);  // NextEntryOffset, patched by the next entry
    w.u32(uint32_t(utf16.size()));
    w.u64(size);
    w.u64(allocation);
    w.bytes(utf16);
  };
  if (!is_directory) entry("::$DATA", unnamed_size, unnamed_allocation);
  for (const auto& s : streams) entry(":" + s.name + ":$DATA", s.size, stream_allocation(s.size));
}

}  // namespace ringsmb::vfs
