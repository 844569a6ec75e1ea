// Generated 8.3 short names (see short_names.hpp).
#include "vfs/short_names.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>

#include "vfs/name_index.hpp"

namespace ringsmb::vfs {
namespace {

constexpr size_t kMaxBase = 8, kMaxExtension = 3;
constexpr size_t kPrefixChars = 3, kHashChars = 4;
constexpr char kDigits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// A character an 8.3 name may hold (other than the one '.').
bool legal_8dot3_char(unsigned char c) {
  if (c <= 0x20 || c >= 0x7F) return false;
  switch (c) {
    case '"': case '*': case '+': case ',': case '/': case ':': case ';': case '<':
    case '=': case '>': case '?': case '[': case '\\': case ']': case '|': case '.':
      return false;
    default: return true;
  }
}

char upper(char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; }

// The first `n` characters of `part` an 8.3 name can hold, upper case.
std::string legal_prefix(std::string_view part, size_t n) {
  std::string out;
  for (unsigned char c : part) {
    if (out.size() == n) break;
    if (legal_8dot3_char(c)) out += upper(char(c));
  }
  return out;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool is_hash_char(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

}  // namespace

bool is_8dot3_name(std::string_view name) {
  const size_t dot = name.find('.');
  std::string_view base = name.substr(0, dot);
  std::string_view ext = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  if (base.empty() || base.size() > kMaxBase) return false;
  if (dot != std::string_view::npos && (ext.empty() || ext.size() > kMaxExtension)) return false;
  for (unsigned char c : base)
    if (!legal_8dot3_char(c)) return false;
  for (unsigned char c : ext)
    if (!legal_8dot3_char(c)) return false;
  return true;
}

std::string short_name_of(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || is_8dot3_name(name)) return {};
  const size_t dot = name.rfind('.');
  const bool has_ext = dot != std::string_view::npos && dot > 0;
  std::string out = legal_prefix(has_ext ? name.substr(0, dot) : name, kPrefixChars);
  if (out.empty()) out.assign(1, '_');  // not = "_": g++ 12 -Wrestrict false positive
  out += '~';
  uint64_t h = fnv1a(fold_case(name));
  char hash[kHashChars];
  for (size_t i = 0; i < kHashChars; ++i, h /= 36) hash[kHashChars - 1 - i] = kDigits[h % 36];
  out.append(hash, kHashChars);
  if (has_ext) {
    std::string ext = legal_prefix(name.substr(dot + 1), kMaxExtension);
    if (!ext.empty()) out += "." + ext;
  }
  return out;
}

bool looks_like_short_name(std::string_view leaf) {
  if (!is_8dot3_name(leaf)) return false;
  // The '~' is the one just before the hash: the prefix may hold '~'s of
  // its own ("~$report.docx" -> "~$R~xxxx.DOC").
  const size_t dot = leaf.find('.');
  const size_t base_end = dot == std::string_view::npos ? leaf.size() : dot;
  if (base_end < 2 + kHashChars) return false;
  const size_t tilde = base_end - 1 - kHashChars;
  if (leaf[tilde] != '~' || tilde > kPrefixChars) return false;
  for (size_t i = tilde + 1; i < base_end; ++i)
    if (!is_hash_char(leaf[i])) return false;
  return true;
}

std::string alternate_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return {};
  std::string short_name = short_name_of(name);
  return short_name.empty() ? std::string(name) : short_name;
}

std::optional<std::string> find_by_short_name(int dirfd, std::string_view leaf) {
  if (!looks_like_short_name(leaf)) return std::nullopt;
  std::string wanted;
  for (char c : leaf) wanted += upper(c);
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  DIR* d = fdopendir(fd);
  if (!d) {
    close(fd);
    return std::nullopt;
  }
  std::optional<std::string> found;
  while (struct dirent* de = readdir(d)) {
    std::string_view name(de->d_name);
    if (short_name_of(name) == wanted && (!found || name < *found)) found = std::string(name);
  }
  closedir(d);
  return found;
}

std::string ShortNameMemory::key(std::string_view share, std::string_view parent, std::string_view short_name) {
  // NUL can occur in none of the three (share names and paths are C strings).
  std::string k;
  k.reserve(share.size() + parent.size() + short_name.size() + 2);
  k.append(share).append(1, '\0').append(parent).append(1, '\0');
  for (char c : short_name) k += upper(c);
  return k;
}

void ShortNameMemory::remember(std::string_view share, std::string_view parent, std::string_view long_name) {
  const std::string short_name = short_name_of(long_name);
  if (short_name.empty() || capacity_ == 0) return;
  std::string k = key(share, parent, short_name);
  std::lock_guard lock(mu_);
  auto [it, added] = long_names_.try_emplace(k, long_name);
  if (!added) {
    it->second.assign(long_name);  // the newer long name of two that share a short name
    return;
  }
  order_.push_back(std::move(k));
  if (order_.size() > capacity_) {
    long_names_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<std::string> ShortNameMemory::recall(std::string_view share, std::string_view parent,
                                                   std::string_view short_name) const {
  if (!looks_like_short_name(short_name)) return std::nullopt;
  const std::string k = key(share, parent, short_name);
  std::lock_guard lock(mu_);
  auto it = long_names_.find(k);
  if (it == long_names_.end()) return std::nullopt;
  return it->second;
}

size_t ShortNameMemory::size() const {
  std::lock_guard lock(mu_);
  return long_names_.size();
}

}  // namespace ringsmb::vfs
