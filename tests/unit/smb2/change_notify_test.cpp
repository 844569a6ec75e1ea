// CHANGE_NOTIFY end to end below the transport: the handler, the open's
// watch (smb2/notify/notify_watch.hpp) and a real inotify source
// (vfs/inotify_source.hpp) read by hand where a worker's reactor would.
// Renames paired by cookie, a tree following its renamed and new
// subdirectories, buffering between requests, completion of a waiting
// request through the connection's task queue, CANCEL and CLOSE.
#include <catch2/catch.hpp>

#include <cstdio>

#include "fixture.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/notify/notify_buffer.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "vfs/inotify_source.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint16_t kWatchTree = 1;
constexpr uint32_t kNames = FILE_NOTIFY_CHANGE_FILE_NAME | FILE_NOTIFY_CHANGE_DIR_NAME;

struct Change {
  uint32_t action;
  std::string name;
  bool operator==(const Change&) const = default;
};

std::vector<Change> parse_list(ByteSpan body) {
  ByteReader r(body);
  REQUIRE(r.u16() == 9);
  REQUIRE(r.u16() == wire::kHeaderSize + 8);
  uint32_t len = r.u32();
  std::vector<Change> out;
  size_t at = 8;
  while (len) {
    ByteReader e(body.subspan(at));
    uint32_t next = e.u32(), action = e.u32(), n = e.u32();
    std::string name;
    for (uint32_t i = 0; i < n; i += 2) name.push_back(char(body[at + 12 + i]));  // ASCII names here
    out.push_back({action, name});
    if (!next) break;
    at += next;
  }
  return out;
}

struct NotifyFixture : Smb2Fixture {
  vfs::InotifySource source{[](int) { return true; }};  // dispatch() is called by hand
  QueuedPoster poster;
  NotifyFixture() {
    conn.changes = &source;
    server.poster = &poster;
  }
  // The watches go while the source they unwatch from still exists (the
  // base class's connection outlives this class's members).
  ~NotifyFixture() { conn.notify.reset(); }
  Response notify(FileId id, uint32_t filter, uint16_t flags = 0, uint32_t length = 4096) {
    Body b;
    b.w.u16(32);
    b.w.u16(flags);
    b.w.u32(length);
    b.w.u64(id.persistent);
    b.w.u64(id.volatile_id);
    b.w.u32(filter);
    b.w.u32(0);
    return call(handle_change_notify, wire::Command::ChangeNotify, b.b);
  }
  void rename(const std::string& from, const std::string& to) {
    REQUIRE(std::rename((dir() / from).c_str(), (dir() / to).c_str()) == 0);
  }
  // The final responses sent by the tasks the watches posted: (status, body).
  std::vector<std::pair<NtStatus, Bytes>> run_posted() {
    Bytes out = poster.run_all(conn);
    std::vector<std::pair<NtStatus, Bytes>> msgs;
    for (size_t at = 0; at + 4 + wire::kHeaderSize <= out.size();) {
      size_t len = (size_t(out[at + 1]) << 16) | (size_t(out[at + 2]) << 8) | out[at + 3];
      ByteSpan m(out.data() + at + 4, len);
      msgs.emplace_back(NtStatus(load_le32(m.data() + 8)), Bytes(m.begin() + wire::kHeaderSize, m.end()));
      at += 4 + len;
    }
    return msgs;
  }
};

}  // namespace

TEST_CASE("a waiting CHANGE_NOTIFY completes with the changes inotify reports", "[smb2][notify]") {
  NotifyFixture f;
  f.mkdir("w");
  FileId dir = f.open_dir("w");
  Response r = f.notify(dir, kNames);
  REQUIRE(r.status == NtStatus::Pending);
  f.write_file("w/a");
  f.source.dispatch();
  auto msgs = f.run_posted();
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0].first == NtStatus::Success);
  CHECK(parse_list(msgs[0].second) == std::vector<Change>{{FILE_ACTION_ADDED, "a"}});
  CHECK(f.conn.async.waiting.empty());
}

TEST_CASE("changes between requests are held; renames are paired by cookie", "[smb2][notify]") {
  NotifyFixture f;
  f.mkdir("w/sub");
  FileId dir = f.open_dir("w");
  REQUIRE(f.notify(dir, kNames, kWatchTree).status == NtStatus::Pending);
  REQUIRE(f.conn.async.waiting.size() == 1);
  f.write_file("w/a");
  f.source.dispatch();
  f.run_posted();  // the waiting request takes ADDED a
  f.rename("w/a", "w/b");      // within a directory: OLD/NEW
  f.rename("w/b", "w/sub/c");  // across directories of the tree: REMOVED/ADDED
  f.rename("w/sub", "w/sub2");
  f.write_file("w/sub2/d");  // the watch of the renamed directory follows it
  f.source.dispatch();
  CHECK(f.run_posted().empty());  // nobody waits: held
  Response r = f.notify(dir, 0, 0);  // a later request's filter and flags do not count
  REQUIRE(r.status == NtStatus::Success);
  CHECK(parse_list(r.body) == std::vector<Change>{{FILE_ACTION_RENAMED_OLD_NAME, "a"},
                                                  {FILE_ACTION_RENAMED_NEW_NAME, "b"},
                                                  {FILE_ACTION_REMOVED, "b"},
                                                  {FILE_ACTION_ADDED, "sub\\c"},
                                                  {FILE_ACTION_RENAMED_OLD_NAME, "sub"},
                                                  {FILE_ACTION_RENAMED_NEW_NAME, "sub2"},
                                                  {FILE_ACTION_ADDED, "sub2\\d"}});
}

TEST_CASE("WATCH_TREE watches directories created later; without it subdirectories are silent",
          "[smb2][notify]") {
  NotifyFixture f;
  f.mkdir("w");
  FileId tree = f.open_dir("w");
  FileId flat = f.open_dir("w");
  REQUIRE(f.notify(tree, kNames, kWatchTree).status == NtStatus::Pending);
  REQUIRE(f.notify(flat, kNames).status == NtStatus::Pending);
  f.mkdir("w/new");
  f.source.dispatch();  // the tree watch adds new/ as it sees it
  auto msgs = f.run_posted();
  REQUIRE(msgs.size() == 2);
  for (auto& [st, body] : msgs) {
    CHECK(st == NtStatus::Success);
    CHECK(parse_list(body) == std::vector<Change>{{FILE_ACTION_ADDED, "new"}});
  }
  f.write_file("w/new/x");
  f.source.dispatch();
  CHECK(f.run_posted().empty());  // nobody waits now
  // The tree's watch held new\x for its next request.
  Response r = f.notify(tree, kNames);
  REQUIRE(r.status == NtStatus::Success);
  CHECK(parse_list(r.body) == std::vector<Change>{{FILE_ACTION_ADDED, "new\\x"}});
  CHECK(f.notify(flat, kNames).status == NtStatus::Pending);  // nothing for the flat watch
}

TEST_CASE("a CHANGE_NOTIFY ends with CANCEL (CANCELLED) and CLOSE (NOTIFY_CLEANUP)", "[smb2][notify]") {
  NotifyFixture f;
  f.mkdir("w");
  FileId dir = f.open_dir("w");
  Response r = f.notify(dir, kNames);
  REQUIRE(r.status == NtStatus::Pending);
  wire::Header cancel{};
  cancel.flags = wire::SMB2_FLAGS_ASYNC_COMMAND;
  cancel.async_id = r.async_id;
  cancel_request(f.conn, f.server, cancel);
  REQUIRE(f.conn.async.ready.size() == 1);
  CHECK(load_le32(f.conn.async.ready[0].message.data() + 8) == uint32_t(NtStatus::Cancelled));
  f.conn.async.ready.clear();
  // The watch stays: what changed meanwhile is held for the next request.
  f.write_file("w/a");
  f.source.dispatch();
  r = f.notify(dir, kNames);
  CHECK(r.status == NtStatus::Success);
  REQUIRE(f.notify(dir, kNames).status == NtStatus::Pending);
  f.close(dir);
  REQUIRE(f.conn.async.ready.size() == 1);
  CHECK(load_le32(f.conn.async.ready[0].message.data() + 8) == uint32_t(NtStatus::NotifyCleanup));
  CHECK(f.conn.notify->by_open.empty());
  CHECK(f.conn.notify->dir_watches == 0);
  CHECK(f.source.kernel_watches() == 0);
}

TEST_CASE("a WATCH_TREE over more directories than the limit is refused and gives its watches back",
          "[smb2][notify]") {
  NotifyFixture f;
  f.server.max_notify_watches = 3;
  for (int i = 0; i < 3; ++i) f.mkdir("w/d" + std::to_string(i));
  FileId dir = f.open_dir("w");
  CHECK(f.notify(dir, kNames, kWatchTree).status == NtStatus::InsufficientResources);
  CHECK(f.conn.notify->dir_watches == 0);
  CHECK(f.source.kernel_watches() == 0);
  CHECK(f.notify(dir, kNames).status == NtStatus::Pending);  // the directory alone fits
  CHECK(f.conn.notify->dir_watches == 1);
}

TEST_CASE("another open making the directory delete pending ends its CHANGE_NOTIFYs with DELETE_PENDING",
          "[smb2][notify]") {
  NotifyFixture f;
  f.mkdir("w");
  FileId watcher = f.open_dir("w");
  REQUIRE(f.notify(watcher, kNames).status == NtStatus::Pending);
  FileId deleter = f.open_file("w", FILE_ALL_ACCESS, kOpenIf, kDirectoryFile | kDeleteOnClose);
  f.close(deleter);  // delete pending; the watcher's handle keeps the directory
  auto msgs = f.run_posted();
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0].first == NtStatus::DeletePending);
  CHECK(f.exists("w"));
  f.close(watcher);
  CHECK_FALSE(f.exists("w"));
}

TEST_CASE("a waiting request completes with the first change; what came with it waits for the next",
          "[smb2][notify]") {
  // Windows completes a waiting request at the first change (MS-FSA
  // 2.1.5.11.1); changes read in the same batch are held (smb2.notify.valid-req).
  NotifyFixture f;
  f.mkdir("w");
  FileId dir = f.open_dir("w");
  REQUIRE(f.notify(dir, kNames).status == NtStatus::Pending);
  f.write_file("w/a");
  f.rename("w/a", "w/b");
  f.write_file("w/c");
  f.source.dispatch();
  auto msgs = f.run_posted();
  REQUIRE(msgs.size() == 1);
  CHECK(parse_list(msgs[0].second) == std::vector<Change>{{FILE_ACTION_ADDED, "a"}});
  Response r = f.notify(dir, kNames);
  REQUIRE(r.status == NtStatus::Success);
  CHECK(parse_list(r.body) == std::vector<Change>{{FILE_ACTION_RENAMED_OLD_NAME, "a"},
                                                  {FILE_ACTION_RENAMED_NEW_NAME, "b"},
                                                  {FILE_ACTION_ADDED, "c"}});
  // A rename is one change: both names complete a waiting request together.
  REQUIRE(f.notify(dir, kNames).status == NtStatus::Pending);
  f.rename("w/b", "w/d");
  f.write_file("w/e");
  f.source.dispatch();
  msgs = f.run_posted();
  REQUIRE(msgs.size() == 1);
  CHECK(parse_list(msgs[0].second) ==
        std::vector<Change>{{FILE_ACTION_RENAMED_OLD_NAME, "b"}, {FILE_ACTION_RENAMED_NEW_NAME, "d"}});
}

TEST_CASE("a CHANGE_NOTIFY on a directory already delete pending answers DELETE_PENDING at once",
          "[smb2][notify]") {
  NotifyFixture f;
  f.mkdir("w");
  FileId dir = f.open_dir("w");
  f.server.files.set_delete_pending(f.find(dir)->node, true);  // by another open, before this request ran
  CHECK(f.notify(dir, kNames).status == NtStatus::DeletePending);
  CHECK(f.conn.async.waiting.empty());
}

TEST_CASE("changes read before a request that came first are handed out after it: it gets the first alone",
          "[smb2][notify]") {
  // smb2.notify.mask-change: two requests sent, then two changes made on
  // another connection; the worker reads both changes before it takes in
  // the requests. The worker keeps what it read (read_ready) until the
  // requests that had arrived are in (the reactor's look_again), then
  // hands it out (deliver_read): the first request gets the first change.
  NotifyFixture f;
  f.mkdir("w");
  FileId dir = f.open_dir("w");
  REQUIRE(f.notify(dir, kNames).status == NtStatus::Pending);  // the watch is set up
  f.write_file("w/x");
  f.source.dispatch();
  REQUIRE(f.run_posted().size() == 1);  // nothing waits now
  f.write_file("w/a");
  f.write_file("w/b");
  f.source.read_ready();  // before the requests below are taken in
  CHECK(f.source.read_bytes() > 0);
  REQUIRE(f.notify(dir, kNames).status == NtStatus::Pending);
  REQUIRE(f.notify(dir, kNames).status == NtStatus::Pending);
  f.source.deliver_read();
  CHECK(f.source.read_bytes() == 0);
  auto msgs = f.run_posted();
  REQUIRE(msgs.size() == 2);
  CHECK(parse_list(msgs[0].second) == std::vector<Change>{{FILE_ACTION_ADDED, "a"}});
  CHECK(parse_list(msgs[1].second) == std::vector<Change>{{FILE_ACTION_ADDED, "b"}});
}
