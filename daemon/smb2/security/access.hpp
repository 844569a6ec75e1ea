// Access masks (MS-SMB2 2.2.13.1, MS-DTYP 2.4.3) and their mapping.
#pragma once

#include <cstdint>

namespace ringsmb::smb2 {

enum : uint32_t {
  FILE_READ_DATA = 0x00000001,
  FILE_WRITE_DATA = 0x00000002,
  FILE_APPEND_DATA = 0x00000004,
  FILE_READ_EA = 0x00000008,
  FILE_WRITE_EA = 0x00000010,
  FILE_EXECUTE = 0x00000020,
  FILE_DELETE_CHILD = 0x00000040,
  FILE_READ_ATTRIBUTES = 0x00000080,
  FILE_WRITE_ATTRIBUTES = 0x00000100,
  DELETE = 0x00010000,
  READ_CONTROL = 0x00020000,
  WRITE_DAC = 0x00040000,
  WRITE_OWNER = 0x00080000,
  SYNCHRONIZE = 0x00100000,
  ACCESS_SYSTEM_SECURITY = 0x01000000,
  MAXIMUM_ALLOWED = 0x02000000,
  GENERIC_ALL = 0x10000000,
  GENERIC_EXECUTE = 0x20000000,
  GENERIC_WRITE = 0x40000000,
  GENERIC_READ = 0x80000000,
};

inline constexpr uint32_t FILE_GENERIC_READ = 0x00120089;
inline constexpr uint32_t FILE_GENERIC_WRITE = 0x00120116;
inline constexpr uint32_t FILE_GENERIC_EXECUTE = 0x001200A0;
inline constexpr uint32_t FILE_ALL_ACCESS = 0x001F01FF;
// Bits that modify the file or its name: refused on a read-only share.
inline constexpr uint32_t kWriteLikeAccess = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA | FILE_DELETE_CHILD |
                                             FILE_WRITE_ATTRIBUTES | DELETE | WRITE_DAC | WRITE_OWNER;

// GENERIC_* bits to their specific rights (MS-SMB2 3.3.5.9 uses the file
// generic mapping of MS-DTYP).
inline uint32_t map_generic(uint32_t access) {
  uint32_t out = access & ~(GENERIC_ALL | GENERIC_EXECUTE | GENERIC_WRITE | GENERIC_READ);
  if (access & GENERIC_READ) out |= FILE_GENERIC_READ;
  if (access & GENERIC_WRITE) out |= FILE_GENERIC_WRITE;
  if (access & GENERIC_EXECUTE) out |= FILE_GENERIC_EXECUTE;
  if (access & GENERIC_ALL) out |= FILE_ALL_ACCESS;
  return out;
}

}  // namespace ringsmb::smb2
