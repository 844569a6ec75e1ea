// 8.3 short names (MS-FSCC 2.1.5.2.1), generated for every name that is
// not one, so that QUERY_DIRECTORY's ShortName and
// FileAlternateNameInformation agree and old clients can name any file.
//
// Nothing is stored: the short name is a function of the long name, the
// same on every listing and after a restart. Its form is
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
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

// The entry of directory `dirfd` (an O_PATH fd works) whose short name is
// `leaf` (any case); nullopt when there is none. Reads the directory.
std::optional<std::string> find_by_short_name(int dirfd, std::string_view leaf);

}  // namespace ringsmb::vfs
