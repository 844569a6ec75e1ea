// MS-DTYP security descriptors: parse, encode, inherit, check (ntacl.hpp).
#include "vfs/ntacl.hpp"

#include <algorithm>

#include "common/sid_text.hpp"
#include "vfs/security_descriptor.hpp"

namespace ringsmb::vfs::ntacl {
namespace {

constexpr size_t kSdHeaderSize = 20;
constexpr size_t kAclHeaderSize = 8;
constexpr size_t kAceHeaderSize = 4;
constexpr size_t kMaxSubAuthorities = 15;
constexpr uint32_t kGenericBits = kGenericAll | kGenericExecute | kGenericWrite | kGenericRead;
// Control bits that describe the DACL and are kept with it.
constexpr uint16_t kDaclControl = SE_DACL_AUTO_INHERIT_REQ | SE_DACL_AUTO_INHERITED | SE_DACL_PROTECTED;

Sid make_sid(uint64_t authority, std::initializer_list<uint32_t> sub) { return Sid{1, authority, sub}; }

size_t acl_size(const Acl& acl) {
  size_t n = kAclHeaderSize;
  for (const Ace& a : acl.aces) n += a.raw.empty() ? kAceHeaderSize + 4 + a.sid.size() : a.raw.size();
  return n;
}

void put_acl(ByteWriter& w, const Acl& acl) {
  w.u8(acl.revision);
  w.u8(0);
  w.u16(uint16_t(acl_size(acl)));
  w.u16(uint16_t(acl.aces.size()));
  w.u16(0);
  for (const Ace& a : acl.aces) {
    if (!a.raw.empty()) {
      w.bytes(a.raw);
      continue;
    }
    w.u8(a.type);
    w.u8(a.flags);
    w.u16(uint16_t(kAceHeaderSize + 4 + a.sid.size()));
    w.u32(a.mask);
    put_sid(w, a.sid);
  }
}

// One ACE of `acl` at the reader's position.
bool parse_ace(ByteReader& r, Ace& a) {
  size_t start = r.offset();
  a.type = r.u8();
  a.flags = r.u8();
  uint16_t size = r.u16();
  if (!r.ok() || size < kAceHeaderSize + 4 || size % 4) return false;
  ByteSpan body = r.bytes(size - kAceHeaderSize);
  if (!r.ok()) return false;
  a.mask = load_le32(body.data());
  if (a.type == ACCESS_ALLOWED_ACE_TYPE || a.type == ACCESS_DENIED_ACE_TYPE) {
    auto sid = parse_sid(body.subspan(4));
    if (!sid) return false;
    a.sid = std::move(*sid);
    return true;
  }
  (void)start;
  // Kept as it came; never matched by the access check.
  a.raw.clear();
  ByteWriter w(a.raw);
  w.u8(a.type);
  w.u8(a.flags);
  w.u16(size);
  w.bytes(body);
  return true;
}

bool is_creator(const Sid& s) { return s == creator_owner_sid() || s == creator_group_sid(); }

// The effective form of an inherited ACE: creator SIDs substituted and
// generic rights mapped (MS-DTYP 2.5.3.4.3).
Ace effective(const Ace& a, uint8_t flags, const Sid& owner, const Sid& group) {
  Ace e = a;
  e.flags = flags;
  e.mask = map_generic_file(a.mask);
  if (a.sid == creator_owner_sid()) e.sid = owner;
  if (a.sid == creator_group_sid()) e.sid = group;
  return e;
}

// `mark` is INHERITED_ACE when the parent's DACL auto-inherits (MS-DTYP
// 2.5.3.4.1 DACL_AUTO_INHERIT, which NTFS passes only for such a parent).
void inherit_ace(const Ace& a, bool dir, const Sid& owner, const Sid& group, uint8_t mark, std::vector<Ace>& out) {
  const bool oi = a.flags & OBJECT_INHERIT_ACE, ci = a.flags & CONTAINER_INHERIT_ACE;
  const bool np = a.flags & NO_PROPAGATE_INHERIT_ACE;
  if (!dir) {
    if (oi) out.push_back(effective(a, mark, owner, group));
    return;
  }
  if (ci) {
    const uint8_t keep = np ? 0 : uint8_t(a.flags & (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE));
    const bool changes = is_creator(a.sid) || (a.mask & kGenericBits);
    if (keep && changes) {
      // Split: an effective ACE for this directory, and the original kept
      // inherit-only for its children.
      out.push_back(effective(a, mark, owner, group));
      Ace io = a;
      io.flags = mark | INHERIT_ONLY_ACE | keep;
      out.push_back(io);
    } else {
      out.push_back(effective(a, uint8_t(mark | keep), owner, group));
    }
  } else if (oi && !np) {
    Ace io = a;  // only for files further down
    io.flags = mark | INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE;
    out.push_back(io);
  }
}

bool inheritable_by(const Ace& a, bool dir) {
  if (!a.raw.empty()) return false;
  if (!dir) return a.flags & OBJECT_INHERIT_ACE;
  return (a.flags & CONTAINER_INHERIT_ACE) || ((a.flags & OBJECT_INHERIT_ACE) && !(a.flags & NO_PROPAGATE_INHERIT_ACE));
}

}  // namespace

// A SID at the start of `b` (MS-DTYP 2.4.2.2); nullopt if malformed.
std::optional<Sid> parse_sid(ByteSpan b) {
  if (b.size() < 8 || b[0] != 1 || b[1] > kMaxSubAuthorities || b.size() < 8 + 4 * size_t(b[1])) return std::nullopt;
  Sid s;
  for (int i = 2; i < 8; ++i) s.authority = (s.authority << 8) | b[i];
  for (size_t i = 0; i < b[1]; ++i) s.sub.push_back(load_le32(&b[8 + 4 * i]));
  return s;
}

void put_sid(ByteWriter& w, const Sid& s) {
  w.u8(s.revision);
  w.u8(uint8_t(s.sub.size()));
  for (int shift = 40; shift >= 0; shift -= 8) w.u8(uint8_t(s.authority >> shift));
  for (uint32_t x : s.sub) w.u32(x);
}

uint32_t map_generic_file(uint32_t m) {
  uint32_t out = m & ~kGenericBits;
  if (m & kGenericRead) out |= 0x00120089;
  if (m & kGenericWrite) out |= 0x00120116;
  if (m & kGenericExecute) out |= 0x001200A0;
  if (m & kGenericAll) out |= kFileAllAccess;
  return out;
}

std::string Sid::to_string() const {
  std::string s = "S-" + std::to_string(revision) + "-" + std::to_string(authority);
  for (uint32_t x : sub) s += "-" + std::to_string(x);
  return s;
}

std::optional<Sid> sid_from_text(std::string_view text) {
  auto parts = parse_sid_text(text);
  if (!parts) return std::nullopt;
  return Sid{1, parts->authority, std::move(parts->sub)};
}

Sid world_sid() { return make_sid(1, {0}); }
Sid creator_owner_sid() { return make_sid(3, {0}); }
Sid creator_group_sid() { return make_sid(3, {1}); }
Sid owner_rights_sid() { return make_sid(3, {4}); }
Sid authenticated_users_sid() { return make_sid(5, {11}); }
Sid unix_user_sid(uint32_t uid) { return make_sid(22, {1, uid}); }
Sid unix_group_sid(uint32_t gid) { return make_sid(22, {2, gid}); }

std::optional<uint32_t> uid_of(const Sid& sid, const Sid& machine_sid) {
  if (sid.authority == 22 && sid.sub.size() == 2 && sid.sub[0] == 1) return sid.sub[1];
  bool machine = sid.authority == machine_sid.authority && sid.sub.size() == machine_sid.sub.size() + 1 &&
                 !machine_sid.sub.empty() && std::equal(machine_sid.sub.begin(), machine_sid.sub.end(), sid.sub.begin());
  if (machine && sid.sub.back() >= kMachineRidBase) return sid.sub.back() - kMachineRidBase;
  return std::nullopt;
}

std::optional<uint32_t> gid_of(const Sid& sid) {
  if (sid.authority == 22 && sid.sub.size() == 2 && sid.sub[0] == 2) return sid.sub[1];
  return std::nullopt;
}

Result<Acl> parse_acl(ByteSpan b) {
  if (b.size() < kAclHeaderSize) return Unexpected(NtStatus::InvalidParameter);
  Acl acl;
  acl.revision = b[0];
  uint16_t size = load_le16(&b[2]), count = load_le16(&b[4]);
  // ACL_REVISION (2) to ACL_REVISION_DS (4), as Windows accepts them
  // (smbcacls -S sends 3).
  if (acl.revision < 2 || acl.revision > 4 || size < kAclHeaderSize || size > b.size())
    return Unexpected(NtStatus::InvalidParameter);
  ByteReader r(b.first(size));
  r.skip(kAclHeaderSize);
  for (uint16_t i = 0; i < count; ++i) {
    Ace a;
    if (!parse_ace(r, a)) return Unexpected(NtStatus::InvalidParameter);
    acl.aces.push_back(std::move(a));
  }
  return acl;
}

Result<SecurityDescriptor> parse(ByteSpan b) {
  if (b.size() < kSdHeaderSize || b[0] != 1) return Unexpected(NtStatus::InvalidParameter);
  SecurityDescriptor sd;
  sd.control = uint16_t(load_le16(&b[2]) | SE_SELF_RELATIVE);
  auto part = [&](size_t field) -> std::optional<ByteSpan> {
    uint32_t off = load_le32(&b[field]);
    if (off == 0) return ByteSpan{};
    if (off < kSdHeaderSize || off >= b.size()) return std::nullopt;
    return b.subspan(off);
  };
  auto owner = part(4), group = part(8), dacl = part(16);
  if (!owner || !group || !dacl) return Unexpected(NtStatus::InvalidParameter);
  if (!owner->empty() && !(sd.owner = parse_sid(*owner))) return Unexpected(NtStatus::InvalidParameter);
  if (!group->empty() && !(sd.group = parse_sid(*group))) return Unexpected(NtStatus::InvalidParameter);
  // The SACL (offset 12) is never stored: skipped unread.
  if ((sd.control & SE_DACL_PRESENT) && !dacl->empty()) {
    auto acl = parse_acl(*dacl);
    if (!acl) return Unexpected(acl.error());
    sd.dacl = std::move(*acl);
  }
  sd.control &= uint16_t(SE_SELF_RELATIVE | SE_DACL_PRESENT | kDaclControl);
  if (!sd.dacl) sd.control &= uint16_t(~kDaclControl);
  return sd;
}

Bytes serialize(const SecurityDescriptor& sd, uint32_t info) {
  Bytes out;
  ByteWriter w(out);
  uint16_t control = SE_SELF_RELATIVE;
  const bool with_dacl = info & DACL_SECURITY_INFORMATION;
  const bool present = sd.dacl || (sd.control & SE_DACL_PRESENT);
  if (with_dacl) control |= uint16_t((sd.dacl ? sd.control & kDaclControl : 0) | (present ? SE_DACL_PRESENT : 0));
  w.u8(1);
  w.u8(0);
  w.u16(control);
  w.zeros(kSdHeaderSize - 4);
  if ((info & OWNER_SECURITY_INFORMATION) && sd.owner) {
    w.patch_u32(4, uint32_t(w.size()));
    put_sid(w, *sd.owner);
  }
  if ((info & GROUP_SECURITY_INFORMATION) && sd.group) {
    w.patch_u32(8, uint32_t(w.size()));
    put_sid(w, *sd.group);
  }
  if (with_dacl && sd.dacl) {
    w.patch_u32(16, uint32_t(w.size()));
    put_acl(w, *sd.dacl);
  }
  return out;
}

uint16_t stored_dacl_control(uint16_t requested, bool canonicalize) {
  const bool auto_inherited = requested & SE_DACL_AUTO_INHERITED;
  const bool required = requested & SE_DACL_AUTO_INHERIT_REQ;
  const bool keep_auto_inherited = auto_inherited && (required || !canonicalize);
  return uint16_t((requested & SE_DACL_PROTECTED) | (keep_auto_inherited ? SE_DACL_AUTO_INHERITED : 0));
}

void map_generic_aces(Acl& acl) {
  for (Ace& a : acl.aces)
    if (a.raw.empty() && !(a.flags & INHERIT_ONLY_ACE)) a.mask = map_generic_file(a.mask);
}

Bytes serialize_acl(const Acl& acl) {
  Bytes out;
  ByteWriter w(out);
  put_acl(w, acl);
  return out;
}

SecurityDescriptor from_mode(const FileStat& st) {
  Bytes b = build_security_descriptor(st, OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
                                              DACL_SECURITY_INFORMATION);
  return *parse(b);  // our own encoding
}

std::optional<uint32_t> exact_mode(const FileStat& st, const SecurityDescriptor& sd) {
  if (!sd.dacl || (sd.control & kDaclControl) || sd.owner != unix_user_sid(st.uid) ||
      sd.group != unix_group_sid(st.gid))
    return std::nullopt;
  auto mode = mode_from_dacl(st, serialize_acl(*sd.dacl));
  if (!mode) return std::nullopt;
  FileStat as_mode = st;
  as_mode.mode = (st.mode & ~07777u) | *mode;
  if (from_mode(as_mode).dacl != sd.dacl) return std::nullopt;  // the mode would say something else
  return *mode;
}

bool has_inheritable(const SecurityDescriptor& parent, bool child_is_directory) {
  if (!parent.dacl) return false;
  return std::any_of(parent.dacl->aces.begin(), parent.dacl->aces.end(),
                     [&](const Ace& a) { return inheritable_by(a, child_is_directory); });
}

SecurityDescriptor create_descriptor(const SecurityDescriptor* parent, const SecurityDescriptor* creator,
                                     bool is_directory, const Sid& owner, const Sid& group,
                                     const std::optional<Acl>& default_dacl) {
  SecurityDescriptor out;
  out.owner = creator && creator->owner ? *creator->owner : owner;
  out.group = creator && creator->group ? *creator->group : group;
  std::vector<Ace> inherited;
  const uint8_t mark = parent && (parent->control & SE_DACL_AUTO_INHERITED) ? INHERITED_ACE : 0;
  if (parent && parent->dacl)
    for (const Ace& a : parent->dacl->aces)
      if (inheritable_by(a, is_directory)) inherit_ace(a, is_directory, *out.owner, *out.group, mark, inherited);
  const bool creator_dacl = creator && (creator->control & SE_DACL_PRESENT);
  if (creator_dacl) {
    // SE_DACL_AUTO_INHERIT_REQ is a request, not a state: never kept.
    out.control = uint16_t(SE_SELF_RELATIVE | SE_DACL_PRESENT |
                           (creator->control & (SE_DACL_PROTECTED | SE_DACL_AUTO_INHERITED)));
    out.dacl = creator->dacl;  // nullopt: the creator asked for a NULL DACL
    if (out.dacl) {
      // MS-DTYP 2.5.3.4.2: the creator's own "inherited" ACEs are not
      // trusted; the parent's are appended when the DACL auto-inherits.
      std::erase_if(out.dacl->aces, [](const Ace& a) { return a.flags & INHERITED_ACE; });
      bool auto_inherit = parent && (parent->control & SE_DACL_AUTO_INHERITED) && !(out.control & SE_DACL_PROTECTED);
      if (auto_inherit) {
        out.dacl->aces.insert(out.dacl->aces.end(), inherited.begin(), inherited.end());
        out.control |= SE_DACL_AUTO_INHERITED;
      }
    }
    return out;
  }
  if (!inherited.empty()) {
    out.control = uint16_t(SE_SELF_RELATIVE | SE_DACL_PRESENT |
                           (parent->control & SE_DACL_AUTO_INHERITED ? SE_DACL_AUTO_INHERITED : 0));
    out.dacl = Acl{2, std::move(inherited)};
    return out;
  }
  out.dacl = default_dacl;
  out.control = uint16_t(SE_SELF_RELATIVE | (default_dacl ? SE_DACL_PRESENT : 0));
  return out;
}

bool Token::has(const Sid& s) const { return std::find(sids.begin(), sids.end(), s) != sids.end(); }

namespace {

struct Evaluation {
  uint32_t granted = 0;
  uint32_t denied = 0;
};

// One pass over the DACL in order (MS-DTYP 2.5.3.2): a right is granted by
// the first ACE that names it for one of the token's SIDs, allow or deny.
Evaluation evaluate(const SecurityDescriptor& sd, const Token& token) {
  Evaluation e;
  const bool is_owner = sd.owner && token.has(*sd.owner);
  bool owner_rights_ace = false;
  for (const Ace& a : sd.dacl->aces)
    owner_rights_ace = owner_rights_ace || (a.raw.empty() && !(a.flags & INHERIT_ONLY_ACE) && a.sid == owner_rights_sid());
  if (is_owner && !owner_rights_ace) e.granted |= kReadControl | kWriteDac;
  for (const Ace& a : sd.dacl->aces) {
    if (!a.raw.empty() || (a.flags & INHERIT_ONLY_ACE)) continue;
    bool applies = token.has(a.sid) || (is_owner && a.sid == owner_rights_sid());
    if (!applies) continue;
    uint32_t mask = map_generic_file(a.mask);
    if (a.type == ACCESS_ALLOWED_ACE_TYPE) e.granted |= mask & ~e.denied;
    else e.denied |= mask & ~e.granted;
  }
  return e;
}

}  // namespace

uint32_t maximal_access(const SecurityDescriptor& sd, const Token& token) {
  if (!sd.dacl) return kFileAllAccess;  // a NULL DACL: no policy
  return evaluate(sd, token).granted & kFileAllAccess;
}

std::optional<uint32_t> access_check(const SecurityDescriptor& sd, const Token& token, uint32_t desired) {
  desired = map_generic_file(desired);
  const bool maximum = desired & kMaximumAllowed;
  desired &= ~kMaximumAllowed;
  uint32_t granted = maximal_access(sd, token);
  if (desired & ~granted) return std::nullopt;
  if (maximum) return desired | granted;
  return desired;
}

}  // namespace ringsmb::vfs::ntacl
