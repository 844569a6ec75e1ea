// Object ids (MS-FSCC 2.1.3) without an object id store: derived from the
// device and inode, so they exist for every file, never change during the
// file's life and are unique on the volume.
#pragma once

#include <cstdint>

#include "common/bytes.hpp"

namespace ringsmb::smb2 {

// The volume's 16-byte object id (FileFsObjectIdInformation, BirthVolumeId).
inline void put_volume_object_id(ByteWriter& w, uint64_t dev) {
  w.u64(dev * 0x9E3779B97F4A7C15ull);
  w.u64(dev ^ 0x72696E67736D6221ull);
}

// A file's 16-byte object id.
inline void put_file_object_id(ByteWriter& w, uint64_t dev, uint64_t ino) {
  w.u64(ino);
  w.u64(dev * 0x9E3779B97F4A7C15ull ^ 0x6F626A6563746964ull);
}

}  // namespace ringsmb::smb2
