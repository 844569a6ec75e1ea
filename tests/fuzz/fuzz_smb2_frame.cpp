// libFuzzer target: SMB2 frames straight off the wire, through process_frame
// exactly as the transport hands them over, on a connection that already
// has a session (id 1) and a tree (id 1) on a scratch share, so every
// command's body parser and handler is reachable: CREATE with contexts,
// READ/WRITE, QUERY/SET_INFO classes, IOCTLs, LOCK, compound chains, CANCEL,
// OPLOCK_BREAK. The server must never crash, hang or leak, whatever comes.
//
// Input: frames, each as a 2-byte little-endian length then that many
// bytes. The harness renumbers each element's MessageId so that the credit
// window accepts it (otherwise nearly every input would end at the first
// frame with a dropped connection); everything else is the fuzzer's.

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "control/local_control_plane.hpp"
#include "ipc/control_plane.hpp"
#include "fuzz_connection.hpp"
#include "smb2/fixture.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/commands/command_table.hpp"
#include "smb2/commands/teardown.hpp"
#include "smb2/engine/processor.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::smb2;

// Runs what the handlers post to the connection (lease and oplock breaks,
// woken CREATEs) right after the frame, on the same connection.
struct InlinePoster final : ConnPoster {
  std::vector<ConnTask> tasks;
  void post(const state::ConnAddress&, ConnTask task) override { tasks.push_back(std::move(task)); }
  void run(ConnState& conn, Bytes& out) {
    for (int round = 0; round < 8 && !tasks.empty(); ++round) {
      auto now = std::move(tasks);
      tasks.clear();
      for (auto& t : now) t(conn, out);
    }
    tasks.clear();
  }
};

// What the transport relies on: segments in order, each inside the output
// buffer. They are dropped here (their fds closed) instead of sent.
void check_file_segments(ConnState& conn, const Bytes& out) {
  size_t last = 0;
  for (const FileSegment& f : conn.out_files) {
    if (f.at < last || f.at > out.size() || (f.fd.get() < 0 && !f.data)) abort();
    last = f.at;
  }
  conn.out_files.clear();
}

using fuzz::renumber;

// One server and one scratch share for the whole run (setting them up per
// input would dominate the time); each input gets a fresh connection.
struct World {
  test::Smb2Fixture fx;
  std::unique_ptr<ipc::ControlPlane> control;
  InlinePoster poster;
  uint64_t inputs = 0;

  World() {
    fuzz::confine_share(fx.dir(), "fuzz_smb2_frame");
    config::ShareConfig share;
    share.name = "share";
    share.path = fx.dir().string();
    share.read_only = false;
    fx.server.config.shares.push_back(share);
    control = control::make_local_control_plane(fx.server.config);
    fx.server.control = control.get();
    fx.server.poster = &poster;
    fx.server.lease_break_timeout_ms = 0;
  }

  // The share as every input starts it: a file and a folder, whatever the
  // previous inputs left is removed now and then.
  void reset_share() {
    if (inputs++ % 256 == 0) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(fx.dir(), ec)) std::filesystem::remove_all(e, ec);
      fx.write_file("a.txt", "hello, fuzzer");
      fx.mkdir("dir");
    }
    fx.server.next_file_id = 1;  // the first open of an input is FileId {1, 1}, as the seeds expect
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  install_commands();
  static World* world = new World();  // lives for the process, like a server
  world->reset_share();
  ServerContext& server = world->fx.server;
  ConnState conn;
  fuzz::open_connection(conn, world->fx.dir());
  // As the transport does: large READs may leave their data in the file.
  conn.transport_sends_files = true;

  uint64_t next_mid = 1;
  Bytes out;
  size_t off = 0;
  while (size - off >= 2) {
    size_t len = std::min<size_t>(load_le16(data + off), size - off - 2);
    Bytes frame(data + off + 2, data + off + 2 + len);
    off += 2 + len;
    renumber(frame, next_mid);
    out.clear();
    if (process_frame(conn, server, frame, out) == FrameResult::Drop) break;
    check_file_segments(conn, out);
    world->poster.run(conn, out);
    expire_pending(conn, server, monotonic_ms() + 60000);  // what the worker's tick does
    world->poster.run(conn, out);
  }
  teardown_connection(conn, server);
  world->poster.tasks.clear();
  return 0;
}
