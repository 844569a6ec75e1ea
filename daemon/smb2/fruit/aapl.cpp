#include "smb2/fruit/aapl.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "common/unicode.hpp"
#include "smb2/engine/create_context_chain.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/fruit/adouble_convert.hpp"
#include "smb2/fruit/afp_info.hpp"
#include "smb2/fruit/netatalk.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2::fruit {
namespace {

// FILE_ID_BOTH_DIR_INFORMATION (MS-FSCC 2.4.17) fields macOS reads differently.
constexpr size_t kEaSizeAt = 64, kShortNameLengthAt = 68, kShortNameAt = 70, kReserved2At = 94, kFileIdAt = 96;
constexpr size_t kShortNameBytes = 24;
// The compressed FinderInfo's date added: seconds since 2000-01-01 UTC,
// big-endian; 0x80000000 ("no date") when there is none.
constexpr uint32_t kAfpDateStart = 0x80000000u;
constexpr int64_t kUnixTo2000Seconds = 946684800;
constexpr uint64_t kNtTicksPerSecond = 10'000'000, kNtToUnixSeconds = 11644473600ull;

uint64_t server_caps(const Request& req, uint64_t client_caps, uint8_t& flags) {
  const config::FruitOptions& f = req.tree->share.fruit;
  uint64_t caps = kAaplUnixBased;
  // Mac metadata in listings needs the streams it comes from.
  if ((client_caps & kAaplSupportsReadDirAttr) && req.tree->streams) {
    caps |= kAaplSupportsReadDirAttr;
    flags |= kAaplReaddirAttr;
  }
  if (f.copyfile) {
    caps |= kAaplSupportsOsxCopyfile;
    flags |= kAaplCopyfile;
  }
  if (f.nfs_aces) caps |= kAaplSupportsNfsAce;  // clients do not ask for it
  return caps;
}

// The 16-byte compressed FinderInfo: type and creator (files only), Finder
// flags, extended flags, date added (from the creation time).
void compressed_finder_info(int fd, const vfs::FileStat& st, uint8_t* out) {
  uint32_t date = kAfpDateStart;
  if (st.creation_time >= kNtToUnixSeconds * kNtTicksPerSecond) {
    int64_t unix_s = int64_t(st.creation_time / kNtTicksPerSecond - kNtToUnixSeconds);
    date = uint32_t(unix_s - kUnixTo2000Seconds);
  }
  std::memset(out, 0, 16);
  store_be32(out + 12, date);
  auto info = vfs::read_stream_range(fd, afp_info_key(), 0, kAfpInfoBytes);
  if (!info || info->size() < kAfpInfoBytes) return;
  const uint8_t* fi = info->data() + kAfpFinderInfoAt;
  if (!st.is_directory) std::memcpy(out, fi, 8);  // type, creator
  std::memcpy(out + 8, fi + 8, 2);                // Finder flags
  std::memcpy(out + 10, fi + 24, 2);              // extended Finder flags
}

}  // namespace

void answer_aapl(Request& req, ByteSpan query, Bytes& out) {
  if (!fruit_share(req) || !req.tree->share.fruit.aapl) return;
  if (query.size() != kAaplQueryBytes || load_le32(query.data()) != kAaplServerQuery) return;
  const uint64_t wanted = load_le64(query.data() + 8), client_caps = load_le64(query.data() + 16);
  uint8_t flags = kAaplNegotiated;
  Bytes data;
  ByteWriter w(data);
  w.u32(kAaplServerQuery);
  w.u32(0);
  w.u64(wanted & (kAaplServerCaps | kAaplVolumeCaps | kAaplModelInfo));
  if (wanted & kAaplServerCaps) w.u64(server_caps(req, client_caps, flags));
  if (wanted & kAaplVolumeCaps) {
    uint64_t caps = req.tree->share.case_sensitive ? kAaplCaseSensitive : 0;
    if (req.tree->share.fruit.time_machine) caps |= kAaplFullSync;  // FLUSH reaches the disk
    w.u64(caps);
  }
  if (wanted & kAaplModelInfo) {
    Bytes model;
    unicode::utf8_to_utf16le(req.tree->share.fruit.model, model);
    w.u32(0);  // Pad
    w.u32(uint32_t(model.size()));
    w.bytes(model);
  }
  append_create_context(out, "AAPL", data);
  req.conn.aapl_flags |= flags;  // a later query turns off nothing an earlier one turned on
}

bool posix_rename(const Request& req) { return aapl_negotiated(req) && req.tree->share.fruit.posix_rename; }

uint64_t reported_file_id(const Request& req, uint64_t id) {
  bool zero = aapl_negotiated(req) && req.tree->share.fruit.zero_file_id;
  return zero ? 0 : id;
}

void fill_readdir_attr(Request& req, int dir_fd, const vfs::DirEntry& e, uint8_t* entry) {
  if (e.name == "..") return;
  state::UniqueFd own;
  int fd = dir_fd;
  if (e.name != ".") {
    own.reset(openat(dir_fd, e.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!own) return;
    fd = own.get();
  }
  if (e.name != ".") convert_appledouble(req, dir_fd, e.name, fd, e.st);  // as Samba, per entry
  if (netatalk_metadata(req)) import_netatalk_metadata(fd);
  uint32_t max_access = req.tree->maximal_access & descriptor_maximal_access(req, fd, e.st);
  store_le32(entry + kEaSizeAt, max_access);
  entry[kShortNameLengthAt] = kShortNameBytes;
  entry[kShortNameLengthAt + 1] = 0;
  uint64_t rfork = 0;
  if (!e.st.is_directory)
    if (auto size = vfs::stream_size(fd, afp_resource_key())) rfork = *size;
  store_le64(entry + kShortNameAt, rfork);
  compressed_finder_info(fd, e.st, entry + kShortNameAt + 8);
  uint16_t mode = req.tree->share.fruit.nfs_aces ? uint16_t(e.st.mode) : 0;
  store_le16(entry + kReserved2At, mode);
  store_le64(entry + kFileIdAt, reported_file_id(req, e.st.file_id));
}

}  // namespace ringsmb::smb2::fruit
