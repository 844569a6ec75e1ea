// 8.3 short names (MS-FSCC 2.1.5.2.1), generated for every name that is
// not one, so that QUERY_DIRECTORY's ShortName and
// FileAlternateNameInformation agree and old clients can name any file.
//
// Nothing is stored on disk: the short name is a function of the long
// name, the same on every listing and after a restart. Its form is
//
//   up to 3 characters of the name + '~' + 4 hash characters [0-9A-Z]
//   [ '.' + up to 3 characters of the last extension ]
//
// e.g. "torture_search.txt" -> "TOR~xxxx.TXT", where xxxx is the FNV-1a
// hash of the case-folded long name in base 36. Characters that 8.3 names
// cannot hold are dropped. Two long names of one directory can share a
// short name (1 in 1.7 million per pair with the same first three
// characters and extension); an open by that short name then reaches the
// one whose long name sorts first.
//
// A CREATE whose name (or a directory on its path) is missing looks for
// an entry with that short name, only when the name has the generated form
// (looks_like_short_name): the common open of a present name costs nothing.
// When no entry has it, a CREATE of the leaf recalls the long name from
// ShortNameMemory (below) and makes that.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ringsmb::vfs {

// Whether `name` (UTF-8) is a valid 8.3 name, ignoring case: ASCII without
// space and the characters  " * + , / : ; < = > ? [ \ ] | , a base of 1-8
// characters, at most one '.', an extension of 1-3.
bool is_8dot3_name(std::string_view name);

// The short name of `name` (upper case); empty when `name` is an 8.3 name
// itself, or "." / "..".
std::string short_name_of(std::string_view name);

// Whether `leaf` has the form short_name_of produces (any case).
bool looks_like_short_name(std::string_view leaf);

// What FileAlternateNameInformation reports for `name`: its generated
// short name, or the name itself when it is an 8.3 name (Samba answers
// the same; an open by the answer reaches the file either way). Empty for
// "", "." and "..".
std::string alternate_name(std::string_view name);

// The entry of directory `dirfd` (an O_PATH fd works) whose short name is
// `leaf` (any case); nullopt when there is none. Reads the directory.
std::optional<std::string> find_by_short_name(int dirfd, std::string_view leaf);

// The long names behind the short names clients were told (by
// FileAlternateNameInformation), so that a CREATE by a short name whose
// file is gone makes the file under its long name again, as Samba's
// mangling cache does: smb2.mangle deletes a file by its short name,
// creates it again by that name and deletes it by the long one. (Windows
// keeps short names on disk and would call the new file by the short name.)
// Only names of the generated form are kept; the oldest are forgotten
// first. A directory is named by its share and its path. Thread-safe.
class ShortNameMemory {
 public:
  static constexpr size_t kDefaultCapacity = 1024;
  explicit ShortNameMemory(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // Notes the short name of `long_name` in directory `parent` of `share`.
  void remember(std::string_view share, std::string_view parent, std::string_view long_name);
  // The long name noted for `short_name` (any case) in that directory.
  std::optional<std::string> recall(std::string_view share, std::string_view parent,
                                    std::string_view short_name) const;
  size_t size() const;

 private:
  static std::string key(std::string_view share, std::string_view parent, std::string_view short_name);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> long_names_;  // key -> long name
  std::deque<std::string> order_;                            // keys, oldest first
};

}  // namespace ringsmb::vfs
