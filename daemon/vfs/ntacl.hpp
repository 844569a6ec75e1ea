// NT security descriptors (MS-DTYP 2.4.2 SID, 2.4.4 ACE, 2.4.5 ACL, 2.4.6
// SECURITY_DESCRIPTOR): the parsed form, the self-relative encoding, the
// SID <-> Unix id mapping, inheritance at create (MS-DTYP 2.5.3.4) and the
// access check (MS-DTYP 2.5.3.2). Pure functions: no I/O here (the xattr
// store is vfs/ntacl_store.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::vfs::ntacl {

// MS-DTYP 2.4.7 SECURITY_INFORMATION.
enum : uint32_t {
  OWNER_SECURITY_INFORMATION = 0x1,
  GROUP_SECURITY_INFORMATION = 0x2,
  DACL_SECURITY_INFORMATION = 0x4,
  SACL_SECURITY_INFORMATION = 0x8,
};
// MS-DTYP 2.4.6 Control.
enum : uint16_t {
  SE_OWNER_DEFAULTED = 0x0001,
  SE_GROUP_DEFAULTED = 0x0002,
  SE_DACL_PRESENT = 0x0004,
  SE_DACL_DEFAULTED = 0x0008,
  SE_SACL_PRESENT = 0x0010,
  SE_DACL_AUTO_INHERIT_REQ = 0x0100,
  SE_DACL_AUTO_INHERITED = 0x0400,
  SE_DACL_PROTECTED = 0x1000,
  SE_SELF_RELATIVE = 0x8000,
};
// MS-DTYP 2.4.4.1 AceType (the ones kept) and AceFlags.
enum : uint8_t {
  ACCESS_ALLOWED_ACE_TYPE = 0x0,
  ACCESS_DENIED_ACE_TYPE = 0x1,
  OBJECT_INHERIT_ACE = 0x01,
  CONTAINER_INHERIT_ACE = 0x02,
  NO_PROPAGATE_INHERIT_ACE = 0x04,
  INHERIT_ONLY_ACE = 0x08,
  INHERITED_ACE = 0x10,
};
// MS-DTYP 2.4.3 access mask bits the algorithms need.
enum : uint32_t {
  kFileReadData = 0x1,
  kFileWriteData = 0x2,  // FILE_ADD_FILE on a directory
  kFileAppendData = 0x4,  // FILE_ADD_SUBDIRECTORY on a directory
  kFileExecute = 0x20,
  kFileDeleteChild = 0x40,
  kFileReadAttributes = 0x80,
  kDelete = 0x00010000,
  kReadControl = 0x00020000,
  kWriteDac = 0x00040000,
  kWriteOwner = 0x00080000,
  kSynchronize = 0x00100000,
  kAccessSystemSecurity = 0x01000000,
  kMaximumAllowed = 0x02000000,
  kGenericAll = 0x10000000,
  kGenericExecute = 0x20000000,
  kGenericWrite = 0x40000000,
  kGenericRead = 0x80000000,
  kFileAllAccess = 0x001F01FF,
};
// The file generic mapping (MS-SMB2 3.3.5.9 / MS-DTYP 2.4.3).
uint32_t map_generic_file(uint32_t mask);

struct Sid {
  uint8_t revision = 1;
  uint64_t authority = 0;       // 48 bits
  std::vector<uint32_t> sub;    // at most 15
  bool operator==(const Sid&) const = default;
  size_t size() const { return 8 + 4 * sub.size(); }
  std::string to_string() const;  // S-1-5-21-...
};

struct Ace {
  uint8_t type = ACCESS_ALLOWED_ACE_TYPE;
  uint8_t flags = 0;
  uint32_t mask = 0;
  Sid sid;
  Bytes raw;  // a type we do not interpret (object, callback, audit ACEs): kept byte for byte
  bool operator==(const Ace&) const = default;
};

struct Acl {
  uint8_t revision = 2;
  std::vector<Ace> aces;
  bool operator==(const Acl&) const = default;
};

struct SecurityDescriptor {
  uint16_t control = SE_SELF_RELATIVE;
  std::optional<Sid> owner, group;
  // nullopt: no DACL; with SE_DACL_PRESENT in control a NULL DACL, which
  // grants everything. A file's descriptor always has SE_DACL_PRESENT.
  std::optional<Acl> dacl;
  bool operator==(const SecurityDescriptor&) const = default;
};

// Well-known SIDs.
Sid world_sid();          // S-1-1-0 Everyone
Sid creator_owner_sid();  // S-1-3-0
Sid creator_group_sid();  // S-1-3-1
Sid owner_rights_sid();   // S-1-3-4
Sid authenticated_users_sid();  // S-1-5-11

// The mapping of Unix ids to SIDs (docs/security.md, "SIDs"): users are
// S-1-22-1-<uid> ("Unix User\name"), groups S-1-22-2-<gid> ("Unix
// Group\name"), as Samba names unmapped Unix accounts. A user also has the
// account SID of the machine domain, <machine SID>-<1000 + uid>, which SAMR
// lists and LSA's LookupNames of a bare name answers; both name the same
// uid everywhere (lsarpc, samr, the access check, chown).
Sid unix_user_sid(uint32_t uid);
Sid unix_group_sid(uint32_t gid);
inline constexpr uint32_t kMachineRidBase = 1000;  // = rpc::kRidBase
std::optional<uint32_t> uid_of(const Sid& sid, const Sid& machine_sid);
// "S-1-5-21-..." (common/sid_text.hpp); nullopt when it is not a SID.
std::optional<Sid> sid_from_text(std::string_view text);
std::optional<uint32_t> gid_of(const Sid& sid);
// A SID at the start of `b` (MS-DTYP 2.4.2.2); nullopt if malformed. And
// its encoding (Sid::size() bytes).
std::optional<Sid> parse_sid(ByteSpan b);
void put_sid(ByteWriter& w, const Sid& s);

// Parses a self-relative descriptor (MS-DTYP 2.4.6): every offset and size
// inside `sd`, revisions, ACE sizes, at most 15 sub-authorities. A SACL is
// skipped (never stored). INVALID_SECURITY_DESCR-style failures return
// InvalidParameter, which is what MS-FSA 2.1.5.16 asks of SET_INFO.
// SE_DACL_PRESENT without a DACL offset is a NULL DACL (dacl nullopt).

Result<SecurityDescriptor> parse(ByteSpan sd);
Result<Acl> parse_acl(ByteSpan acl);
// The self-relative encoding: owner, group, DACL, with the parts `info`
// selects (OWNER/GROUP/DACL_SECURITY_INFORMATION). A descriptor whose
// Control has SE_DACL_PRESENT but no DACL encodes a NULL DACL: present,
// offset 0 (what a file given a NULL DACL reads back, MS-DTYP 2.4.6).
Bytes serialize(const SecurityDescriptor& sd, uint32_t info = OWNER_SECURITY_INFORMATION |
                                                              GROUP_SECURITY_INFORMATION |
                                                              DACL_SECURITY_INFORMATION);

// The DACL control bits a DACL set by a client (SET_INFO, or a creator's
// SecD) leaves on the file. SE_DACL_AUTO_INHERIT_REQ asks for automatic
// inheritance and is never stored; SE_DACL_AUTO_INHERITED stays only when
// it came together with it (Windows: the DACL is then marked as computed by
// auto-inheritance; smb2.acls.INHERITFLAGS), unless `canonicalize` is off
// (the share's "acl flag inherited canonicalization = no", as Samba's: kept
// as given); SE_DACL_PROTECTED stays. `requested` is the client's Control.
uint16_t stored_dacl_control(uint16_t requested, bool canonicalize);

// Generic rights in the ACEs that apply to the object itself (not
// inherit-only) mapped to file rights, as Windows stores a DACL it is given.
void map_generic_aces(Acl& acl);

// The self-relative encoding of an ACL alone (MS-DTYP 2.4.5).
Bytes serialize_acl(const Acl& acl);

// The descriptor a file without a stored one has: owner, group and a DACL
// derived from the mode (vfs::build_security_descriptor).
SecurityDescriptor from_mode(const FileStat& st);

// The mode whose derived descriptor (from_mode) is exactly `sd` for a file
// owned by `st`'s uid/gid, or nullopt: then the descriptor must be stored.
std::optional<uint32_t> exact_mode(const FileStat& st, const SecurityDescriptor& sd);

// Whether the parent's DACL has an ACE a new child would inherit.
bool has_inheritable(const SecurityDescriptor& parent, bool child_is_directory);
// MS-DTYP 2.5.3.4 CreateSecurityDescriptor for a file-system object:
// owner and group from the creator's token (`owner`, `group`) unless
// `creator` names them; the DACL is the creator's when it supplies one,
// else the parent's inheritable ACEs (container/object inherit,
// inherit-only, no-propagate, CREATOR OWNER/GROUP substituted, generic
// rights mapped in the effective ACEs), else `default_dacl`.
SecurityDescriptor create_descriptor(const SecurityDescriptor* parent, const SecurityDescriptor* creator,
                                     bool is_directory, const Sid& owner, const Sid& group,
                                     const std::optional<Acl>& default_dacl);

// The user's side of an access check (MS-DTYP 2.5.2 Token, the parts used).
struct Token {
  std::vector<Sid> sids;  // user first, then groups
  bool has(const Sid& s) const;
};

// MS-DTYP 2.5.3.2: the rights of `desired` (generic bits mapped,
// MAXIMUM_ALLOWED: every right the DACL grants) that `sd` grants `token`.
// Denied: nullopt. The owner is implicitly granted READ_CONTROL and
// WRITE_DAC unless an OWNER RIGHTS (S-1-3-4) ACE says otherwise.
std::optional<uint32_t> access_check(const SecurityDescriptor& sd, const Token& token, uint32_t desired);
// Every right `sd` grants `token` (the MAXIMUM_ALLOWED result).
uint32_t maximal_access(const SecurityDescriptor& sd, const Token& token);

}  // namespace ringsmb::vfs::ntacl
