#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "vfs/file_info.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

constexpr uint32_t kOwner = 1, kGroup = 2, kDacl = 4, kSacl = 8;

FileStat stat_with(uint32_t mode, bool dir = false) {
  FileStat st;
  st.mode = (dir ? S_IFDIR : S_IFREG) | mode;
  st.is_directory = dir;
  st.uid = 1000;
  st.gid = 0x12345;
  return st;
}

// Parses a SID at `off`; returns "S-1-a-b-..." and its size.
std::string sid_at(const Bytes& b, size_t off, size_t* size = nullptr) {
  REQUIRE(off + 8 <= b.size());
  REQUIRE(b[off] == 1);
  const uint8_t count = b[off + 1];
  uint64_t auth = 0;
  for (int i = 0; i < 6; ++i) auth = (auth << 8) | b[off + 2 + i];
  REQUIRE(off + 8 + 4 * count <= b.size());
  std::string s = "S-1-" + std::to_string(auth);
  for (uint8_t i = 0; i < count; ++i) s += "-" + std::to_string(load_le32(&b[off + 8 + 4 * i]));
  if (size) *size = 8 + 4 * count;
  return s;
}

struct ParsedAce {
  std::string sid;
  uint32_t mask;
};

std::vector<ParsedAce> parse_dacl(const Bytes& b, size_t off) {
  REQUIRE(off + 8 <= b.size());
  CHECK(b[off] == 2);  // ACL_REVISION
  const uint16_t acl_size = load_le16(&b[off + 2]);
  const uint16_t count = load_le16(&b[off + 4]);
  CHECK(off + acl_size == b.size());
  std::vector<ParsedAce> aces;
  size_t p = off + 8;
  for (uint16_t i = 0; i < count; ++i) {
    REQUIRE(p + 8 <= b.size());
    CHECK(b[p] == 0);  // ACCESS_ALLOWED_ACE_TYPE
    const uint16_t ace_size = load_le16(&b[p + 2]);
    CHECK(ace_size % 4 == 0);
    size_t sid_size = 0;
    aces.push_back({sid_at(b, p + 8, &sid_size), load_le32(&b[p + 4])});
    CHECK(ace_size == 8 + sid_size);
    p += ace_size;
  }
  CHECK(p == off + acl_size);
  return aces;
}

}  // namespace

TEST_CASE("security descriptor with owner, group and DACL", "[vfs]") {
  const Bytes sd = build_security_descriptor(stat_with(0754), kOwner | kGroup | kDacl);
  REQUIRE(sd.size() >= 20);
  CHECK(sd[0] == 1);
  CHECK(load_le16(&sd[2]) == (0x8000 | 0x0004));
  const uint32_t owner_off = load_le32(&sd[4]);
  const uint32_t group_off = load_le32(&sd[8]);
  CHECK(load_le32(&sd[12]) == 0);  // no SACL
  const uint32_t dacl_off = load_le32(&sd[16]);
  CHECK(owner_off == 20);
  CHECK(sid_at(sd, owner_off) == "S-1-22-1-1000");
  CHECK(group_off == 36);
  CHECK(sid_at(sd, group_off) == "S-1-22-2-74565");
  CHECK(dacl_off == 52);
  const auto aces = parse_dacl(sd, dacl_off);
  REQUIRE(aces.size() == 3);
  CHECK(aces[0].sid == "S-1-22-1-1000");
  CHECK(aces[1].sid == "S-1-22-2-74565");
  CHECK(aces[2].sid == "S-1-1-0");
  // rwx owner: generic read/write/execute plus ownership rights.
  CHECK((aces[0].mask & 0x1201BF) == 0x1201BF);
  CHECK((aces[0].mask & 0x000D0000) == 0x000D0000);  // DELETE, WRITE_DAC, WRITE_OWNER
  // r-x group: read and execute, no write.
  CHECK((aces[1].mask & 0x1200A9) == 0x1200A9);
  CHECK((aces[1].mask & 0x2) == 0);
  CHECK((aces[1].mask & 0x000C0000) == 0);
  // r-- everyone: read, no write or execute.
  CHECK((aces[2].mask & 0x120089) == 0x120089);
  CHECK((aces[2].mask & 0x22) == 0);
  CHECK(sd.size() == 52 + 8 + 3 * 8 + 16 + 16 + 12);
}

TEST_CASE("security descriptor parts follow additional_info", "[vfs]") {
  Bytes sd = build_security_descriptor(stat_with(0644), kGroup);
  CHECK(sd.size() == 20 + 16);
  CHECK(load_le16(&sd[2]) == 0x8000);
  CHECK(load_le32(&sd[4]) == 0);
  CHECK(load_le32(&sd[8]) == 20);
  CHECK(load_le32(&sd[16]) == 0);

  sd = build_security_descriptor(stat_with(0644), kDacl);
  CHECK(load_le16(&sd[2]) == 0x8004);
  CHECK(load_le32(&sd[16]) == 20);
  CHECK(parse_dacl(sd, 20).size() == 3);

  sd = build_security_descriptor(stat_with(0644), kSacl);
  CHECK(sd.size() == 20);
  sd = build_security_descriptor(stat_with(0644), 0);
  CHECK(sd.size() == 20);
}

TEST_CASE("writable directories grant FILE_DELETE_CHILD", "[vfs]") {
  const Bytes sd = build_security_descriptor(stat_with(0750, true), kDacl);
  const auto aces = parse_dacl(sd, load_le32(&sd[16]));
  REQUIRE(aces.size() == 3);
  CHECK((aces[0].mask & 0x40) != 0);
  CHECK((aces[1].mask & 0x40) == 0);
  CHECK((aces[2].mask & 0x1) == 0);  // others have no bits: no read
  const Bytes file_sd = build_security_descriptor(stat_with(0777), kDacl);
  CHECK((parse_dacl(file_sd, 20)[0].mask & 0x40) == 0);
}
