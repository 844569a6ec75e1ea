// CHANGE_NOTIFY's buffer (smb2/notify/notify_buffer.hpp): inotify changes to
// FILE_ACTION_*s per CompletionFilter, the FILE_NOTIFY_INFORMATION list
// (MS-FSCC 2.7.1), coalescing, the cap and NOTIFY_ENUM_DIR.
#include <catch2/catch.hpp>

#include <sys/inotify.h>

#include "smb2/notify/notify_buffer.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;

namespace {

struct Entry {
  uint32_t next, action;
  std::u16string name;
};

std::vector<Entry> decode(const Bytes& b) {
  std::vector<Entry> out;
  size_t at = 0;
  for (;;) {
    REQUIRE(at + 12 <= b.size());
    ByteReader r(ByteSpan(b).subspan(at));
    Entry e{r.u32(), r.u32(), {}};
    uint32_t len = r.u32();
    REQUIRE(at + 12 + len <= b.size());
    for (uint32_t i = 0; i < len; i += 2) e.name.push_back(char16_t(b[at + 12 + i] | (b[at + 13 + i] << 8)));
    out.push_back(e);
    if (!e.next) break;
    CHECK(e.next % 4 == 0);
    at += e.next;
  }
  return out;
}

}  // namespace

TEST_CASE("inotify changes become FILE_ACTION_*s under their filters", "[smb2][notify]") {
  auto a = notify_action(IN_CREATE, false);
  REQUIRE(a);
  CHECK(a->action == FILE_ACTION_ADDED);
  CHECK(a->filter == FILE_NOTIFY_CHANGE_FILE_NAME);
  CHECK(notify_action(IN_CREATE | IN_ISDIR, false)->filter == FILE_NOTIFY_CHANGE_DIR_NAME);
  CHECK(notify_action(IN_DELETE, false)->action == FILE_ACTION_REMOVED);
  CHECK(notify_action(IN_MOVED_FROM, true)->action == FILE_ACTION_RENAMED_OLD_NAME);
  CHECK(notify_action(IN_MOVED_TO, true)->action == FILE_ACTION_RENAMED_NEW_NAME);
  // A move whose other half is outside the watch: the entry left / came.
  CHECK(notify_action(IN_MOVED_FROM, false)->action == FILE_ACTION_REMOVED);
  CHECK(notify_action(IN_MOVED_TO, false)->action == FILE_ACTION_ADDED);
  auto m = notify_action(IN_MODIFY, false);
  CHECK(m->action == FILE_ACTION_MODIFIED);
  CHECK((m->filter & FILE_NOTIFY_CHANGE_SIZE));
  CHECK((m->filter & FILE_NOTIFY_CHANGE_LAST_WRITE));
  CHECK_FALSE((m->filter & FILE_NOTIFY_CHANGE_FILE_NAME));
  CHECK((notify_action(IN_ATTRIB, false)->filter & FILE_NOTIFY_CHANGE_SECURITY));
  CHECK_FALSE(notify_action(IN_IGNORED, false));
  CHECK_FALSE(notify_action(IN_DELETE_SELF, false));

  CHECK(inotify_mask_for(FILE_NOTIFY_CHANGE_FILE_NAME) == (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO));
  CHECK(inotify_mask_for(FILE_NOTIFY_CHANGE_SIZE) == IN_MODIFY);
  CHECK(inotify_mask_for(FILE_NOTIFY_CHANGE_EA) == IN_ATTRIB);
  CHECK(inotify_mask_for(FILE_NOTIFY_CHANGE_ATTRIBUTES) == (IN_ATTRIB | IN_MOVED_TO));  // renames set ARCHIVE
}

TEST_CASE("a renamed file is MODIFIED for a watcher of attributes that does not see names", "[smb2][notify]") {
  constexpr uint32_t ATTRS = FILE_NOTIFY_CHANGE_ATTRIBUTES;
  CHECK(rename_reported_as_modified(IN_MOVED_TO, ATTRS));                    // smb2.notify.mask-change
  CHECK_FALSE(rename_reported_as_modified(IN_MOVED_TO, ATTRS | FILE_NOTIFY_CHANGE_FILE_NAME));  // smb2.notify.rec
  CHECK_FALSE(rename_reported_as_modified(IN_MOVED_TO | IN_ISDIR, ATTRS));   // a directory: no ARCHIVE
  CHECK_FALSE(rename_reported_as_modified(IN_MOVED_FROM, ATTRS));            // the old name is gone
  CHECK_FALSE(rename_reported_as_modified(IN_CREATE, ATTRS));
  CHECK_FALSE(rename_reported_as_modified(IN_MOVED_TO, FILE_NOTIFY_CHANGE_SIZE));
}

TEST_CASE("FILE_NOTIFY_INFORMATION entries are 4-byte aligned and chained", "[smb2][notify]") {
  NotifyBuffer buf;
  buf.add(FILE_ACTION_RENAMED_OLD_NAME, "a.txt");  // 12 + 10 bytes: padded to 24
  buf.add(FILE_ACTION_RENAMED_NEW_NAME, "sub/bc");  // '/' becomes '\'
  CHECK(buf.bytes() == 24 + 24);
  Bytes out;
  REQUIRE(buf.take(4096, out) == NtStatus::Success);
  auto e = decode(out);
  REQUIRE(e.size() == 2);
  CHECK(e[0].next == 24);
  CHECK(e[0].action == FILE_ACTION_RENAMED_OLD_NAME);
  CHECK(e[0].name == u"a.txt");
  CHECK(e[1].next == 0);
  CHECK(e[1].action == FILE_ACTION_RENAMED_NEW_NAME);
  CHECK(e[1].name == u"sub\\bc");
  CHECK(out.size() == 48);
  CHECK(buf.empty());
}

TEST_CASE("non-ASCII names are UTF-16", "[smb2][notify]") {
  NotifyBuffer buf;
  buf.add(FILE_ACTION_ADDED, "\xc3\xa9t\xc3\xa9");  // "été"
  Bytes out;
  REQUIRE(buf.take(4096, out) == NtStatus::Success);
  CHECK(decode(out)[0].name == u"\u00e9t\u00e9");
}

TEST_CASE("repeated modifications of one file are reported once", "[smb2][notify]") {
  NotifyBuffer buf;
  for (int i = 0; i < 100; ++i) buf.add(FILE_ACTION_MODIFIED, "big.bin");  // a large write: many IN_MODIFY
  buf.add(FILE_ACTION_MODIFIED, "other");
  buf.add(FILE_ACTION_MODIFIED, "big.bin");  // not adjacent: kept, order matters
  buf.add(FILE_ACTION_ADDED, "x");
  buf.add(FILE_ACTION_ADDED, "x");  // only MODIFIED is coalesced
  Bytes out;
  REQUIRE(buf.take(4096, out) == NtStatus::Success);
  auto e = decode(out);
  REQUIRE(e.size() == 5);
  CHECK(e[0].name == u"big.bin");
  CHECK(e[1].name == u"other");
  CHECK(e[2].name == u"big.bin");
}

TEST_CASE("changes beyond the request's buffer: STATUS_NOTIFY_ENUM_DIR", "[smb2][notify]") {
  NotifyBuffer buf;
  buf.add(FILE_ACTION_ADDED, "abcdef");  // 24 bytes
  buf.add(FILE_ACTION_ADDED, "ghijkl");
  Bytes out;
  CHECK(buf.take(47, out) == NtStatus::NotifyEnumDir);  // MS-FSA 2.1.5.11.1: all or nothing
  CHECK(out.empty());
  CHECK(buf.empty());  // the list was dropped with it
  buf.add(FILE_ACTION_ADDED, "abcdef");
  buf.add(FILE_ACTION_ADDED, "ghijkl");
  CHECK(buf.take(48, out) == NtStatus::Success);
}

TEST_CASE("changes beyond the held cap overflow until the next report", "[smb2][notify]") {
  NotifyBuffer buf;
  buf.set_cap(64);
  buf.add(FILE_ACTION_ADDED, "abcdef");
  buf.add(FILE_ACTION_ADDED, "ghijkl");
  CHECK(buf.bytes() == 48);
  buf.add(FILE_ACTION_ADDED, "mnopqr");  // 72 > 64
  CHECK(buf.has_news());
  buf.add(FILE_ACTION_ADDED, "s");  // after an overflow nothing is kept
  CHECK(buf.bytes() == 0);
  Bytes out;
  CHECK(buf.take(4096, out) == NtStatus::NotifyEnumDir);
  CHECK_FALSE(buf.has_news());
  buf.add(FILE_ACTION_ADDED, "t");
  REQUIRE(buf.take(4096, out) == NtStatus::Success);
  CHECK(decode(out)[0].name == u"t");
}

TEST_CASE("lost changes (kernel queue overflow) report NOTIFY_ENUM_DIR", "[smb2][notify]") {
  NotifyBuffer buf;
  buf.add(FILE_ACTION_ADDED, "a");
  buf.overflow();
  Bytes out;
  CHECK(buf.take(4096, out) == NtStatus::NotifyEnumDir);
}

TEST_CASE("take_first leaves the rest held", "[smb2][notify]") {
  NotifyBuffer buf;
  buf.add(FILE_ACTION_ADDED, "a");
  buf.add(FILE_ACTION_ADDED, "b");
  buf.add(FILE_ACTION_ADDED, "c");
  Bytes out;
  REQUIRE(buf.take_first(1, 4096, out) == NtStatus::Success);
  REQUIRE(decode(out).size() == 1);
  CHECK(decode(out)[0].next == 0);
  CHECK(buf.count() == 2);
  CHECK(buf.bytes() == 32);
  out.clear();
  REQUIRE(buf.take(4096, out) == NtStatus::Success);
  CHECK(decode(out).size() == 2);
  CHECK(buf.empty());
}

TEST_CASE("the buffers of a connection together stay within its bound", "[smb2][notify]") {
  NotifyMemory memory{0, 1024};
  {
    NotifyBuffer a, b;
    a.set_memory(&memory);
    b.set_memory(&memory);
    const std::string name(40, 'n');  // 12 + 80 bytes: 92 each
    for (int i = 0; i < 8; ++i) a.add(FILE_ACTION_ADDED, name);
    CHECK(a.count() == 8);
    CHECK(memory.held_bytes >= a.bytes());
    CHECK(memory.held_bytes <= 1024);
    for (int i = 0; i < 20 && !b.overflowed(); ++i) b.add(FILE_ACTION_ADDED, name);
    CHECK(b.overflowed());  // past the connection's bound: this watch reports NOTIFY_ENUM_DIR
    CHECK(memory.held_bytes <= 1024);
    Bytes out;
    CHECK(b.take(65536, out) == NtStatus::NotifyEnumDir);
    REQUIRE(a.take(65536, out) == NtStatus::Success);
    CHECK(decode(out).size() == 8);
    CHECK(memory.held_bytes == 0);  // taken: the memory went back
    a.add(FILE_ACTION_ADDED, "x");
    CHECK(memory.held_bytes > 0);
  }
  CHECK(memory.held_bytes == 0);  // and with the buffers
}
