// SMB2 QUERY_INFO (MS-SMB2 2.2.37, 2.2.38, 3.3.5.20; MS-FSA 2.1.5.11,
// 2.1.5.12): file, filesystem and security information of an open.
//
// Output size rules (MS-FSA): a buffer smaller than a class's fixed part
// fails with STATUS_INFO_LENGTH_MISMATCH, where "fixed part" of a class with
// a trailing name is what Windows uses: the C sizeof of the structure with
// its one-character name array and alignment padding (FILE_ALL_INFORMATION
// 104, FILE_NAME_INFORMATION 8, FILE_STREAM_INFORMATION 32,
// FILE_FS_VOLUME_INFORMATION 24, FILE_FS_ATTRIBUTE_INFORMATION 16), not the
// field offset of the name MS-FSA mentions; a class with a variable tail
// (names, stream list, volume label, filesystem name) is truncated and
// returned with STATUS_BUFFER_OVERFLOW; a security descriptor that does not
// fit fails with STATUS_BUFFER_TOO_SMALL. (Windows adds a 4-byte ErrorData
// with the needed size to that error; the dispatcher's generic ERROR body
// has ByteCount 0, which clients treat as "retry larger".)
#include <fcntl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/fruit/fruit_share.hpp"
#include "smb2/fruit/time_machine.hpp"
#include "smb2/security/access.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/fsctl/object_id.hpp"
#include "smb2/engine/output_buffer.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/quota/quota.hpp"
#include "smb2/security/security_info.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/streams/stream_io.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"
#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

// QUERY_INFO Flags for FileFullEaInformation (MS-SMB2 2.2.37).
constexpr uint32_t SL_RESTART_SCAN = 0x1, SL_RETURN_SINGLE_ENTRY = 0x2, SL_INDEX_SPECIFIED = 0x4;

// Create options that FileModeInformation reports (MS-FSCC 2.4.31).
constexpr uint32_t kModeInformationMask = 0x0000103E;

using vfs::FileInfoClass;
using vfs::FsInfoClass;

// sizeof() of a structure whose fixed part is `fixed` bytes followed by a
// one-WCHAR name array, padded to the structure's `alignment`.
constexpr size_t windows_sizeof(size_t fixed, size_t alignment) {
  return (fixed + 2 + alignment - 1) / alignment * alignment;
}
static_assert(windows_sizeof(vfs::fscc::kAllInfoFixedSize, 8) == 104);
static_assert(windows_sizeof(vfs::fscc::kFsVolumeInfoFixedSize, 8) == 24);

// MS-FSCC 2.5.2 FILE_FS_CONTROL_INFORMATION (smb2/quota/) and 2.5.6
// FILE_FS_OBJECTID_INFORMATION: answered here (the vfs encoders do not).
constexpr size_t kFsControlInfoSize = 48;
constexpr size_t kFsObjectIdInfoSize = 64;

struct SizeRule {
  size_t minimum = 0;     // smaller buffers: INFO_LENGTH_MISMATCH
  bool variable = false;  // larger data is truncated with BUFFER_OVERFLOW
};

SizeRule file_size_rule(FileInfoClass cls) {
  namespace f = vfs::fscc;
  switch (cls) {
    case FileInfoClass::Basic: return {f::kBasicInfoSize};
    case FileInfoClass::Standard: return {f::kStandardInfoSize};
    case FileInfoClass::Internal: return {f::kInternalInfoSize};
    case FileInfoClass::Ea: return {f::kEaInfoSize};
    case FileInfoClass::Access: return {f::kAccessInfoSize};
    case FileInfoClass::Position: return {f::kPositionInfoSize};
    case FileInfoClass::Mode: return {f::kModeInfoSize};
    case FileInfoClass::Alignment: return {f::kAlignmentInfoSize};
    case FileInfoClass::NetworkOpen: return {f::kNetworkOpenInfoSize};
    case FileInfoClass::AttributeTag: return {f::kAttributeTagInfoSize};
    case FileInfoClass::Compression: return {f::kCompressionInfoSize};
    case FileInfoClass::All: return {windows_sizeof(f::kAllInfoFixedSize, 8), true};
    case FileInfoClass::Name:
    case FileInfoClass::NormalizedName:
    case FileInfoClass::AlternateName: return {windows_sizeof(f::kNameInfoFixedSize, 4), true};
    case FileInfoClass::Stream: return {windows_sizeof(f::kStreamInfoFixedSize, 8), true};
    default: return {0, true};
  }
}

SizeRule fs_size_rule(FsInfoClass cls) {
  namespace f = vfs::fscc;
  switch (cls) {
    case FsInfoClass::Volume: return {windows_sizeof(f::kFsVolumeInfoFixedSize, 8), true};
    case FsInfoClass::Attribute: return {windows_sizeof(f::kFsAttributeInfoFixedSize, 4), true};
    case FsInfoClass::Control: return {kFsControlInfoSize};
    case FsInfoClass::ObjectId: return {kFsObjectIdInfoSize};
    case FsInfoClass::Size: return {f::kFsSizeInfoSize};
    case FsInfoClass::FullSize: return {f::kFsFullSizeInfoSize};
    case FsInfoClass::Device: return {f::kFsDeviceInfoSize};
    case FsInfoClass::SectorSize: return {f::kFsSectorSizeInfoSize};
    default: return {0, true};
  }
}

// MS-FSA 2.1.5.11: the classes that read attributes need FILE_READ_ATTRIBUTES.
bool needs_read_attributes(FileInfoClass cls) {
  switch (cls) {
    case FileInfoClass::Basic:
    case FileInfoClass::All:
    case FileInfoClass::NetworkOpen:
    case FileInfoClass::AttributeTag: return true;
    default: return false;
  }
}

struct QueryInfoRequest {
  uint8_t info_type = 0;
  uint8_t info_class = 0;
  uint32_t output_length = 0;
  ByteSpan input;
  uint32_t additional_info = 0;
  uint32_t flags = 0;
};

NtStatus parse(const Request& req, QueryInfoRequest& q) {
  ByteReader r(req.body);
  r.skip(2);
  q.info_type = r.u8();
  q.info_class = r.u8();
  q.output_length = r.u32();
  uint16_t in_off = r.u16();
  r.skip(2);
  uint32_t in_len = r.u32();
  q.additional_info = r.u32();
  q.flags = r.u32();
  r.skip(16);  // FileId: Request::open
  if (!r.ok() || !buffer_at(req, in_off, in_len, q.input)) return NtStatus::InvalidParameter;
  return NtStatus::Success;
}

// Applies the size rule to encoded data: truncates, or fails.
NtStatus fit(Bytes& data, uint32_t output_length, SizeRule rule) {
  if (output_length < rule.minimum) return NtStatus::InfoLengthMismatch;
  if (data.size() <= output_length) return NtStatus::Success;
  if (!rule.variable) return NtStatus::InfoLengthMismatch;
  data.resize(output_length);
  return NtStatus::BufferOverflow;
}

std::string windows_path(std::string_view unix_path) {
  std::string s(unix_path);
  std::replace(s.begin(), s.end(), '/', '\\');
  return s;
}

// FileFullEaInformation (MS-FSA 2.1.5.11.10, MS-SMB2 3.3.5.20.1): the EAs
// the input's FILE_GET_EA_INFORMATION list names (an absent one with an
// empty value), or the file's EAs from the open's scan position
// (SL_RESTART_SCAN: the first; SL_INDEX_SPECIFIED: AdditionalInformation,
// 1-based), as many whole entries as fit (BUFFER_OVERFLOW when not all
// did; BUFFER_TOO_SMALL when none), or one with SL_RETURN_SINGLE_ENTRY.
NtStatus query_full_ea(Request& req, const QueryInfoRequest& q, state::Open& open, Bytes& data) {
  if (!req.tree->eas) return NtStatus::EasNotSupported;  // FILE_SUPPORTS_EXTENDED_ATTRIBUTES is not advertised
  auto eas = vfs::read_eas(open.fd.get());
  if (!eas) return eas.error();
  std::vector<vfs::Ea> picked;
  const bool listed = !q.input.empty();
  if (listed) {
    std::vector<std::string> names;
    if (NtStatus s = vfs::parse_get_ea_list(q.input, names); s != NtStatus::Success) return s;
    for (std::string& name : names) {
      const std::string folded = vfs::fold_ea_name(name);
      auto it = std::find_if(eas->begin(), eas->end(),
                             [&](const vfs::Ea& ea) { return vfs::fold_ea_name(ea.name) == folded; });
      picked.push_back(it != eas->end() ? *it : vfs::Ea{std::move(name), 0, {}});
    }
  } else {
    if (eas->empty()) return NtStatus::NoEasOnFile;
    if (q.flags & SL_RESTART_SCAN) open.ea_index = 0;
    if (q.flags & SL_INDEX_SPECIFIED) {
      if (q.additional_info == 0 || q.additional_info > eas->size()) return NtStatus::NonexistentEaEntry;
      open.ea_index = q.additional_info - 1;
    }
    if (open.ea_index >= eas->size()) return NtStatus::NoMoreEas;
    picked.assign(eas->begin() + open.ea_index, eas->end());
  }
  size_t previous = SIZE_MAX, returned = 0;
  for (const vfs::Ea& ea : picked) {
    const size_t start = previous == SIZE_MAX ? 0 : (data.size() + 3) & ~size_t(3);
    if (start + vfs::full_ea_entry_size(ea) > q.output_length) break;
    vfs::append_full_ea(data, ea, &previous);
    ++returned;
    if (q.flags & SL_RETURN_SINGLE_ENTRY) break;
  }
  if (returned == 0) return NtStatus::BufferTooSmall;
  if (!listed) open.ea_index += uint32_t(returned);
  return returned == picked.size() || (q.flags & SL_RETURN_SINGLE_ENTRY) ? NtStatus::Success : NtStatus::BufferOverflow;
}

NtStatus query_file(Request& req, const QueryInfoRequest& q, state::Open& open, Bytes& data) {
  auto cls = FileInfoClass(q.info_class);
  if (cls == FileInfoClass::FullEa) {
    if (!(open.granted_access & FILE_READ_EA)) return NtStatus::AccessDenied;
    return query_full_ea(req, q, open, data);
  }
  if (cls == FileInfoClass::NormalizedName && req.conn.dialect != config::kDialect311)
    return NtStatus::NotSupported;  // MS-SMB2 3.3.5.20.1: 3.1.1 only
  if (needs_read_attributes(cls) && !(open.granted_access & FILE_READ_ATTRIBUTES)) return NtStatus::AccessDenied;
  SizeRule rule = file_size_rule(cls);
  if (rule.minimum == 0) return NtStatus::InvalidInfoClass;
  if (q.output_length < rule.minimum) return NtStatus::InfoLengthMismatch;

  auto st = vfs::stat_fd(open.fd.get());
  if (!st) return st.error();
  st->attributes = reported_attributes(req.tree->share, *st, open.path, open.fd.get());
  apply_stored_metadata(*st, open);
  show_write_time(open, *st);
  if (cls == FileInfoClass::Stream) {
    if (NtStatus s = query_stream_information(req, open, *st, data); s != NtStatus::Success) return s;
    return fit(data, q.output_length, rule);
  }
  if (open.stream) apply_stream_size(open, *st);
  std::string name = windows_path(open.path);
  if (open.stream) name += ":" + open.stream->name;  // as Windows names a stream handle
  vfs::OpenInfo info;
  info.access_mask = open.granted_access;
  info.position = open.position;
  info.mode_flags = open.create_options & kModeInformationMask;
  info.delete_pending = open.node && req.server.files.is_delete_pending(open.node);
  info.link_deleted = info.delete_pending && !open.stream;
  info.name = name;
  if (req.tree->eas && (cls == FileInfoClass::Ea || cls == FileInfoClass::All))
    info.ea_size = vfs::ea_list_size(open.fd.get());
  std::string short_name;
  if (cls == FileInfoClass::AlternateName) {
    std::string_view parent, leaf;
    vfs::split_parent(open.path, parent, leaf);
    short_name = vfs::alternate_name(leaf);
    info.short_name = short_name;
    // The client may name the file by it after it is gone (create_open.cpp).
    if (!req.tree->share.case_sensitive) req.server.short_names.remember(req.tree->share.name, parent, leaf);
  }
  NtStatus s = vfs::encode_file_info(cls, *st, info, data);
  if (s != NtStatus::Success) return s;
  return fit(data, q.output_length, rule);
}

uint32_t volume_serial(uint64_t dev) {
  uint64_t h = dev * 0x9E3779B97F4A7C15ull;
  return uint32_t(h >> 32) ^ uint32_t(h);
}

NtStatus query_filesystem(Request& req, const QueryInfoRequest& q, state::Open& open, Bytes& data) {
  auto cls = FsInfoClass(q.info_class);
  SizeRule rule = fs_size_rule(cls);
  if (rule.minimum == 0) return NtStatus::InvalidInfoClass;
  if (q.output_length < rule.minimum) return NtStatus::InfoLengthMismatch;
  auto root = vfs::stat_fd(req.tree->root.get());
  uint64_t dev = root ? root->device : 0;
  ByteWriter w(data);
  if (cls == FsInfoClass::Control) {
    put_fs_control_information(req, w);
    return NtStatus::Success;
  }
  if (cls == FsInfoClass::ObjectId) {
    // A volume object id that stays the same for the share's filesystem.
    put_volume_object_id(w, dev);
    w.zeros(48);  // ExtendedInfo
    return NtStatus::Success;
  }
  vfs::VolumeInfo vol;
  vol.label = req.tree->share.name;
  vol.case_sensitive = req.tree->share.case_sensitive;
  vol.named_streams = req.tree->streams;
  vol.extended_attributes = req.tree->eas;
  vol.creation_time = req.server.start_time;
  vol.serial_number = volume_serial(dev);
  NtStatus s = vfs::encode_fs_info(cls, open.fd.get(), vol, data);
  if (s != NtStatus::Success) return s;
  fruit::limit_time_machine_size(req, cls, data);
  return fit(data, q.output_length, rule);
}

}  // namespace

NtStatus handle_query_info(Request& req, ByteWriter& w) {
  QueryInfoRequest q;
  NtStatus st = parse(req, q);
  if (st != NtStatus::Success) return st;
  state::Open* open = req.open;
  if (q.output_length > negotiated_sizes(req.conn, req.server).max_trans) return NtStatus::InvalidParameter;

  Bytes data;
  // The quota index answers quota and file system queries alone (it has no
  // file, so no file information or security descriptor of its own).
  if (open->quota_file && q.info_type != wire::SMB2_0_INFO_QUOTA && q.info_type != wire::SMB2_0_INFO_FILESYSTEM)
    return NtStatus::InvalidParameter;
  if (find_pipe(req.conn, *open)) st = query_pipe_info(req.conn, *open, q.info_type, q.info_class, q.output_length, data);
  else switch (q.info_type) {
    case wire::SMB2_0_INFO_FILE: st = query_file(req, q, *open, data); break;
    case wire::SMB2_0_INFO_FILESYSTEM: st = query_filesystem(req, q, *open, data); break;
    case wire::SMB2_0_INFO_SECURITY:
      st = query_security_info(req, *open, q.additional_info, q.output_length, fruit::nfs_aces_on(req), data);
      break;
    case wire::SMB2_0_INFO_QUOTA:
      st = query_quota(req, *open, q.input, q.output_length, data);
      if (st == NtStatus::NoMoreEntries) return st;  // an ERROR response
      break;
    default: return NtStatus::InvalidParameter;
  }
  if (!nt_success(st)) return st;
  OutputBufferResponse resp(w);
  w.bytes(data);
  resp.finish();
  return st;
}

}  // namespace ringsmb::smb2
