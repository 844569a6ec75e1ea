#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "vfs/ntacl.hpp"
#include "vfs/ntacl_store.hpp"
#include "vfs/security_descriptor.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;
using namespace ringsmb::vfs::ntacl;

namespace {

constexpr uint32_t kAlice = 1001, kBob = 1002, kStaff = 100;

FileStat stat_of(uint32_t mode, bool dir = false, uint32_t uid = kAlice, uint32_t gid = kStaff) {
  FileStat st;
  st.mode = (dir ? S_IFDIR : S_IFREG) | mode;
  st.is_directory = dir;
  st.uid = uid;
  st.gid = gid;
  return st;
}

Ace ace(uint8_t type, uint8_t flags, uint32_t mask, Sid sid) { return Ace{type, flags, mask, std::move(sid), {}}; }
Ace allow(uint32_t mask, Sid sid, uint8_t flags = 0) { return ace(ACCESS_ALLOWED_ACE_TYPE, flags, mask, std::move(sid)); }
Ace deny(uint32_t mask, Sid sid, uint8_t flags = 0) { return ace(ACCESS_DENIED_ACE_TYPE, flags, mask, std::move(sid)); }

SecurityDescriptor sd_with(std::vector<Ace> aces, uint32_t owner = kAlice) {
  SecurityDescriptor sd;
  sd.control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
  sd.owner = unix_user_sid(owner);
  sd.group = unix_group_sid(kStaff);
  sd.dacl = Acl{2, std::move(aces)};
  return sd;
}

Token token_of(uint32_t uid, std::vector<uint32_t> gids = {kStaff}) {
  Token t;
  t.sids.push_back(unix_user_sid(uid));
  for (uint32_t g : gids) t.sids.push_back(unix_group_sid(g));
  t.sids.push_back(world_sid());
  return t;
}

const Sid kMachine{1, 5, {21, 1, 2, 3}};

}  // namespace

TEST_CASE("ntacl: a descriptor survives serialize and parse", "[ntacl]") {
  SecurityDescriptor sd = sd_with({allow(0x1F01FF, unix_user_sid(kAlice), OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE),
                                   deny(kFileWriteData, unix_user_sid(kBob)), allow(0x1200A9, world_sid())});
  sd.control |= SE_DACL_PROTECTED;
  Bytes b = serialize(sd);
  auto back = parse(b);
  REQUIRE(back);
  CHECK(*back == sd);
  // Each part alone.
  auto owner_only = parse(serialize(sd, OWNER_SECURITY_INFORMATION));
  REQUIRE(owner_only);
  CHECK(owner_only->owner == sd.owner);
  CHECK(!owner_only->group);
  CHECK(!owner_only->dacl);
  CHECK((owner_only->control & SE_DACL_PRESENT) == 0);
}

TEST_CASE("ntacl: unknown ACE types are kept byte for byte", "[ntacl]") {
  SecurityDescriptor sd = sd_with({allow(1, world_sid())});
  Bytes b = serialize(sd);
  // Append a SYSTEM_AUDIT_ACE (type 2) to the DACL by hand.
  const uint32_t dacl_off = load_le32(&b[16]);
  const Bytes audit = {2, 0, 20, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
  b.insert(b.end(), audit.begin(), audit.end());
  store_le16(&b[dacl_off + 2], uint16_t(load_le16(&b[dacl_off + 2]) + audit.size()));
  store_le16(&b[dacl_off + 4], 2);
  auto back = parse(b);
  REQUIRE(back);
  REQUIRE(back->dacl->aces.size() == 2);
  CHECK(back->dacl->aces[1].raw == audit);
  CHECK(serialize(*back) == b);
  // ...and never match in an access check.
  CHECK(!access_check(*back, token_of(kBob), kFileWriteData));
}

TEST_CASE("ntacl: malformed descriptors are refused", "[ntacl]") {
  Bytes good = serialize(sd_with({allow(1, world_sid())}));
  REQUIRE(parse(good));
  for (size_t n = 0; n < good.size(); ++n) {
    // Every truncation that cuts into a part fails cleanly.
    Bytes cut(good.begin(), good.begin() + ptrdiff_t(n));
    auto r = parse(cut);
    if (r) CHECK(n >= 20);
  }
  Bytes bad_rev = good;
  bad_rev[0] = 2;
  CHECK(parse(bad_rev).error() == NtStatus::InvalidParameter);
  Bytes bad_owner = good;
  store_le32(&bad_owner[4], 10);  // inside the header
  CHECK(!parse(bad_owner));
  Bytes many_subs = good;
  many_subs[load_le32(&good[4]) + 1] = 16;  // 16 sub-authorities
  CHECK(!parse(many_subs));
  Bytes ace_size = good;
  const uint32_t dacl = load_le32(&good[16]);
  store_le16(&ace_size[dacl + 8 + 2], 6);  // an ACE smaller than its header and mask
  CHECK(!parse(ace_size));
  // ACL revisions 2 to 4 are accepted (smbcacls -S sends 3), others not.
  for (uint8_t rev : {uint8_t(1), uint8_t(2), uint8_t(3), uint8_t(4), uint8_t(5)}) {
    Bytes acl_rev = good;
    acl_rev[dacl] = rev;
    CHECK(parse(acl_rev).has_value() == (rev >= 2 && rev <= 4));
  }
}

TEST_CASE("ntacl: SIDs of Unix ids and the machine account alias", "[ntacl]") {
  CHECK(unix_user_sid(1001).to_string() == "S-1-22-1-1001");
  CHECK(unix_group_sid(100).to_string() == "S-1-22-2-100");
  CHECK(uid_of(unix_user_sid(1001), kMachine) == 1001u);
  Sid account = kMachine;
  account.sub.push_back(kMachineRidBase + 1001);
  CHECK(uid_of(account, kMachine) == 1001u);
  account.sub.back() = 513;  // "None": a group, no user
  CHECK(!uid_of(account, kMachine));
  CHECK(!uid_of(unix_group_sid(5), kMachine));
  CHECK(gid_of(unix_group_sid(5)) == 5u);
  CHECK(!gid_of(world_sid()));
}

TEST_CASE("ntacl: access check in DACL order, deny first wins", "[ntacl]") {
  const uint32_t rw = kFileReadData | kFileWriteData;
  auto sd = sd_with({deny(kFileWriteData, unix_user_sid(kBob)), allow(rw, world_sid())});
  CHECK(access_check(sd, token_of(kBob), kFileReadData) == kFileReadData);
  CHECK(!access_check(sd, token_of(kBob), rw));
  CHECK(access_check(sd, token_of(kAlice, {7}), rw) == rw);
  // An allow before the deny wins for the bits it grants.
  auto allow_first = sd_with({allow(rw, world_sid()), deny(kFileWriteData, unix_user_sid(kBob))});
  CHECK(access_check(allow_first, token_of(kBob), rw) == rw);
  // Group membership counts.
  auto by_group = sd_with({deny(kFileReadData, unix_group_sid(42)), allow(rw, world_sid())});
  CHECK(!access_check(by_group, token_of(kBob, {42}), kFileReadData));
  CHECK(access_check(by_group, token_of(kBob, {43}), kFileReadData));
  // Inherit-only ACEs do not apply to the object itself.
  auto io = sd_with({deny(kFileReadData, world_sid(), INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE), allow(rw, world_sid())});
  CHECK(access_check(io, token_of(kBob), kFileReadData));
}

TEST_CASE("ntacl: MAXIMUM_ALLOWED, generic rights, owner rights, NULL and empty DACLs", "[ntacl]") {
  auto sd = sd_with({deny(kFileWriteData, unix_user_sid(kBob)), allow(kGenericRead | kGenericWrite, world_sid())});
  const uint32_t gr_gw = map_generic_file(kGenericRead | kGenericWrite);
  CHECK(access_check(sd, token_of(kBob), kMaximumAllowed) == (gr_gw & ~kFileWriteData));
  CHECK(!access_check(sd, token_of(kBob), kMaximumAllowed | kFileWriteData));
  CHECK(access_check(sd, token_of(kBob), kGenericRead) == map_generic_file(kGenericRead));
  // The owner may always read and change the DACL...
  auto empty = sd_with({});
  CHECK(!access_check(empty, token_of(kBob), kReadControl));
  CHECK(access_check(empty, token_of(kAlice), kReadControl | kWriteDac));
  CHECK(!access_check(empty, token_of(kAlice), kFileReadData));
  // ...unless an OWNER RIGHTS ACE says what the owner gets.
  auto owner_rights = sd_with({allow(kFileReadData, owner_rights_sid())});
  CHECK(!access_check(owner_rights, token_of(kAlice), kWriteDac));
  CHECK(access_check(owner_rights, token_of(kAlice), kFileReadData));
  CHECK(!access_check(owner_rights, token_of(kBob), kFileReadData));
  // A NULL DACL grants everything.
  SecurityDescriptor null_dacl = sd_with({});
  null_dacl.dacl.reset();
  CHECK(access_check(null_dacl, token_of(kBob), kMaximumAllowed) == kFileAllAccess);
}

TEST_CASE("ntacl: inheritance into files and directories (MS-DTYP 2.5.3.4)", "[ntacl]") {
  const Sid owner = unix_user_sid(kBob), group = unix_group_sid(7);
  auto parent = sd_with({
      allow(kFileReadData, unix_user_sid(1), OBJECT_INHERIT_ACE),
      allow(kFileWriteData, unix_user_sid(2), CONTAINER_INHERIT_ACE),
      allow(kGenericAll, creator_owner_sid(), OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE | INHERIT_ONLY_ACE),
      allow(kFileExecute, unix_user_sid(3), OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE | NO_PROPAGATE_INHERIT_ACE),
      allow(kDelete, unix_user_sid(4)),  // not inheritable
  });
  parent.control |= SE_DACL_AUTO_INHERITED;
  CHECK(has_inheritable(parent, false));
  SecurityDescriptor file = create_descriptor(&parent, nullptr, false, owner, group, std::nullopt);
  CHECK(file.owner == owner);
  CHECK(file.group == group);
  CHECK((file.control & SE_DACL_AUTO_INHERITED) != 0);
  REQUIRE(file.dacl);
  std::vector<Ace> want_file = {allow(kFileReadData, unix_user_sid(1), INHERITED_ACE),
                                allow(kFileAllAccess, owner, INHERITED_ACE),
                                allow(kFileExecute, unix_user_sid(3), INHERITED_ACE)};
  CHECK(file.dacl->aces == want_file);

  SecurityDescriptor dir = create_descriptor(&parent, nullptr, true, owner, group, std::nullopt);
  REQUIRE(dir.dacl);
  std::vector<Ace> want_dir = {
      allow(kFileReadData, unix_user_sid(1), INHERITED_ACE | INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE),
      allow(kFileWriteData, unix_user_sid(2), INHERITED_ACE | CONTAINER_INHERIT_ACE),
      allow(kFileAllAccess, owner, INHERITED_ACE),
      allow(kGenericAll, creator_owner_sid(),
            INHERITED_ACE | INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE),
      allow(kFileExecute, unix_user_sid(3), INHERITED_ACE),  // no-propagate: stops here
  };
  CHECK(dir.dacl->aces == want_dir);

  // A parent DACL that does not auto-inherit passes its ACEs on unmarked.
  parent.control &= uint16_t(~SE_DACL_AUTO_INHERITED);
  SecurityDescriptor plain = create_descriptor(&parent, nullptr, false, owner, group, std::nullopt);
  REQUIRE(plain.dacl);
  REQUIRE(plain.dacl->aces.size() == want_file.size());
  for (const Ace& a : plain.dacl->aces) CHECK(a.flags == 0);
  CHECK((plain.control & SE_DACL_AUTO_INHERITED) == 0);
}

TEST_CASE("ntacl: nothing to inherit gives the default DACL; a creator's DACL wins", "[ntacl]") {
  const Sid owner = unix_user_sid(kBob), group = unix_group_sid(7);
  auto plain = sd_with({allow(kFileReadData, world_sid())});
  CHECK(!has_inheritable(plain, false));
  Acl fallback{2, {allow(1, owner)}};
  SecurityDescriptor made = create_descriptor(&plain, nullptr, false, owner, group, fallback);
  CHECK(made.dacl == fallback);
  // Only OI without CI is not inherited by a directory when it does not propagate.
  auto oi_np = sd_with({allow(1, world_sid(), OBJECT_INHERIT_ACE | NO_PROPAGATE_INHERIT_ACE)});
  CHECK(!has_inheritable(oi_np, true));
  CHECK(has_inheritable(oi_np, false));
  // The creator's explicit DACL, its "inherited" ACEs dropped, the parent's added when auto-inherited.
  auto parent = sd_with({allow(kFileExecute, world_sid(), OBJECT_INHERIT_ACE)});
  parent.control |= SE_DACL_AUTO_INHERITED;
  auto creator = sd_with({allow(kFileReadData, owner), allow(2, world_sid(), INHERITED_ACE)});
  creator.owner.reset();
  SecurityDescriptor c = create_descriptor(&parent, &creator, false, owner, group, fallback);
  std::vector<Ace> want = {allow(kFileReadData, owner), allow(kFileExecute, world_sid(), INHERITED_ACE)};
  CHECK(c.dacl->aces == want);
  CHECK(c.owner == owner);
  creator.control |= SE_DACL_PROTECTED;
  c = create_descriptor(&parent, &creator, false, owner, group, fallback);
  CHECK(c.dacl->aces.size() == 1);
}

TEST_CASE("ntacl: the mode says exactly what its own descriptor says, nothing else", "[ntacl]") {
  FileStat st = stat_of(0640);
  SecurityDescriptor sd = from_mode(st);
  CHECK(exact_mode(st, sd) == 0640u);
  FileStat other = stat_of(0755);
  CHECK(exact_mode(other, from_mode(st)) == 0640u);  // applied as a chmod
  SecurityDescriptor with_deny = sd;
  with_deny.dacl->aces.insert(with_deny.dacl->aces.begin(), deny(kFileWriteData, unix_user_sid(kBob)));
  CHECK(!exact_mode(st, with_deny));
  SecurityDescriptor inherited = sd;
  for (Ace& a : inherited.dacl->aces) a.flags = INHERITED_ACE;
  CHECK(!exact_mode(st, inherited));
  SecurityDescriptor other_owner = sd;
  other_owner.owner = unix_user_sid(kBob);
  CHECK(!exact_mode(st, other_owner));
}

TEST_CASE("ntacl: the rights the mode gives are its descriptor's, for every mode and role", "[ntacl]") {
  // mode_maximal_access is computed from the mode for every CREATE of an
  // existing file; it must not drift from the descriptor QUERY_INFO shows.
  const uint32_t kOther = 100 + 7;
  for (bool dir : {false, true}) {
    for (uint32_t mode = 0; mode <= 0777; ++mode) {
      FileStat st = stat_of(mode, dir);
      const SecurityDescriptor sd = from_mode(st);
      INFO("mode " << std::oct << mode << (dir ? " directory" : " file"));
      // Not the owner: Everyone, and the group ACE for a member.
      CHECK(mode_maximal_access(st, {false, true}) == maximal_access(sd, token_of(kBob, {kStaff})));
      CHECK(mode_maximal_access(st, {false, false}) == maximal_access(sd, token_of(kBob, {kOther})));
      // The owner: full control, a superset of what its ACE says.
      const uint32_t owner = mode_maximal_access(st, {true, true});
      CHECK(owner == kFileAllAccess);
      CHECK((maximal_access(sd, token_of(kAlice, {kStaff})) & ~owner) == 0);
    }
  }
  // Nothing for anyone but the owner on a 0600 file but reading its
  // attributes and descriptor.
  CHECK(mode_maximal_access(stat_of(0600), {false, true}) == (kReadControl | kFileReadAttributes | kSynchronize));
}

TEST_CASE("ntacl: the xattr value has a version byte and fails closed", "[ntacl]") {
  SecurityDescriptor sd = sd_with({allow(kFileReadData, world_sid())});
  Bytes v = encode_ntacl_value(sd);
  REQUIRE(v[0] == kNtAclVersion);
  CHECK(*decode_ntacl_value(v) == sd);
  Bytes future = v;
  future[0] = kNtAclVersion + 1;
  SharedSd closed = decode_ntacl_value(future);
  REQUIRE(closed->dacl);
  CHECK(closed->dacl->aces.empty());  // grants nobody anything
  CHECK(!access_check(*closed, token_of(kAlice), kFileReadData));
  CHECK(decode_ntacl_value(Bytes{kNtAclVersion, 1, 2})->dacl->aces.empty());
}

TEST_CASE("ntacl: the store caches per inode and birth time, bounded", "[ntacl]") {
  NtAclStore store(32);
  FileStat st = stat_of(0644);
  st.device = 1;
  st.file_id = 77;
  st.creation_time = 5;
  auto sd = std::make_shared<const SecurityDescriptor>(sd_with({}));
  store.remember(st, sd);
  CHECK(store.lookup(-1, st) == sd);  // a hit reads nothing (fd -1 would fail)
  FileStat reused = st;
  reused.creation_time = 6;  // another file got the inode number
  CHECK(store.lookup(-1, reused) == nullptr);
  for (uint64_t i = 0; i < 1000; ++i) {
    FileStat s = st;
    s.file_id = 1000 + i;
    store.remember(s, nullptr);
  }
  CHECK(store.size() <= 32);
}

TEST_CASE("ntacl: a NULL DACL reads back present without a DACL", "[ntacl]") {
  SecurityDescriptor null_dacl;
  null_dacl.control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
  null_dacl.owner = unix_user_sid(kAlice);
  Bytes b = serialize(null_dacl);
  CHECK((load_le16(&b[2]) & SE_DACL_PRESENT) != 0);
  CHECK(load_le32(&b[16]) == 0);  // no DACL offset
  auto back = parse(b);
  REQUIRE(back);
  CHECK((back->control & SE_DACL_PRESENT) != 0);
  CHECK(!back->dacl);
  CHECK(access_check(*back, token_of(kBob), kFileAllAccess));  // grants everything
  // Without SE_DACL_PRESENT there is no DACL at all.
  SecurityDescriptor none = null_dacl;
  none.control = SE_SELF_RELATIVE;
  CHECK((load_le16(&serialize(none)[2]) & SE_DACL_PRESENT) == 0);
}

TEST_CASE("ntacl: the DACL control bits a client's DACL leaves (canonicalization)", "[ntacl]") {
  // SE_DACL_AUTO_INHERITED only together with SE_DACL_AUTO_INHERIT_REQ,
  // which is never kept; SE_DACL_PROTECTED always (smb2.acls.INHERITFLAGS).
  CHECK(stored_dacl_control(0, true) == 0);
  CHECK(stored_dacl_control(SE_DACL_AUTO_INHERITED, true) == 0);
  CHECK(stored_dacl_control(SE_DACL_AUTO_INHERIT_REQ, true) == 0);
  CHECK(stored_dacl_control(SE_DACL_AUTO_INHERITED | SE_DACL_AUTO_INHERIT_REQ, true) == SE_DACL_AUTO_INHERITED);
  CHECK(stored_dacl_control(SE_DACL_PROTECTED | SE_DACL_AUTO_INHERIT_REQ, true) == SE_DACL_PROTECTED);
  CHECK(stored_dacl_control(SE_DACL_PRESENT | SE_SELF_RELATIVE, true) == 0);
  // Without canonicalization SE_DACL_AUTO_INHERITED stays as sent.
  CHECK(stored_dacl_control(SE_DACL_AUTO_INHERITED, false) == SE_DACL_AUTO_INHERITED);
  CHECK(stored_dacl_control(SE_DACL_AUTO_INHERIT_REQ, false) == 0);
}

TEST_CASE("ntacl: a creator's SE_DACL_AUTO_INHERIT_REQ is never kept", "[ntacl]") {
  const Sid owner = unix_user_sid(kBob), group = unix_group_sid(7);
  auto creator = sd_with({allow(kFileReadData, owner)});
  creator.control |= SE_DACL_AUTO_INHERIT_REQ | SE_DACL_PROTECTED;
  SecurityDescriptor made = create_descriptor(nullptr, &creator, false, owner, group, std::nullopt);
  CHECK((made.control & SE_DACL_AUTO_INHERIT_REQ) == 0);
  CHECK((made.control & SE_DACL_PROTECTED) != 0);
}
