// A synthesized self-relative security descriptor (MS-DTYP 2.4.6) that tells
// Windows clients what the Unix owner/group/other bits allow.
#include <initializer_list>

#include "vfs/security_descriptor.hpp"

#include <algorithm>

namespace ringsmb::vfs {
namespace {

// MS-DTYP 2.4.6 Control bits and SECURITY_INFORMATION selectors (2.4.7).
constexpr uint16_t SE_DACL_PRESENT = 0x0004;
constexpr uint16_t SE_SELF_RELATIVE = 0x8000;
constexpr uint32_t OWNER_SECURITY_INFORMATION = 0x1;
constexpr uint32_t GROUP_SECURITY_INFORMATION = 0x2;
constexpr uint32_t DACL_SECURITY_INFORMATION = 0x4;

constexpr uint8_t kSdRevision = 1;
constexpr size_t kSdHeaderSize = 20;
constexpr uint8_t kSidRevision = 1;
constexpr uint8_t ACL_REVISION = 2;
constexpr size_t kAclHeaderSize = 8;
constexpr uint8_t ACCESS_ALLOWED_ACE_TYPE = 0;
constexpr size_t kAceHeaderAndMaskSize = 8;

// MS-DTYP 2.4.3 access mask bits.
constexpr uint32_t FILE_READ_DATA = 0x0001;
constexpr uint32_t FILE_WRITE_DATA = 0x0002;
constexpr uint32_t FILE_APPEND_DATA = 0x0004;
constexpr uint32_t FILE_READ_EA = 0x0008;
constexpr uint32_t FILE_WRITE_EA = 0x0010;
constexpr uint32_t FILE_EXECUTE = 0x0020;
constexpr uint32_t FILE_DELETE_CHILD = 0x0040;
constexpr uint32_t FILE_READ_ATTRIBUTES = 0x0080;
constexpr uint32_t FILE_WRITE_ATTRIBUTES = 0x0100;
constexpr uint32_t DELETE = 0x00010000;
constexpr uint32_t READ_CONTROL = 0x00020000;
constexpr uint32_t WRITE_DAC = 0x00040000;
constexpr uint32_t WRITE_OWNER = 0x00080000;
constexpr uint32_t SYNCHRONIZE = 0x00100000;
constexpr uint32_t kFileAllAccess = 0x001F01FF;

constexpr uint32_t FILE_GENERIC_READ = READ_CONTROL | FILE_READ_DATA | FILE_READ_ATTRIBUTES | FILE_READ_EA | SYNCHRONIZE;
constexpr uint32_t FILE_GENERIC_WRITE =
    READ_CONTROL | FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_WRITE_EA | FILE_APPEND_DATA | SYNCHRONIZE;
constexpr uint32_t FILE_GENERIC_EXECUTE = READ_CONTROL | FILE_READ_ATTRIBUTES | FILE_EXECUTE | SYNCHRONIZE;
static_assert(FILE_GENERIC_READ == 0x120089 && FILE_GENERIC_WRITE == 0x120116 && FILE_GENERIC_EXECUTE == 0x1200A0);

// Anyone who can reach a file on Unix can stat it and (through us) read its
// security descriptor, whatever its mode says.
constexpr uint32_t kAlwaysGranted = READ_CONTROL | FILE_READ_ATTRIBUTES | SYNCHRONIZE;
// The owner can always chmod/chown-to-self/utime a file, which is what these
// Windows rights mean; DELETE is granted too since the owner can make the
// file deletable anyway (the real check is on the parent directory).
constexpr uint32_t kOwnerAlwaysGranted = kAlwaysGranted | WRITE_DAC | WRITE_OWNER | DELETE | FILE_WRITE_ATTRIBUTES;

// S-1-22-1-<uid> / S-1-22-2-<gid>: the "Unix User" / "Unix Group" authority.
constexpr uint64_t kUnixAuthority = 22;
constexpr uint32_t kUnixUserRid = 1;
constexpr uint32_t kUnixGroupRid = 2;
// S-1-1-0, Everyone.
constexpr uint64_t kWorldAuthority = 1;
constexpr uint32_t kWorldRid = 0;

struct Sid {
  uint64_t authority;
  uint32_t sub[2];
  uint8_t count;
  size_t size() const { return 8 + 4 * size_t(count); }
};

void put_sid(ByteWriter& w, const Sid& sid) {
  w.u8(kSidRevision);
  w.u8(sid.count);
  // IdentifierAuthority is a 48-bit big-endian value.
  for (int shift = 40; shift >= 0; shift -= 8) w.u8(uint8_t(sid.authority >> shift));
  for (uint8_t i = 0; i < sid.count; ++i) w.u32(sid.sub[i]);
}

uint32_t rights_from_bits(uint32_t rwx, bool is_directory) {
  uint32_t mask = kAlwaysGranted;
  if (rwx & 4) mask |= FILE_GENERIC_READ;
  // Creating and removing entries in a Unix directory needs w (and x).
  if (rwx & 2) mask |= FILE_GENERIC_WRITE | (is_directory ? FILE_DELETE_CHILD : 0);
  if (rwx & 1) mask |= FILE_GENERIC_EXECUTE;
  return mask;
}

struct Ace {
  const Sid* sid;
  uint32_t mask;
};

void put_dacl(ByteWriter& w, std::initializer_list<Ace> aces) {
  size_t acl_size = kAclHeaderSize;
  for (const Ace& a : aces) acl_size += kAceHeaderAndMaskSize + a.sid->size();
  w.u8(ACL_REVISION);
  w.u8(0);  // Sbz1
  w.u16(static_cast<uint16_t>(acl_size));
  w.u16(static_cast<uint16_t>(aces.size()));
  w.u16(0);  // Sbz2
  for (const Ace& a : aces) {
    w.u8(ACCESS_ALLOWED_ACE_TYPE);
    w.u8(0);  // AceFlags: no inheritance is modelled
    w.u16(static_cast<uint16_t>(kAceHeaderAndMaskSize + a.sid->size()));
    w.u32(a.mask);
    put_sid(w, *a.sid);
  }
}

Bytes sid_bytes(const Sid& sid) {
  Bytes b;
  ByteWriter w(b);
  put_sid(w, sid);
  return b;
}

// The rwx bits whose rights (plus `always`) are exactly `mask`, or -1.
int bits_for_mask(uint32_t mask, uint32_t always, bool is_directory) {
  if (!is_directory) mask &= ~FILE_DELETE_CHILD;  // part of "full control", meaningless on a file
  unsigned bits = (mask & FILE_READ_DATA ? 4 : 0) | (mask & FILE_WRITE_DATA ? 2 : 0) | (mask & FILE_EXECUTE ? 1 : 0);
  uint32_t expected = always | rights_from_bits(bits, is_directory);
  return (mask | always) == expected ? int(bits) : -1;
}

}  // namespace

std::optional<mode_t> mode_from_dacl(const FileStat& st, ByteSpan dacl) {
  const Sid sids[3] = {{kUnixAuthority, {kUnixUserRid, st.uid}, 2},
                       {kUnixAuthority, {kUnixGroupRid, st.gid}, 2},
                       {kWorldAuthority, {kWorldRid, 0}, 1}};
  const uint32_t always[3] = {kOwnerAlwaysGranted, kAlwaysGranted, kAlwaysGranted};
  uint32_t masks[3] = {0, 0, 0};
  bool seen[3] = {false, false, false};
  ByteReader r(dacl);
  r.skip(4);  // AclRevision, Sbz1, AclSize (the caller bounded the span)
  uint16_t count = r.u16();
  r.skip(2);
  for (uint16_t i = 0; i < count; ++i) {
    uint8_t type = r.u8(), flags = r.u8();
    uint16_t size = r.u16();
    uint32_t mask = r.u32();
    if (!r.ok() || size < kAceHeaderAndMaskSize) return std::nullopt;
    ByteSpan sid = r.bytes(size - kAceHeaderAndMaskSize);
    if (!r.ok() || type != ACCESS_ALLOWED_ACE_TYPE || flags != 0) return std::nullopt;
    auto who = std::find_if(std::begin(sids), std::end(sids), [&](const Sid& s) {
      Bytes b = sid_bytes(s);
      return std::equal(b.begin(), b.end(), sid.begin(), sid.end());
    });
    size_t k = size_t(who - std::begin(sids));
    if (k == 3 || seen[k]) return std::nullopt;
    seen[k] = true;
    masks[k] = mask;
  }
  mode_t mode = st.mode & 07000;  // setuid, setgid, sticky stay
  for (size_t k = 0; k < 3; ++k) {
    int bits = bits_for_mask(masks[k], always[k], st.is_directory);
    if (bits < 0) return std::nullopt;
    mode |= mode_t(bits) << (6 - 3 * k);
  }
  return mode;
}

namespace {

// A regular file without the owner's write bit has FILE_ATTRIBUTE_READONLY
// (vfs::dos_attributes), an attribute and not part of its DACL (MS-FSA
// refuses the writes for the attribute): the owner's ACE reads as if the
// bit were there, as clearing READONLY gives it back, so that setting and
// clearing the attribute leaves the DACL as it was (smb2.winattr).
unsigned owner_bits(const FileStat& st) {
  const unsigned bits = (st.mode >> 6) & 7;
  return S_ISREG(st.mode) ? bits | 2 : bits;
}

}  // namespace

uint32_t mode_maximal_access(const FileStat& st, ModeRole role) {
  if (role.owner) return kFileAllAccess;
  const bool dir = st.is_directory;
  uint32_t mask = rights_from_bits(st.mode & 7, dir);
  if (role.in_group) mask |= rights_from_bits((st.mode >> 3) & 7, dir);
  return mask;
}

// Note the DACL is a union of allow ACEs, so an owner whose bits are weaker
// than the group's or others' (mode 0077) appears to have more rights than
// Unix gives; the open itself is still checked by the kernel.
Bytes build_security_descriptor(const FileStat& st, uint32_t additional_info) {
  const Sid owner{kUnixAuthority, {kUnixUserRid, st.uid}, 2};
  const Sid group{kUnixAuthority, {kUnixGroupRid, st.gid}, 2};
  const Sid world{kWorldAuthority, {kWorldRid, 0}, 1};
  const bool dir = st.is_directory;

  Bytes out;
  ByteWriter w(out);
  uint16_t control = SE_SELF_RELATIVE;
  if (additional_info & DACL_SECURITY_INFORMATION) control |= SE_DACL_PRESENT;
  w.u8(kSdRevision);
  w.u8(0);  // Sbz1
  w.u16(control);
  w.zeros(kSdHeaderSize - 4);  // OffsetOwner/Group/Sacl/Dacl, patched below
  if (additional_info & OWNER_SECURITY_INFORMATION) {
    w.patch_u32(4, static_cast<uint32_t>(w.size()));
    put_sid(w, owner);
  }
  if (additional_info & GROUP_SECURITY_INFORMATION) {
    w.patch_u32(8, static_cast<uint32_t>(w.size()));
    put_sid(w, group);
  }
  // SACL (offset 12) stays 0: we keep no audit information.
  if (additional_info & DACL_SECURITY_INFORMATION) {
    w.patch_u32(16, static_cast<uint32_t>(w.size()));
    put_dacl(w, {{&owner, kOwnerAlwaysGranted | rights_from_bits(owner_bits(st), dir)},
                 {&group, rights_from_bits((st.mode >> 3) & 7, dir)},
                 {&world, rights_from_bits(st.mode & 7, dir)}});
  }
  return out;
}

}  // namespace ringsmb::vfs
