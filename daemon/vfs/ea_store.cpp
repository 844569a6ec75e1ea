// EAs in trusted.ringsmb.ea.* extended attributes (see ea_store.hpp).
#include "vfs/ea_store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vfs/xattr_io.hpp"

namespace ringsmb::vfs {
namespace {

using namespace xattr_io;

constexpr size_t kFullEaFixed = 8;  // NextEntryOffset, Flags, EaNameLength, EaValueLength
constexpr size_t kGetEaFixed = 5;   // NextEntryOffset, EaNameLength
constexpr size_t kValueHeader = 2;  // u8 Flags, u8 name length

// MS-FSCC 2.4.15: characters an EA name may not hold.
bool valid_ea_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxEaNameBytes) return false;
  for (unsigned char c : name) {
    if (c < 0x20) return false;
    if (std::string_view("\"*+,/:;<=>?[\\]|").find(char(c)) != std::string_view::npos) return false;
  }
  return true;
}

// Checks the entry at AT of a list whose entries have a FIXED-byte head
// with the name length at NAME_LEN_AT and a 16-bit value length at
// VALUE_LEN_AT (none: SIZE_MAX); the entry's size, or 0 when it is bad.
size_t entry_size(ByteSpan buf, size_t at, size_t fixed, size_t name_len_at, size_t value_len_at) {
  if (buf.size() - at < fixed) return 0;
  const size_t name_len = buf[at + name_len_at];
  const size_t value_len = value_len_at == SIZE_MAX ? 0 : load_le16(buf.data() + at + value_len_at);
  const size_t size = fixed + name_len + 1 + value_len;
  if (buf.size() - at < size || buf[at + fixed + name_len] != 0) return 0;
  return size;
}

// Walks a list of entries; ON_ENTRY(at, size) for each, which may fail.
template <typename OnEntry>
NtStatus walk_list(ByteSpan buf, size_t fixed, size_t name_len_at, size_t value_len_at, OnEntry on_entry) {
  if (buf.empty()) return NtStatus::EaListInconsistent;
  for (size_t at = 0;;) {
    const size_t size = entry_size(buf, at, fixed, name_len_at, value_len_at);
    if (size == 0) return NtStatus::EaListInconsistent;
    if (NtStatus s = on_entry(at, size); s != NtStatus::Success) return s;
    const uint32_t next = load_le32(buf.data() + at);
    if (next == 0) return NtStatus::Success;
    if (next % 4 != 0 || next < size || next >= buf.size() - at) return NtStatus::EaListInconsistent;
    at += next;
  }
}

std::string key_of(std::string_view name) { return std::string(kEaXattrPrefix) + fold_ea_name(name); }

NtStatus status_of(int err) {
  switch (err) {
    case E2BIG:
    case ENOSPC:
    case ERANGE: return NtStatus::EaTooLarge;  // past what the filesystem keeps for one file
    case ENOTSUP: return NtStatus::EasNotSupported;
    default: return nt_status_from_errno(err);
  }
}

bool parse_value(ByteSpan v, Ea& out) {
  if (v.size() < kValueHeader || v.size() < kValueHeader + v[1]) return false;
  out.flags = v[0];
  out.name.assign(reinterpret_cast<const char*>(v.data()) + kValueHeader, v[1]);
  out.value.assign(v.begin() + kValueHeader + v[1], v.end());
  return valid_ea_name(out.name) && out.value.size() <= 0xFFFF;
}

}  // namespace

std::string fold_ea_name(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = char(c - 32);
  return out;
}

NtStatus parse_full_ea_list(ByteSpan buf, std::vector<Ea>& out) {
  out.clear();
  return walk_list(buf, kFullEaFixed, 5, 6, [&](size_t at, size_t) {
    Ea ea;
    const size_t name_len = buf[at + 5];
    ea.flags = buf[at + 4] & FILE_NEED_EA;
    ea.name.assign(reinterpret_cast<const char*>(buf.data()) + at + kFullEaFixed, name_len);
    if (!valid_ea_name(ea.name)) return NtStatus::InvalidEaName;
    const size_t value_at = at + kFullEaFixed + name_len + 1;
    ea.value.assign(buf.begin() + value_at, buf.begin() + value_at + load_le16(buf.data() + at + 6));
    out.push_back(std::move(ea));
    return NtStatus::Success;
  });
}

NtStatus parse_get_ea_list(ByteSpan buf, std::vector<std::string>& out) {
  out.clear();
  return walk_list(buf, kGetEaFixed, 4, SIZE_MAX, [&](size_t at, size_t) {
    std::string name(reinterpret_cast<const char*>(buf.data()) + at + kGetEaFixed, buf[at + 4]);
    if (!valid_ea_name(name)) return NtStatus::InvalidEaName;
    out.push_back(std::move(name));
    return NtStatus::Success;
  });
}

size_t full_ea_entry_size(const Ea& ea) { return kFullEaFixed + ea.name.size() + 1 + ea.value.size(); }

void append_full_ea(Bytes& out, const Ea& ea, size_t* previous) {
  if (*previous != SIZE_MAX) {
    out.resize((out.size() + 3) & ~size_t(3), 0);
    store_le32(out.data() + *previous, uint32_t(out.size() - *previous));
  }
  *previous = out.size();
  const size_t at = out.size();
  out.resize(at + full_ea_entry_size(ea), 0);
  uint8_t* p = out.data() + at;
  p[4] = ea.flags;
  p[5] = uint8_t(ea.name.size());
  store_le16(p + 6, uint16_t(ea.value.size()));
  memcpy(p + kFullEaFixed, ea.name.data(), ea.name.size());
  if (!ea.value.empty()) memcpy(p + kFullEaFixed + ea.name.size() + 1, ea.value.data(), ea.value.size());
}

uint32_t full_ea_list_size(const std::vector<Ea>& eas) {
  size_t total = 0;
  for (size_t i = 0; i < eas.size(); ++i) {
    if (i) total = (total + 3) & ~size_t(3);
    total += full_ea_entry_size(eas[i]);
  }
  return uint32_t(total);
}

Result<std::vector<Ea>> read_eas(int fd) {
  std::vector<Ea> out;
  std::string names;
  if (int err = list_all(fd, names)) return Unexpected(status_of(err));  // no xattrs here: no EAs
  std::vector<std::string> keys;
  for_each_name(names, [&](std::string_view key) {
    if (key.starts_with(kEaXattrPrefix)) keys.emplace_back(key);
    return true;
  });
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) {
    Bytes v;
    Ea ea;
    if (read_whole(fd, key.c_str(), v) != 0 || !parse_value(v, ea) || key_of(ea.name) != key)
      continue;  // removed meanwhile, or not ours
    out.push_back(std::move(ea));
  }
  return out;
}

std::string xattr_names_at(int dirfd, std::string_view name) {
  const std::string path = proc_fd_path(dirfd) + "/" + std::string(name);
  std::string names(kXattrListMax, '\0');
  ssize_t n = llistxattr(path.c_str(), names.data(), names.size());
  names.resize(n > 0 ? size_t(n) : 0);
  return names;
}

uint32_t ea_list_size(int fd) {
  auto eas = read_eas(fd);
  return eas ? full_ea_list_size(*eas) : 0;
}

uint32_t ea_list_size_at(int dirfd, std::string_view name, std::string_view names) {
  std::string path;
  size_t total = 0;
  bool first = true;
  for_each_name(names, [&](std::string_view key) {
    if (!key.starts_with(kEaXattrPrefix)) return true;
    if (path.empty()) path = proc_fd_path(dirfd) + "/" + std::string(name);
    const ssize_t size = lgetxattr(path.c_str(), std::string(key).c_str(), nullptr, 0);
    const size_t name_len = key.size() - kEaXattrPrefix.size();  // folding keeps the length
    if (size < ssize_t(kValueHeader + name_len)) return true;
    if (!first) total = (total + 3) & ~size_t(3);
    first = false;
    total += kFullEaFixed + name_len + 1 + (size_t(size) - kValueHeader - name_len);
    return true;
  });
  return uint32_t(total);
}

NtStatus write_eas(int fd, const std::vector<Ea>& changes) {
  auto current = read_eas(fd);
  if (!current) return current.error();
  std::vector<Ea> after = std::move(*current);
  for (const Ea& change : changes) {
    const std::string folded = fold_ea_name(change.name);
    auto same = [&](const Ea& ea) { return fold_ea_name(ea.name) == folded; };
    after.erase(std::remove_if(after.begin(), after.end(), same), after.end());
    if (!change.value.empty()) after.push_back(change);
  }
  if (full_ea_list_size(after) > kMaxEaSetBytes) return NtStatus::EaTooLarge;
  for (const Ea& change : changes) {
    const std::string key = key_of(change.name);
    if (change.value.empty()) {
      if (remove_value(fd, key.c_str()) != 0 && errno != ENODATA) return status_of(errno);
      continue;
    }
    Bytes v(kValueHeader + change.name.size() + change.value.size());
    v[0] = change.flags;
    v[1] = uint8_t(change.name.size());
    memcpy(v.data() + kValueHeader, change.name.data(), change.name.size());
    memcpy(v.data() + kValueHeader + change.name.size(), change.value.data(), change.value.size());
    if (set_value(fd, key.c_str(), v.data(), v.size(), 0) != 0) return status_of(errno);
  }
  return NtStatus::Success;
}

}  // namespace ringsmb::vfs
