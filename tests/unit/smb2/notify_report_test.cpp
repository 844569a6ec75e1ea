// The server's own metadata changes (smb2/notify/notify_report.hpp): the filter a
// FileBasicInformation SET_INFO reports under (MS-FSA 2.1.5.14.2), and the
// record that lets a watch drop the IN_ATTRIB the same change brings.
#include <catch2/catch.hpp>

#include "smb2/notify/notify_buffer.hpp"
#include "smb2/notify/notify_report.hpp"
#include "smb2/notify/own_changes.hpp"

using namespace ringsmb::smb2;

namespace {
constexpr uint32_t ARCHIVE = 0x20, HIDDEN = 0x2, READONLY = 0x1, NORMAL = 0x80;
constexpr uint64_t kTime = 132'000'000'000'000'000ull;
constexpr uint64_t kFreeze = uint64_t(-1), kThaw = uint64_t(-2);
}  // namespace

TEST_CASE("each FileBasicInformation field reports under its own filter", "[smb2][notify]") {
  CHECK(basic_info_filter(ARCHIVE, kTime, 0, 0, 0) == FILE_NOTIFY_CHANGE_CREATION);
  CHECK(basic_info_filter(ARCHIVE, 0, kTime, 0, 0) == FILE_NOTIFY_CHANGE_LAST_ACCESS);
  CHECK(basic_info_filter(ARCHIVE, 0, 0, kTime, 0) == FILE_NOTIFY_CHANGE_LAST_WRITE);
  CHECK(basic_info_filter(ARCHIVE, 0, 0, 0, HIDDEN) == FILE_NOTIFY_CHANGE_ATTRIBUTES);
  CHECK(basic_info_filter(ARCHIVE, kTime, kTime, kTime, READONLY) ==
        (FILE_NOTIFY_CHANGE_CREATION | FILE_NOTIFY_CHANGE_LAST_ACCESS | FILE_NOTIFY_CHANGE_LAST_WRITE |
         FILE_NOTIFY_CHANGE_ATTRIBUTES));
}

TEST_CASE("what changes nothing reports nothing", "[smb2][notify]") {
  CHECK(basic_info_filter(ARCHIVE, 0, 0, 0, 0) == 0);               // all "leave it"
  CHECK(basic_info_filter(ARCHIVE, kFreeze, kThaw, kFreeze, 0) == 0);  // -1 / -2 only stop or resume updates
  CHECK(basic_info_filter(ARCHIVE, 0, 0, 0, ARCHIVE) == 0);         // the same attributes again
  CHECK(basic_info_filter(NORMAL, 0, 0, 0, NORMAL) == 0);           // NORMAL is not a settable attribute
  CHECK(basic_info_filter(ARCHIVE | HIDDEN, 0, 0, 0, ARCHIVE | HIDDEN | 0x10) == 0);  // nor DIRECTORY
}

TEST_CASE("the server's own changes are remembered per directory and name, for a while", "[smb2][notify]") {
  constexpr int64_t kHoldMs = 2000;
  OwnChanges changes(kHoldMs);
  CHECK(changes.empty());
  CHECK_FALSE(changes.recent(1, 2, "a.txt", 1000));
  changes.add(1, 2, "a.txt", 1000);
  CHECK_FALSE(changes.empty());
  CHECK(changes.recent(1, 2, "a.txt", 1000 + kHoldMs));
  CHECK_FALSE(changes.recent(1, 2, "b.txt", 1000));  // another name
  CHECK_FALSE(changes.recent(1, 3, "a.txt", 1000));  // the same name in another directory
  CHECK_FALSE(changes.recent(9, 2, "a.txt", 1000));  // on another device
  CHECK_FALSE(changes.recent(1, 2, "a.txt", 1001 + kHoldMs));  // expired: a later change is a local one
  CHECK(changes.empty());
}

TEST_CASE("the record of own changes stays bounded", "[smb2][notify]") {
  OwnChanges changes(2000);
  for (int i = 0; i < 10'000; ++i) changes.add(1, 2, "f" + std::to_string(i), 1000);
  CHECK(changes.recent(1, 2, "f9999", 1000));
  changes.add(1, 2, "later", 5000);  // the old ones expired: swept
  CHECK_FALSE(changes.recent(1, 2, "f9999", 5000));
  CHECK(changes.recent(1, 2, "later", 5000));
}
