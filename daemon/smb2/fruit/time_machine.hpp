// Time Machine shares (fruit:time machine): the volume size macOS sees, and
// the FLUSH it relies on. Time Machine writes a sparse bundle
// (NAME.sparsebundle/Info.plist and bands/ of band-size bytes each) and
// judges free space by the volume's size; "fruit:time machine max size"
// caps that size, as Samba does, so one Mac's backups cannot fill a disk
// other shares live on.
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "smb2/engine/dispatch.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2::fruit {

// The bytes the sparse bundles at the top of the share root `root_fd`
// hold: for each NAME.sparsebundle, its Info.plist's band-size times the
// number of entries in its bands/ folder. A bundle being created (no
// Info.plist or bands/ yet) counts 0.
uint64_t sparse_bundle_bytes(int root_fd);

// On a share with "fruit:time machine max size": rewrites the encoded
// FileFsSizeInformation / FileFsFullSizeInformation in `data` (MS-FSCC
// 2.5.8, 2.5.4) to a volume of that size, less the bundles' bytes, in
// 1 KiB units (2 sectors of 512 bytes), as Samba reports it. Other
// classes and shares are left alone.
void limit_time_machine_size(const Request& req, vfs::FsInfoClass cls, Bytes& data);

}  // namespace ringsmb::smb2::fruit
