// SMB path parsing and openat2-based confinement to the share root.
#include "vfs/paths.hpp"

#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vfs/codepoints.hpp"

namespace ringsmb::vfs {
namespace {

// MS-FSCC 2.1.5.2: a file name is 1..255 characters (UTF-16 code units).
constexpr size_t kMaxComponentUnits = 255;
// Linux NAME_MAX counts bytes of the on-disk (UTF-8) name.
constexpr size_t kMaxComponentBytes = 255;
// openat2 reports EAGAIN when a concurrent rename makes a '..' walk racy;
// retrying a few times is what the man page recommends.
constexpr int kOpenat2Retries = 16;

constexpr std::string_view kDataStreamType = "$DATA";

bool is_forbidden_char(unsigned char c) {
  if (c < 0x20) return true;  // NUL and control characters
  switch (c) {
    case '"': case '*': case '/': case ':': case '<': case '>': case '?': case '\\': case '|':
      return true;
    default:
      return false;
  }
}

bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ringsmb::unicode::ascii_lower(a[i]) != ringsmb::unicode::ascii_lower(b[i])) return false;
  }
  return true;
}

// One path component without any stream suffix.
NtStatus check_component(std::string_view comp) {
  if (comp.empty() || comp == "." || comp == "..") return NtStatus::ObjectNameInvalid;
  for (unsigned char c : comp) {
    if (is_forbidden_char(c)) return NtStatus::ObjectNameInvalid;
  }
  // UTF-8 never takes fewer bytes than UTF-16 units: a short name needs no count.
  if (comp.size() > kMaxComponentUnits && unicode::utf16_length(comp) > kMaxComponentUnits) {
    return NtStatus::ObjectNameInvalid;
  }
  if (comp.size() > kMaxComponentBytes) return NtStatus::NameTooLong;
  return NtStatus::Success;
}

// `spec` is what follows the first ':' of the last component:
// "stream", "stream:$DATA" or ":$DATA".
Result<std::string> parse_stream_spec(std::string_view spec) {
  std::string_view name = spec;
  const size_t colon = spec.find(':');
  if (colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    if (!iequals_ascii(spec.substr(colon + 1), kDataStreamType)) {
      return Unexpected(NtStatus::ObjectNameInvalid);
    }
  } else if (name.empty()) {
    return Unexpected(NtStatus::ObjectNameInvalid);  // "file:"
  }
  for (unsigned char c : name) {
    // Stream names may hold wildcards and controls, but never separators.
    if (c == 0 || c == '/' || c == '\\') return Unexpected(NtStatus::ObjectNameInvalid);
  }
  if (unicode::utf16_length(name) > kMaxComponentUnits) return Unexpected(NtStatus::ObjectNameInvalid);
  return std::string(name);
}

}  // namespace

Result<NameChange> read_name_change(ByteSpan buf, bool ex) {
  constexpr size_t kFixed = 20;  // ReplaceIfExists/Flags, Reserved, RootDirectory, FileNameLength
  constexpr uint32_t REPLACE_IF_EXISTS = 0x1;
  if (buf.size() < kFixed) return Unexpected(NtStatus::InfoLengthMismatch);
  ByteReader r(buf);
  NameChange out;
  out.replace = ex ? (r.u32() & REPLACE_IF_EXISTS) : r.u8() != 0;
  r.skip(ex ? 4 : 7);
  uint64_t root_dir = r.u64();
  uint32_t name_len = r.u32();
  out.name = r.bytes(name_len);
  if (!r.ok() || name_len == 0 || name_len % 2 || root_dir != 0) return Unexpected(NtStatus::InvalidParameter);
  return out;
}

// The path is built in place, at the front of the UTF-8 name it is read
// from (it is never longer than what was read): one string for both.
Result<SmbPath> parse_smb_path(ByteSpan utf16le_name) {
  SmbPath out;
  std::string& buf = out.path;
  if (!utf16le_to_utf8(utf16le_name, buf)) return Unexpected(NtStatus::ObjectNameInvalid);
  // '/' separates components as '\\' does (Samba's reading, which
  // smb2.timestamps.test_close_not_attrib relies on): the components are
  // then checked alike, so "a/../../x" is refused as "a\\..\\..\\x" is.
  std::replace(buf.begin(), buf.end(), '/', '\\');
  std::string_view rest = buf;
  if (rest.starts_with('\\')) rest.remove_prefix(1);
  if (rest.empty()) {
    buf.clear();
    return out;
  }
  if (rest.ends_with('\\')) {
    rest.remove_suffix(1);
    out.trailing_separator = true;
    if (rest.empty()) return Unexpected(NtStatus::ObjectNameInvalid);
  }
  size_t end = 0;  // the path so far is buf[0, end)
  while (true) {
    const size_t sep = rest.find('\\');
    std::string_view comp = rest.substr(0, sep);
    const bool last = sep == std::string_view::npos;
    if (last) {
      const size_t colon = comp.find(':');
      if (colon != std::string_view::npos) {
        auto stream = parse_stream_spec(comp.substr(colon + 1));
        if (!stream || out.trailing_separator) return Unexpected(NtStatus::ObjectNameInvalid);
        out.stream = std::move(*stream);
        out.data_stream_type = comp.find(':', colon + 1) != std::string_view::npos;
        comp = comp.substr(0, colon);
      }
    }
    if (comp == ".." && out.stream.empty() && !out.data_stream_type) {
      // A '..' that stays inside the share names the directory above,
      // as Samba resolves it (a Windows redirector resolves it before
      // sending; smb2.notify.tree opens "dir\\sub\\.."). One above the
      // share root is refused: nothing is ever opened outside the share.
      // Windows and Samba call that a bad path syntax (smb2.mkdir makes
      // "..\\..\\.."), not a bad name.
      if (end == 0) return Unexpected(NtStatus::ObjectPathSyntaxBad);
      --end;  // the '/' after the last component
      size_t cut = std::string_view(buf.data(), end).rfind('/');
      end = cut == std::string_view::npos ? 0 : cut + 1;
      if (last) {
        if (end) --end;
        break;
      }
      rest.remove_prefix(sep + 1);
      continue;
    }
    if (NtStatus st = check_component(comp); st != NtStatus::Success) return Unexpected(st);
    std::memmove(buf.data() + end, comp.data(), comp.size());  // to the left of what is still to read
    end += comp.size();
    if (last) break;
    buf[end++] = '/';
    rest.remove_prefix(sep + 1);
  }
  buf.resize(end);
  return out;
}

int open_beneath(int dirfd, const char* path, int flags, mode_t mode) {
  struct open_how how = {};
  // Never leak share fds into helper processes.
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  // openat2 rejects a mode unless the call can create something.
  if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) how.mode = mode;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  if (path == nullptr || path[0] == '\0') path = ".";
  for (int attempt = 0;; ++attempt) {
    const long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    const int err = errno;
    if (err == EINTR || (err == EAGAIN && attempt < kOpenat2Retries)) continue;
    return -err;
  }
}

NtStatus open_beneath_status(int neg_errno) {
  const int err = -neg_errno;
  if (err == EXDEV || err == ELOOP) return NtStatus::AccessDenied;
  return nt_status_from_errno(err);
}

void split_parent(std::string_view path, std::string_view& parent, std::string_view& leaf) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) {
    parent = {};
    leaf = path;
  } else {
    parent = path.substr(0, slash);
    leaf = path.substr(slash + 1);
  }
}

}  // namespace ringsmb::vfs
