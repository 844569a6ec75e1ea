// Test fixture for SMB2 handler unit tests: a server, a connection, a valid
// session and a tree whose share is a scratch directory; requests are built
// by hand and passed straight to the handlers (no processor, no signing).
#pragma once

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/server_context.hpp"
#include "transport/direct_tcp.hpp"
#include "vfs/paths.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smb2::test {

// CREATE dispositions and options the tests use.
enum : uint32_t { kOpen = 1, kCreate = 2, kOpenIf = 3, kOverwriteIf = 5 };
enum : uint32_t { kDirectoryFile = 0x1, kNonDirectoryFile = 0x40, kDeleteOnClose = 0x1000 };
constexpr uint32_t kShareAll = 7;

inline Bytes u16le(std::string_view utf8) { return vfs::utf8_to_utf16le(utf8); }

// Body builder with the 64-byte header offset in mind.
struct Body {
  Bytes b;
  ByteWriter w{b};
  // Offset of the next byte counted from the start of the SMB2 header.
  uint16_t here() const { return uint16_t(wire::kHeaderSize + b.size()); }
};

// A READ request body (MS-SMB2 2.2.19).
inline Bytes read_body(FileId id, uint64_t offset, uint32_t length, uint32_t minimum = 0) {
  Bytes b;
  ByteWriter w(b);
  w.u16(49);
  w.u8(0);  // Padding
  w.u8(0);  // Flags
  w.u32(length);
  w.u64(offset);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  w.u32(minimum);
  w.zeros(12);  // Channel, RemainingBytes, ReadChannelInfoOffset/Length
  w.u8(0);
  return b;
}

// A CREATE request body (MS-SMB2 2.2.13) for a file with every access and
// share mode; OPLOCK is the RequestedOplockLevel (9: batch).
inline Bytes create_body(std::string_view name, uint32_t disposition, uint8_t oplock = 0) {
  Bytes n = u16le(name), b;
  ByteWriter w(b);
  w.u16(57);
  w.u8(0);
  w.u8(oplock);
  w.u32(2);
  w.zeros(16);
  w.u32(FILE_ALL_ACCESS);
  w.u32(0);
  w.u32(kShareAll);
  w.u32(disposition);
  w.u32(kNonDirectoryFile);
  w.u16(64 + 56);
  w.u16(uint16_t(n.size()));
  w.u64(0);
  w.bytes(n);
  return b;
}

// An IOCTL request body (MS-SMB2 2.2.31); FLAGS 1 is SMB2_0_IOCTL_IS_FSCTL.
inline Bytes ioctl_body(uint32_t code, FileId id, const Bytes& input, uint32_t max_out, uint32_t flags = 1) {
  Body body;
  body.w.u16(57);
  body.w.u16(0);
  body.w.u32(code);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.u32(input.empty() ? 0 : uint32_t(wire::kHeaderSize + 56));
  body.w.u32(uint32_t(input.size()));
  body.w.u32(0);  // MaxInputResponse
  body.w.u32(0);  // OutputOffset
  body.w.u32(0);  // OutputCount
  body.w.u32(max_out);
  body.w.u32(flags);
  body.w.u32(0);
  body.w.bytes(input);
  if (input.empty()) body.w.u8(0);
  return body.b;
}

struct Response {
  NtStatus status = NtStatus::Success;
  Bytes body;  // what the handler wrote after the header
  uint64_t async_id = 0;  // a STATUS_PENDING return: the interim response's AsyncId
  uint16_t u16(size_t off) const { return load_le16(body.data() + off); }
  uint32_t u32(size_t off) const { return load_le32(body.data() + off); }
  uint64_t u64(size_t off) const { return load_le64(body.data() + off); }
};

// Makes `conn` a negotiated 3.1.1 connection with a valid session 1 (this
// process's uid/gid) holding a writable tree 1 on `dir`; returns the tree.
inline state::Tree* add_session_and_tree(ConnState& conn, const std::filesystem::path& dir,
                                         state::Session*& session) {
  conn.negotiated = true;
  conn.dialect = 0x0311;
  auto s = std::make_unique<state::Session>();
  s->session_id = 1;
  s->state = state::Session::State::Valid;
  s->unix_user.uid = getuid();
  s->unix_user.gid = getgid();
  auto t = std::make_unique<state::Tree>();
  t->tree_id = 1;
  t->share.name = "share";
  t->share.path = dir.string();
  t->share.read_only = false;
  t->writable = true;
  t->root.reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  t->maximal_access = FILE_ALL_ACCESS;
  t->identity = s->unix_user;
  state::Tree* tree = t.get();
  s->trees.emplace(1, std::move(t));
  session = s.get();
  conn.tables->sessions.emplace(1, std::move(s));
  return tree;
}

// Keeps posted tasks so the test runs them when it chooses, as the worker
// would on its next wake-up; timed ones (post_at) apart, run when the test
// says their time has come.
struct QueuedPoster : ConnPoster {
  std::vector<ConnTask> tasks, timed;
  std::vector<Wanted> timed_wanted;  // each timed task's
  void post(const state::ConnAddress&, ConnTask task) override { tasks.push_back(std::move(task)); }
  void post_at(const state::ConnAddress&, int64_t, ConnTask task, Wanted wanted) override {
    timed.push_back(std::move(task));
    timed_wanted.push_back(std::move(wanted));
  }
  Bytes run_all(ConnState& conn) { return run(conn, tasks); }
  Bytes run_timed(ConnState& conn) { return run(conn, timed); }

 private:
  static Bytes run(ConnState& conn, std::vector<ConnTask>& queue) {
    Bytes out;
    auto now = std::move(queue);
    queue.clear();
    for (auto& t : now) t(conn, out);
    return out;
  }
};

// One request as a frame (no transport length) for process_frame.
inline Bytes request_frame(wire::Command cmd, const Bytes& body, uint64_t mid, uint32_t tree, uint16_t credits = 10) {
  Bytes out;
  ByteWriter w(out);
  wire::Header h{};
  h.command = cmd;
  h.credit_charge = 1;
  h.credits = credits;
  h.message_id = mid;
  h.session_id = 1;
  h.tree_id = tree;
  wire::write_header(w, h);
  w.bytes(body);
  return out;
}

// The header of the first response in FRAME (behind its 4-byte length).
inline wire::Header response_header(const Bytes& frame) {
  wire::Header h{};
  REQUIRE(frame.size() >= 4 + wire::kHeaderSize);
  REQUIRE(wire::parse_header(ByteSpan(frame).subspan(4), h));
  return h;
}

class Smb2Fixture {
 public:
  Smb2Fixture() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ringsmb-smb2-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    server.max_trans = server.max_read = server.max_write = 1 << 20;
    server.start_time = 0x01D0000000000000ull;
    for (size_t i = 0; i < 16; ++i) server.server_guid[i] = uint8_t(0xA0 + i);
    tree = add_session_and_tree(conn, dir_, session);
    conn.framing = &transport::direct_tcp_framing();
  }
  ~Smb2Fixture() {
    conn.tables->opens.clear();
    conn.tables->sessions.clear();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  const std::filesystem::path& dir() const { return dir_; }
  void write_file(const std::string& rel, const std::string& content = "") const {
    std::ofstream(dir_ / rel) << content;
  }
  void mkdir(const std::string& rel) const { std::filesystem::create_directories(dir_ / rel); }
  bool exists(const std::string& rel) const { return std::filesystem::exists(dir_ / rel); }

  // Runs `h` on `body` (the part after the header).
  Response call(Handler h, wire::Command cmd, const Bytes& body) {
    Bytes pdu(wire::kHeaderSize, 0);
    pdu.insert(pdu.end(), body.begin(), body.end());
    wire::Header hdr{};
    hdr.command = cmd;
    hdr.session_id = 1;
    hdr.tree_id = 1;
    CompoundState compound;
    ByteSpan pdu_span(pdu);
    Request req{conn, server, hdr, pdu_span, pdu_span.subspan(wire::kHeaderSize), false, compound};
    req.session = session;
    req.tree = tree;
    Bytes out(wire::kHeaderSize, 0);
    ByteWriter w(out);
    Response r;
    // The body's size and the open its FileId names, checked and resolved
    // as the processor does before the handler.
    r.status = check_structure_size(*command_spec(cmd), req.body);
    if (r.status == NtStatus::Success) r.status = req.resolve_open(*command_spec(cmd));
    if (r.status == NtStatus::Success) r.status = h(req, w);
    r.async_id = req.async_id;
    r.body.assign(out.begin() + wire::kHeaderSize, out.end());
    return r;
  }

  // CREATE; on success `id` receives the FileId.
  NtStatus create(std::string_view name, uint32_t access, uint32_t disposition, uint32_t options, FileId& id,
                  uint32_t share = kShareAll) {
    Body body;
    Bytes n = u16le(name);
    body.w.u16(57);
    body.w.u8(0);   // SecurityFlags
    body.w.u8(0);   // RequestedOplockLevel
    body.w.u32(2);  // Impersonation
    body.w.zeros(16);
    body.w.u32(access);
    body.w.u32(0);  // FileAttributes
    body.w.u32(share);
    body.w.u32(disposition);
    body.w.u32(options);
    body.w.u16(uint16_t(wire::kHeaderSize + 56));
    body.w.u16(uint16_t(n.size()));
    body.w.u32(0);
    body.w.u32(0);
    body.w.bytes(n);
    if (n.empty()) body.w.u8(0);
    Response r = call(handle_create, wire::Command::Create, body.b);
    if (r.status == NtStatus::Success) id = {r.u64(64), r.u64(72)};
    return r.status;
  }
  FileId open_file(std::string_view name, uint32_t access = FILE_ALL_ACCESS, uint32_t disposition = kOpenIf,
                   uint32_t options = kNonDirectoryFile) {
    FileId id;
    NtStatus s = create(name, access, disposition, options, id);
    if (s != NtStatus::Success) throw std::runtime_error("create failed: " + std::string(nt_status_name(s)));
    return id;
  }
  FileId open_dir(std::string_view name, uint32_t access = FILE_ALL_ACCESS, uint32_t disposition = kOpenIf) {
    return open_file(name, access, disposition, kDirectoryFile);
  }
  void close(FileId id) { close_open(conn, server, id.volatile_id); }
  state::Open* find(FileId id) {
    auto it = conn.tables->opens.find(id.volatile_id);
    return it == conn.tables->opens.end() ? nullptr : it->second.get();
  }

  ServerContext server;
  ConnState conn;
  state::Session* session = nullptr;
  state::Tree* tree = nullptr;

 private:
  std::filesystem::path dir_;
};

}  // namespace ringsmb::smb2::test
