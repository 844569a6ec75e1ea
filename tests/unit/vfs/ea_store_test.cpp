// vfs::ea_store: the FILE_FULL_EA_INFORMATION and FILE_GET_EA_INFORMATION
// lists (parse, encode, the errors MS-FSCC gives bad ones) and the
// trusted.ringsmb.ea.* store (on a scratch file, where this process may use
// trusted.* xattrs).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "temp_dir.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/stream_store.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

Bytes full_list(const std::vector<Ea>& eas) {
  Bytes out;
  size_t previous = SIZE_MAX;
  for (const Ea& ea : eas) append_full_ea(out, ea, &previous);
  return out;
}

// One FILE_GET_EA_INFORMATION entry per name, 4-aligned.
Bytes get_list(const std::vector<std::string>& names) {
  Bytes out;
  size_t previous = SIZE_MAX;
  for (const std::string& name : names) {
    if (previous != SIZE_MAX) {
      out.resize((out.size() + 3) & ~size_t(3), 0);
      store_le32(out.data() + previous, uint32_t(out.size() - previous));
    }
    previous = out.size();
    out.resize(out.size() + 5, 0);
    out.back() = uint8_t(name.size());
    out.insert(out.end(), name.begin(), name.end());
    out.push_back(0);
  }
  return out;
}

struct EaFile {
  test::TempDir dir;
  int fd = -1;
  EaFile() {
    dir.write_file("f", "data");
    fd = ::open((dir.path() / "f").c_str(), O_RDWR | O_CLOEXEC);
  }
  ~EaFile() {
    if (fd >= 0) ::close(fd);
  }
  bool usable() { return fd >= 0 && streams_supported(dir.fd()); }
};

}  // namespace

TEST_CASE("EA lists: encode and parse back, 4-aligned and linked", "[vfs][ea]") {
  std::vector<Ea> eas = {
      {"First", 0, bytes("one")}, {"second.ea", FILE_NEED_EA, bytes("")}, {"x", 0, bytes("0123456")}};
  Bytes list = full_list(eas);
  CHECK(load_le32(list.data()) == 20);  // 8 + "First\0" (6) + "one" (3) = 17, 4-aligned
  std::vector<Ea> back;
  REQUIRE(parse_full_ea_list(list, back) == NtStatus::Success);
  REQUIRE(back.size() == 3);
  CHECK(back[0].name == "First");
  CHECK(back[0].value == bytes("one"));
  CHECK(back[1].flags == FILE_NEED_EA);
  CHECK(back[1].value.empty());
  CHECK(back[2].value == bytes("0123456"));
  CHECK(full_ea_list_size(eas) == list.size());
}

TEST_CASE("EA lists: malformed ones are EA_LIST_INCONSISTENT, bad names INVALID_EA_NAME", "[vfs][ea]") {
  std::vector<Ea> out;
  Bytes one = full_list({{"name", 0, bytes("value")}});
  CHECK(parse_full_ea_list({}, out) == NtStatus::EaListInconsistent);
  Bytes cut(one.begin(), one.end() - 1);  // the value runs past the buffer
  CHECK(parse_full_ea_list(cut, out) == NtStatus::EaListInconsistent);
  Bytes no_nul = one;
  no_nul[8 + 4] = 'x';  // the NUL after the name
  CHECK(parse_full_ea_list(no_nul, out) == NtStatus::EaListInconsistent);
  Bytes two = full_list({{"a", 0, bytes("1")}, {"b", 0, bytes("2")}});
  Bytes unaligned = two;
  store_le32(unaligned.data(), 9);
  CHECK(parse_full_ea_list(unaligned, out) == NtStatus::EaListInconsistent);
  Bytes overlapping = two;
  store_le32(overlapping.data(), 4);  // inside the first entry
  CHECK(parse_full_ea_list(overlapping, out) == NtStatus::EaListInconsistent);
  Bytes past = two;
  store_le32(past.data(), 64);
  CHECK(parse_full_ea_list(past, out) == NtStatus::EaListInconsistent);
  for (std::string bad : {"a*b", "a/b", "a:b", "a\\b", "a|b", "a=b", "a\x01", "[x]"})
    CHECK(parse_full_ea_list(full_list({{bad, 0, bytes("v")}}), out) == NtStatus::InvalidEaName);
  Bytes empty_name = full_list({{"", 0, bytes("v")}});
  CHECK(parse_full_ea_list(empty_name, out) == NtStatus::InvalidEaName);
  CHECK(parse_full_ea_list(full_list({{std::string(kMaxEaNameBytes, 'n'), 0, bytes("v")}}), out) == NtStatus::Success);
  CHECK(parse_full_ea_list(full_list({{std::string(kMaxEaNameBytes + 1, 'n'), 0, bytes("v")}}), out) ==
        NtStatus::InvalidEaName);
}

TEST_CASE("EA lists: FILE_GET_EA_INFORMATION names", "[vfs][ea]") {
  std::vector<std::string> names;
  REQUIRE(parse_get_ea_list(get_list({"one", "Two.x"}), names) == NtStatus::Success);
  CHECK(names == std::vector<std::string>{"one", "Two.x"});
  Bytes bad = get_list({"one"});
  bad.pop_back();  // no NUL
  CHECK(parse_get_ea_list(bad, names) == NtStatus::EaListInconsistent);
  CHECK(parse_get_ea_list(get_list({"o?e"}), names) == NtStatus::InvalidEaName);
}

TEST_CASE("EA store: set, read back in name order, replace without case, remove", "[vfs][ea]") {
  EaFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  CHECK(read_eas(f.fd).value().empty());
  REQUIRE(write_eas(f.fd, {{"Zeta", 0, bytes("z")}, {"alpha", FILE_NEED_EA, bytes("a")}}) == NtStatus::Success);
  auto eas = read_eas(f.fd).value();
  REQUIRE(eas.size() == 2);
  CHECK(eas[0].name == "alpha");
  CHECK(eas[0].flags == FILE_NEED_EA);
  CHECK(eas[1].name == "Zeta");
  char raw[64];
  CHECK(fgetxattr(f.fd, "trusted.ringsmb.ea.ZETA", raw, sizeof raw) > 0);
  REQUIRE(write_eas(f.fd, {{"ZETA", 0, bytes("new")}}) == NtStatus::Success);  // the same EA
  eas = read_eas(f.fd).value();
  REQUIRE(eas.size() == 2);
  CHECK(eas[1].name == "ZETA");
  CHECK(eas[1].value == bytes("new"));
  REQUIRE(write_eas(f.fd, {{"alpha", 0, {}}, {"never-there", 0, {}}}) == NtStatus::Success);
  CHECK(read_eas(f.fd).value().size() == 1);
  // No user.* attribute is touched.
  char names[1024];
  ssize_t n = flistxattr(f.fd, names, sizeof names);
  REQUIRE(n > 0);
  CHECK(std::string(names, size_t(n)).find("user.") == std::string::npos);
}

TEST_CASE("EA store: a set past 64 KiB in all is EA_TOO_LARGE and changes nothing", "[vfs][ea]") {
  EaFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  std::vector<Ea> big;
  for (int i = 0; i < 2; ++i) big.push_back({"big" + std::to_string(i), 0, Bytes(40000, uint8_t('x'))});
  CHECK(write_eas(f.fd, big) == NtStatus::EaTooLarge);
  CHECK(read_eas(f.fd).value().empty());
}
