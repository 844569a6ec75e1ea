// Named streams too large for one extended attribute value (ext4 without
// ea_inode: one block, about 4 KiB, shared with the file's other xattrs)
// keep their data in a sidecar file: one file per stream in a directory
// only the server can reach, <state directory>/streams (mode 0700, root's).
// The stream's xattr on the file (vfs/stream_store.hpp) then holds its name
// and the sidecar's id instead of the data, so the stream still goes with
// its inode: a rename, a hard link, a restart keep it; the server removes
// the sidecar when it removes the stream, overwrites the file or deletes
// its last link.
//
// The id is 16 random bytes (getrandom), named as 32 hex digits: nothing a
// client says becomes part of a sidecar's path.
//
// The directory is root's; request threads run with the session user's
// file-system identity, so every sidecar operation runs between the
// `enter` and `leave` hooks given at configuration (the SMB2 layer's switch
// to root and back). The user's rights were checked on the file itself
// before the stream is touched (smb2/streams/stream_io.cpp).
//
// A sidecar belongs to the owner of the file whose stream it holds (uid
// and gid, set when it is made), so the filesystem's disk quotas and `du`
// count its blocks for that owner, and the server bounds what the
// sidecars of one owner may hold (the sum of their sizes, "max stream
// space per user"): a write, size or new sidecar past it is DiskFull. The
// sum is counted from the directory at start and kept as sidecars grow,
// shrink and go.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"

namespace ringsmb::vfs {

using SidecarId = std::array<uint8_t, 16>;

struct SidecarHooks {
  void (*enter)() = nullptr;  // switch to an identity that can reach the directory
  void (*leave)() = nullptr;  // and back
};

// Makes (0700) and opens `directory` for sidecars and counts what each
// owner's hold; false when it cannot (streams then stay bounded by one
// xattr value). `max_bytes_per_owner`: the bound per owner, 0 for none.
// Called once at start, as root, before any request.
bool configure_stream_sidecars(const std::string& directory, SidecarHooks hooks, uint64_t max_bytes_per_owner = 0);
// Whether sidecars can be made (configured).
bool stream_sidecars_enabled();
// Whether any sidecar may exist (one existed at start, or one was made
// since): deletes look for sidecars to remove only then.
bool stream_sidecars_in_use();
// Back to unconfigured (tests).
void reset_stream_sidecars();

// Who a sidecar belongs to: the owner of the stream's file.
struct SidecarOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
};
// The sum of the sizes of `uid`'s sidecars, as counted (tests).
uint64_t sidecar_bytes_of(uint32_t uid);

// A new sidecar of `owner` holding `data`, then extended (zero-filled) or
// cut to `size`; its id.
Result<SidecarId> sidecar_create(ByteSpan data, uint64_t size, SidecarOwner owner);
Result<uint64_t> sidecar_size(const SidecarId& id);
// Up to `length` bytes from `offset` (fewer at the end).
Result<Bytes> sidecar_read(const SidecarId& id, uint64_t offset, size_t length);
NtStatus sidecar_write(const SidecarId& id, uint64_t offset, ByteSpan data);
NtStatus sidecar_truncate(const SidecarId& id, uint64_t size);
// Removes the sidecar; gone already is fine.
void sidecar_remove(const SidecarId& id);

// The sidecar's file name (32 lowercase hex digits).
std::string sidecar_name(const SidecarId& id);

}  // namespace ringsmb::vfs
