// MS-FSCC 2.5 filesystem information encoders, sized from fstatfs.
#include "vfs/file_info.hpp"

#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "vfs/fscc_sizes.hpp"
#include "vfs/paths.hpp"
#include "vfs/quota.hpp"

namespace ringsmb::vfs {
namespace {

// MS-FSCC 2.5.1 FileSystemAttributes.
constexpr uint32_t FILE_CASE_SENSITIVE_SEARCH = 0x00000001;
constexpr uint32_t FILE_CASE_PRESERVED_NAMES = 0x00000002;
constexpr uint32_t FILE_UNICODE_ON_DISK = 0x00000004;
constexpr uint32_t FILE_PERSISTENT_ACLS = 0x00000008;
constexpr uint32_t FILE_VOLUME_QUOTAS = 0x00000020;
constexpr uint32_t FILE_SUPPORTS_SPARSE_FILES = 0x00000040;
constexpr uint32_t FILE_SUPPORTS_BLOCK_REFCOUNTING = 0x08000000;
constexpr uint32_t FILE_NAMED_STREAMS = 0x00040000;
constexpr uint32_t FILE_SUPPORTS_EXTENDED_ATTRIBUTES = 0x00800000;
// What the server implements today: names keep their case and are Unicode,
// files carry a security descriptor, files may be sparse (FSCTL_SET_SPARSE,
// SET_ZERO_DATA, QUERY_ALLOCATED_RANGES). Deliberately absent until they are
// implemented: object ids, reparse points. Named streams where the share
// has them (VolumeInfo::named_streams), EAs where they can be stored
// (VolumeInfo::extended_attributes), quotas where the file system keeps
// user quotas (vfs/quota.hpp; smbcquotas asks for the flag first).
constexpr uint32_t kBaseFsAttributes =
    FILE_CASE_PRESERVED_NAMES | FILE_UNICODE_ON_DISK | FILE_PERSISTENT_ACLS | FILE_SUPPORTS_SPARSE_FILES;
// Filesystems whose files can share blocks (FICLONERANGE, so
// FSCTL_DUPLICATE_EXTENTS_TO_FILE works): btrfs, and XFS made with reflink
// (the default of mkfs.xfs since 5.1; without it the FSCTL answers
// STATUS_NOT_SUPPORTED).
constexpr long kBtrfsMagic = 0x9123683E, kXfsMagic = 0x58465342;
constexpr uint32_t kMaxComponentNameLength = 255;

// MS-FSCC 2.5.10.
constexpr uint32_t FILE_DEVICE_DISK = 0x00000007;
// A local, mounted disk volume: what Windows servers report for a share.
constexpr uint32_t FILE_DEVICE_IS_MOUNTED = 0x00000020;

// MS-FSCC 2.5.7 flags: our "sectors" are a fiction of the filesystem block,
// so they are trivially aligned.
constexpr uint32_t SSINFO_FLAGS_ALIGNED_DEVICE = 0x00000001;
constexpr uint32_t SSINFO_FLAGS_PARTITION_ALIGNED_ON_DEVICE = 0x00000002;
// FSCTL_FILE_LEVEL_TRIM punches holes (smb2/fsctl/fsctl_sparse.cpp): TRIM is
// reported where the filesystem can punch them.
constexpr uint32_t SSINFO_FLAGS_TRIM_ENABLED = 0x00000008;
constexpr long kExt4Magic = 0xEF53, kTmpfsMagic = 0x01021994, kF2fsMagic = 0xF2F52010;

// Windows clients expect 512-byte sectors; the allocation unit is the
// filesystem's fragment size expressed in them.
constexpr uint32_t kBytesPerSector = 512;

struct FsGeometry {
  uint64_t total_units = 0;
  uint64_t caller_available_units = 0;  // f_bavail: what an unprivileged user may use
  uint64_t actual_available_units = 0;  // f_bfree
  uint32_t sectors_per_unit = 1;
  uint32_t bytes_per_sector = kBytesPerSector;
  bool punches_holes = false;
};

FsGeometry geometry_from_statfs(const struct statfs& sfs) {
  FsGeometry g;
  const uint64_t unit = sfs.f_frsize ? uint64_t(sfs.f_frsize) : uint64_t(sfs.f_bsize);
  g.total_units = sfs.f_blocks;
  const long type = long(sfs.f_type);
  g.punches_holes = type == kExt4Magic || type == kXfsMagic || type == kBtrfsMagic || type == kTmpfsMagic ||
                    type == kF2fsMagic;
  g.caller_available_units = sfs.f_bavail;
  g.actual_available_units = sfs.f_bfree;
  if (unit >= kBytesPerSector && unit % kBytesPerSector == 0) {
    g.sectors_per_unit = static_cast<uint32_t>(unit / kBytesPerSector);
  } else {
    g.bytes_per_sector = static_cast<uint32_t>(unit ? unit : kBytesPerSector);
  }
  return g;
}

void put_volume(ByteWriter& w, const VolumeInfo& vol) {
  const Bytes label = utf8_to_utf16le(vol.label);
  w.u64(vol.creation_time);
  w.u32(vol.serial_number);
  w.u32(static_cast<uint32_t>(label.size()));
  w.u8(0);  // SupportsObjects: no object ids
  w.u8(0);  // Reserved
  w.bytes(label);
}

void put_attribute(ByteWriter& w, int fd, const VolumeInfo& vol) {
  const Bytes name = utf8_to_utf16le(vol.fs_name);
  struct statfs sfs = {};
  bool refcounting = fstatfs(fd, &sfs) == 0 && (long(sfs.f_type) == kBtrfsMagic || long(sfs.f_type) == kXfsMagic);
  w.u32(kBaseFsAttributes | (vol.case_sensitive ? FILE_CASE_SENSITIVE_SEARCH : 0) |
        (refcounting ? FILE_SUPPORTS_BLOCK_REFCOUNTING : 0) | (vol.named_streams ? FILE_NAMED_STREAMS : 0) |
        (vol.extended_attributes ? FILE_SUPPORTS_EXTENDED_ATTRIBUTES : 0) |
        (user_quota_state(fd) ? FILE_VOLUME_QUOTAS : 0));
  w.u32(kMaxComponentNameLength);
  w.u32(static_cast<uint32_t>(name.size()));
  w.bytes(name);
}

void put_sector_size(ByteWriter& w, const FsGeometry& g) {
  w.u32(g.bytes_per_sector);  // LogicalBytesPerSector
  w.u32(g.bytes_per_sector);  // PhysicalBytesPerSectorForAtomicity
  w.u32(g.bytes_per_sector);  // PhysicalBytesPerSectorForPerformance
  w.u32(g.bytes_per_sector);  // FileSystemEffectivePhysicalBytesPerSectorForAtomicity
  w.u32(SSINFO_FLAGS_ALIGNED_DEVICE | SSINFO_FLAGS_PARTITION_ALIGNED_ON_DEVICE |
        (g.punches_holes ? SSINFO_FLAGS_TRIM_ENABLED : 0));
  w.u32(0);  // ByteOffsetForSectorAlignment
  w.u32(0);  // ByteOffsetForPartitionAlignment
}

// The user quota of the calling thread's file-system user (the session's,
// smb2/engine/thread_identity.hpp) narrows the sizes, as Samba's default
// dfree does, so that Explorer shows what the user can still write.
void apply_user_quota(int fd, FsGeometry& g) {
  const uint32_t fsuid = uint32_t(syscall(SYS_setfsuid, -1));  // -1: only asks
  auto q = get_user_quota(fd, fsuid);
  if (!q) return;
  const uint64_t unit = uint64_t(g.sectors_per_unit) * g.bytes_per_sector;
  SpaceUnits caller = narrow_to_quota({g.total_units, g.caller_available_units}, *q, unit);
  SpaceUnits actual = narrow_to_quota({g.total_units, g.actual_available_units}, *q, unit);
  g.total_units = caller.total;
  g.caller_available_units = caller.available;
  g.actual_available_units = actual.available;
}

Result<FsGeometry> fs_geometry(int fd) {
  struct statfs sfs = {};
  if (fstatfs(fd, &sfs) != 0) return Unexpected(nt_status_from_errno(errno));
  FsGeometry g = geometry_from_statfs(sfs);
  apply_user_quota(fd, g);
  return g;
}

NtStatus put_sizes(ByteWriter& w, FsInfoClass cls, int fd) {
  const auto g = fs_geometry(fd);
  if (!g) return g.error();
  switch (cls) {
    case FsInfoClass::Size:
      w.u64(g->total_units);
      w.u64(g->caller_available_units);
      break;
    case FsInfoClass::FullSize:
      w.u64(g->total_units);
      w.u64(g->caller_available_units);
      w.u64(g->actual_available_units);
      break;
    default:  // SectorSize
      put_sector_size(w, *g);
      return NtStatus::Success;
  }
  w.u32(g->sectors_per_unit);
  w.u32(g->bytes_per_sector);
  return NtStatus::Success;
}

}  // namespace

NtStatus encode_fs_info(FsInfoClass cls, int fd, const VolumeInfo& vol, Bytes& out) {
  ByteWriter w(out);
  switch (cls) {
    case FsInfoClass::Volume: put_volume(w, vol); return NtStatus::Success;
    case FsInfoClass::Attribute: put_attribute(w, fd, vol); return NtStatus::Success;
    case FsInfoClass::Device:
      w.u32(FILE_DEVICE_DISK);
      w.u32(FILE_DEVICE_IS_MOUNTED);
      return NtStatus::Success;
    case FsInfoClass::Size:
    case FsInfoClass::FullSize:
    case FsInfoClass::SectorSize: return put_sizes(w, cls, fd);
    // MS-FSA 2.1.5.13.8: a store without object ids fails with INVALID_PARAMETER.
    case FsInfoClass::ObjectId: return NtStatus::InvalidParameter;
    default: return NtStatus::InvalidInfoClass;
  }
}

uint64_t memory_filesystem_device(int fd) {
  constexpr long kTmpfsMagic = 0x01021994, kRamfsMagic = 0x858458f6;  // linux/magic.h
  struct statfs sfs = {};
  if (fstatfs(fd, &sfs) != 0 || (long(sfs.f_type) != kTmpfsMagic && long(sfs.f_type) != kRamfsMagic)) return 0;
  auto st = stat_fd(fd);
  return st ? st->device : 0;
}

}  // namespace ringsmb::vfs
