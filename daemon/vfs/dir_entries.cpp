// QUERY_DIRECTORY entry encoders (MS-FSCC 2.4.8/10/14/17/18/28).
#include "vfs/dir_entries.hpp"

#include <algorithm>

#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"

namespace ringsmb::vfs {
namespace {

size_t fixed_size(FileInfoClass cls) {
  switch (cls) {
    case FileInfoClass::Directory: return fscc::kDirectoryInfoFixedSize;
    case FileInfoClass::FullDirectory: return fscc::kFullDirectoryInfoFixedSize;
    case FileInfoClass::BothDirectory: return fscc::kBothDirectoryInfoFixedSize;
    case FileInfoClass::IdBothDirectory: return fscc::kIdBothDirectoryInfoFixedSize;
    case FileInfoClass::IdFullDirectory: return fscc::kIdFullDirectoryInfoFixedSize;
    case FileInfoClass::Names: return fscc::kNamesInfoFixedSize;
    default: return 0;
  }
}

// NextEntryOffset, FileIndex, times, sizes, attributes, FileNameLength:
// the 64-byte head shared by every class except FileNamesInformation.
void put_common_head(ByteWriter& w, const DirEntry& e, uint32_t name_len) {
  w.u32(0);  // NextEntryOffset, patched by the caller
  w.u32(e.file_index);
  w.u64(e.st.creation_time);
  w.u64(e.st.last_access_time);
  w.u64(e.st.last_write_time);
  w.u64(e.st.change_time);
  w.u64(e.st.end_of_file);
  w.u64(e.st.allocation_size);
  w.u32(e.st.attributes ? e.st.attributes : FILE_ATTRIBUTE_NORMAL);
  w.u32(name_len);
}

// ShortNameLength, Reserved1 and the 24-byte ShortName: the generated 8.3
// name (vfs/short_names.hpp), none for a name that is one.
void put_short_name(ByteWriter& w, std::string_view name) {
  const Bytes short_name = utf8_to_utf16le(short_name_of(name));
  const size_t n = std::min(short_name.size(), fscc::kShortNameBytes);
  w.u8(uint8_t(n));
  w.u8(0);  // Reserved1
  w.bytes(ByteSpan(short_name.data(), n));
  w.zeros(fscc::kShortNameBytes - n);
}

// MS-FSCC 2.4.14: EaSize holds the reparse tag of a reparse point (a symlink).
uint32_t ea_size_or_tag(const DirEntry& e) {
  const uint32_t tag = reparse_tag(e.st);
  return tag ? tag : e.ea_size;
}

void put_entry(ByteWriter& w, FileInfoClass cls, const DirEntry& e, const Bytes& name) {
  const auto name_len = static_cast<uint32_t>(name.size());
  if (cls == FileInfoClass::Names) {
    w.u32(0);
    w.u32(e.file_index);
    w.u32(name_len);
    w.bytes(name);
    return;
  }
  put_common_head(w, e, name_len);
  switch (cls) {
    case FileInfoClass::FullDirectory: w.u32(ea_size_or_tag(e)); break;
    case FileInfoClass::IdFullDirectory:
      w.u32(ea_size_or_tag(e));
      w.u32(0);  // Reserved
      w.u64(e.st.file_id);
      break;
    case FileInfoClass::BothDirectory:
    case FileInfoClass::IdBothDirectory:
      w.u32(ea_size_or_tag(e));
      put_short_name(w, e.name);
      if (cls == FileInfoClass::IdBothDirectory) {
        w.u16(0);  // Reserved2
        w.u64(e.st.file_id);
      }
      break;
    default: break;  // FileDirectoryInformation: nothing more
  }
  w.bytes(name);
}

}  // namespace

bool is_dir_info_class(FileInfoClass cls) { return fixed_size(cls) != 0; }

bool encode_dir_entry(FileInfoClass cls, const DirEntry& e, size_t base, size_t max_size, Bytes& out,
                      size_t& entry_offset) {
  const size_t fixed = fixed_size(cls);
  if (fixed == 0 || out.size() < base) return false;
  const Bytes name = utf8_to_utf16le(e.name);
  const size_t rel = out.size() - base;
  const size_t pad = (fscc::kDirEntryAlignment - rel % fscc::kDirEntryAlignment) % fscc::kDirEntryAlignment;
  if (rel + pad + fixed + name.size() > max_size) return false;

  ByteWriter w(out);
  w.zeros(pad);
  entry_offset = out.size();
  put_entry(w, cls, e, name);
  return true;
}

}  // namespace ringsmb::vfs
