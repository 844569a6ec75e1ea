// QUERY_DIRECTORY: wildcard matching and the directory-entry encoders.
#pragma once

#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::vfs {

// MS-FSA 2.1.4.4 wildcard matching on UTF-8 names, case-insensitive unless
// `case_sensitive`: '*', '?', and the DOS wildcards '<' (DOS_STAR), '>'
// (DOS_QM), '"' (DOS_DOT).
bool wildcard_match(std::string_view pattern, std::string_view name, bool case_sensitive);

struct DirEntry {
  std::string name;  // UTF-8
  FileStat st;
  uint32_t file_index = 0;
  uint32_t ea_size = 0;  // EaSize (vfs/ea_store.hpp): 0 where EAs are not stored
};

// Appends one entry of class `cls` (Directory, FullDirectory, BothDirectory,
// IdBothDirectory, IdFullDirectory, Names) at `out`'s end, 8-byte aligned
// relative to `base`, leaving NextEntryOffset 0. Returns false (and leaves
// `out` unchanged) if the entry would make the output exceed `max_size`
// bytes counted from `base`. `entry_offset` receives where the entry starts
// so the caller can patch the previous entry's NextEntryOffset.
bool encode_dir_entry(FileInfoClass cls, const DirEntry& e, size_t base, size_t max_size, Bytes& out,
                      size_t& entry_offset);
bool is_dir_info_class(FileInfoClass cls);

}  // namespace ringsmb::vfs
