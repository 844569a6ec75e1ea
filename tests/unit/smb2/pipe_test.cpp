// IPC$ named pipes through the SMB2 handlers and the in-process control
// plane: CREATE, WRITE/READ in message mode, FSCTL_PIPE_TRANSCEIVE and
// FSCTL_PIPE_WAIT, QUERY_INFO, CLOSE, and what reaches the control plane.
#include <catch2/catch.hpp>

#include <set>
#include <utility>

#include "control/local_control_plane.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/commands/teardown.hpp"
#include "smb2/engine/processor.hpp"

#include "../rpc/rpc_client.hpp"
#include "fixture.hpp"
#include "ipc/control_plane.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;
using wire::Command;

namespace {

constexpr uint32_t kTransceive = 0x0011C017;
constexpr uint32_t kPipeWait = 0x00110018;
constexpr FileId kNoFile{~0ull, ~0ull};

// The in-process control plane, with a record of the pipes left open.
class RecordingControlPlane final : public ipc::ControlPlane {
 public:
  explicit RecordingControlPlane(const config::Config& cfg) : inner_(control::make_local_control_plane(cfg)) {}
  ipc::LoginReply login(const ipc::LoginRequest& r) override { return inner_->login(r); }
  ipc::TreeConnectReply tree_connect(const ipc::TreeConnectRequest& r) override { return inner_->tree_connect(r); }
  void tree_disconnect(const std::string& s, const std::string& u) override { inner_->tree_disconnect(s, u); }
  void logout(const std::string& u) override { inner_->logout(u); }
  std::string workgroup() const override { return inner_->workgroup(); }
  std::string netbios_name() const override { return inner_->netbios_name(); }
  ipc::PipeReply pipe_open(const ipc::PipeOpenRequest& r) override {
    last_user = r.user;
    auto reply = inner_->pipe_open(r);
    if (reply.status == NtStatus::Success) open.insert(r.handle);
    return reply;
  }
  ipc::PipeReply pipe_write(uint32_t h, ByteSpan d) override { return inner_->pipe_write(h, d); }
  ipc::PipeReply pipe_read(uint32_t h, uint32_t max) override { return inner_->pipe_read(h, max); }
  ipc::PipeReply pipe_transceive(uint32_t h, ByteSpan in, uint32_t max) override {
    return inner_->pipe_transceive(h, in, max);
  }
  void pipe_close(uint32_t h) override {
    open.erase(h);
    inner_->pipe_close(h);
  }

  std::set<uint32_t> open;
  std::string last_user;

 private:
  std::unique_ptr<ipc::ControlPlane> inner_;
};

// The fixture's session, with an IPC$ tree (id 2) made current.
struct PipeFixture : Smb2Fixture {
  PipeFixture() : control((server.config = rpc_test::test_config(), server.config)) {
    server.control = &control;
    session->user = "alice";
    auto t = std::make_unique<state::Tree>();
    t->tree_id = 2;
    t->share.name = "IPC$";
    t->share.is_ipc = true;
    t->maximal_access = FILE_ALL_ACCESS;
    disk_tree = tree;
    tree = t.get();
    session->trees.emplace(2, std::move(t));
  }
  ~PipeFixture() {
    // Close pipes before the control plane goes.
    while (!conn.tables->opens.empty()) close_open(conn, server, conn.tables->opens.begin()->first);
  }
  FileId open_pipe(std::string_view name) {
    FileId id;
    NtStatus s = create(name, FILE_GENERIC_READ | FILE_GENERIC_WRITE, kOpen, 0, id);
    if (s != NtStatus::Success) throw std::runtime_error("pipe open failed: " + std::string(nt_status_name(s)));
    return id;
  }

  RecordingControlPlane control;
  state::Tree* disk_tree = nullptr;
};

Bytes srvsvc_bind(uint32_t call_id = 1) {
  return rpc_test::build_bind(call_id, {{rpc::srvsvc_interface().syntax, rpc::ndr20_syntax()}});
}

Bytes write_body(FileId id, ByteSpan data) {
  Bytes b;
  ByteWriter w(b);
  w.u16(49);
  w.u16(64 + 48);
  w.u32(uint32_t(data.size()));
  w.u64(0);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  w.zeros(12);
  w.u32(0);
  w.bytes(data);
  return b;
}

Bytes read_body(FileId id, uint32_t length) { return test::read_body(id, 0, length); }

Bytes query_body(FileId id, uint8_t cls, uint32_t out_len, uint8_t type = 1) {
  Bytes b;
  ByteWriter w(b);
  w.u16(41);
  w.u8(type);
  w.u8(cls);
  w.u32(out_len);
  w.u16(0);
  w.u16(0);
  w.u32(0);
  w.u32(0);
  w.u32(0);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  return b;
}

Bytes pipe_wait_input(std::string_view name) {
  Bytes b, n = u16le(name);
  ByteWriter w(b);
  w.u64(0);
  w.u32(uint32_t(n.size()));
  w.u8(0);
  w.u8(0);
  w.bytes(n);
  return b;
}

// READ's data (DataOffset 80 counts from the header: 16 into the body).
Bytes read_data(const Response& r) {
  REQUIRE(r.body.size() >= 16);
  uint32_t len = r.u32(4);
  REQUIRE(r.body.size() >= 16 + len);
  return Bytes(r.body.begin() + 16, r.body.begin() + 16 + len);
}

Bytes ioctl_output(const Response& r) {
  REQUIRE(r.body.size() >= 48);
  uint32_t off = r.u32(32) - 64, len = r.u32(36);
  REQUIRE(r.body.size() >= off + len);
  return Bytes(r.body.begin() + off, r.body.begin() + off + len);
}

}  // namespace

TEST_CASE("pipe: CREATE opens the pipes we serve and nothing else", "[smb2][pipe]") {
  PipeFixture fx;
  for (const char* name : {"srvsvc", "wkssvc", "lsarpc", "samr", "SRVSVC"}) {
    FileId id;
    REQUIRE(fx.create(name, FILE_GENERIC_READ | FILE_GENERIC_WRITE, kOpen, 0, id) == NtStatus::Success);
    const state::Open* open = fx.find(id);
    REQUIRE(open);
    CHECK(fx.conn.tables->pipes.count(id.volatile_id) == 1);
  }
  CHECK(fx.control.open.size() == 5);
  CHECK(fx.control.last_user == "alice");
  FileId id;
  CHECK(fx.create("nosuchpipe", FILE_GENERIC_READ, kOpen, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(fx.create("srvsvc\\x", FILE_GENERIC_READ, kOpen, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(fx.create("\\srvsvc", FILE_GENERIC_READ, kOpen, 0, id) == NtStatus::InvalidParameter);  // MS-SMB2 2.2.13
  CHECK(fx.control.open.size() == 5);
  CHECK(fx.conn.tables->opens.size() == 5);
}

TEST_CASE("pipe: CREATE response describes a pipe", "[smb2][pipe]") {
  PipeFixture fx;
  Body body;
  Bytes n = u16le("srvsvc");
  body.w.u16(57);
  body.w.u8(0);
  body.w.u8(8);  // batch oplock asked for: not granted on a pipe
  body.w.u32(2);
  body.w.zeros(16);
  body.w.u32(FILE_GENERIC_READ | FILE_GENERIC_WRITE);
  body.w.u32(0);
  body.w.u32(kShareAll);
  body.w.u32(kOpen);
  body.w.u32(0);
  body.w.u16(uint16_t(wire::kHeaderSize + 56));
  body.w.u16(uint16_t(n.size()));
  body.w.u32(0);
  body.w.u32(0);
  body.w.bytes(n);
  Response r = fx.call(handle_create, Command::Create, body.b);
  REQUIRE(r.status == NtStatus::Success);
  CHECK(r.u16(0) == 89);
  CHECK(r.body[2] == 0);      // OplockLevel
  CHECK(r.u32(4) == 1);       // FILE_OPENED
  CHECK(r.u64(48) == 0);      // EndOfFile
  CHECK(r.u32(56) == 0x80);   // FILE_ATTRIBUTE_NORMAL
  CHECK(r.u32(80) == 0);      // no create contexts
}

TEST_CASE("pipe: WRITE then READ in message mode, with BUFFER_OVERFLOW", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("srvsvc");
  Bytes bind = srvsvc_bind();
  Response w = fx.call(handle_write, Command::Write, write_body(id, bind));
  REQUIRE(w.status == NtStatus::Success);
  CHECK(w.u32(4) == bind.size());
  CHECK(fx.conn.async.ready.empty());

  Response part = fx.call(handle_read, Command::Read, read_body(id, 10));
  REQUIRE(part.status == NtStatus::BufferOverflow);
  Bytes ack = read_data(part);
  CHECK(ack.size() == 10);
  Response rest = fx.call(handle_read, Command::Read, read_body(id, 4096));
  REQUIRE(rest.status == NtStatus::Success);
  Bytes tail = read_data(rest);
  ack.insert(ack.end(), tail.begin(), tail.end());
  auto h = rpc::parse_header(ack);
  REQUIRE(h);
  CHECK(h->type == rpc::PduType::BindAck);
  CHECK(h->frag_length == ack.size());
}

// The final response queued for an async request, parsed.
struct Late {
  wire::Header hdr;
  Bytes body;
};

Late take_late(ConnState& conn) {
  REQUIRE(conn.async.ready.size() == 1);
  Late l;
  Bytes msg = conn.async.ready[0].message;
  REQUIRE(wire::parse_header(msg, l.hdr));
  l.body.assign(msg.begin() + 64, msg.end());
  conn.async.ready.clear();
  return l;
}

TEST_CASE("pipe: a READ on an empty pipe waits for the next WRITE", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("srvsvc");
  Response pending = fx.call(handle_read, Command::Read, read_body(id, 4096));
  REQUIRE(pending.status == NtStatus::Pending);
  REQUIRE(fx.conn.async.waiting.size() == 1);
  uint64_t async_id = fx.conn.async.waiting.begin()->first;
  CHECK(async_id != 0);
  CHECK(pending.async_id == async_id);  // for the interim response's header

  // A second READ queues behind the first.
  REQUIRE(fx.call(handle_read, Command::Read, read_body(id, 16)).status == NtStatus::Pending);
  REQUIRE(fx.conn.async.waiting.size() == 2);

  Bytes bind = srvsvc_bind();
  REQUIRE(fx.call(handle_write, Command::Write, write_body(id, bind)).status == NtStatus::Success);
  Late l = take_late(fx.conn);
  CHECK(l.hdr.is_async());
  CHECK(l.hdr.async_id == async_id);
  CHECK(l.hdr.command == Command::Read);
  CHECK(l.hdr.credits == 0);  // granted with the interim response
  CHECK(l.hdr.status == 0);
  REQUIRE(l.body.size() > 16);
  Bytes ack(l.body.begin() + 16, l.body.end());
  auto h = rpc::parse_header(ack);
  REQUIRE(h);
  CHECK(h->type == rpc::PduType::BindAck);
  CHECK(fx.conn.async.waiting.size() == 1);  // the second still waits

  // A second bind is answered with a bind_nak, longer than the 16 asked.
  REQUIRE(fx.call(handle_write, Command::Write, write_body(id, srvsvc_bind(2))).status == NtStatus::Success);
  Late l2 = take_late(fx.conn);
  CHECK(l2.hdr.status == uint32_t(NtStatus::BufferOverflow));
  CHECK(load_le32(l2.body.data() + 4) == 16);
  Response rest = fx.call(handle_read, Command::Read, read_body(id, 4096));
  CHECK(rest.status == NtStatus::Success);
  CHECK(fx.conn.async.waiting.empty());
}

TEST_CASE("pipe: CANCEL and CLOSE end a waiting READ with STATUS_CANCELLED", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("lsarpc");
  Response pending = fx.call(handle_read, Command::Read, read_body(id, 100));
  REQUIRE(pending.status == NtStatus::Pending);
  uint64_t async_id = pending.async_id;
  wire::Header other{};
  other.flags = wire::SMB2_FLAGS_ASYNC_COMMAND;
  other.async_id = async_id + 100;
  cancel_request(fx.conn, fx.server, other);
  CHECK(fx.conn.async.ready.empty());
  wire::Header cancel{};
  cancel.flags = wire::SMB2_FLAGS_ASYNC_COMMAND;
  cancel.async_id = async_id;
  cancel_request(fx.conn, fx.server, cancel);
  Late l = take_late(fx.conn);
  CHECK(l.hdr.status == uint32_t(NtStatus::Cancelled));
  CHECK(l.body.size() == 9);  // ERROR response
  CHECK(fx.conn.async.waiting.empty());
  cancel_request(fx.conn, fx.server, cancel);  // twice: nothing left to cancel
  CHECK(fx.conn.async.ready.empty());

  REQUIRE(fx.call(handle_read, Command::Read, read_body(id, 100)).status == NtStatus::Pending);
  fx.close(id);
  Late closed = take_late(fx.conn);
  CHECK(closed.hdr.status == uint32_t(NtStatus::Cancelled));
  CHECK(fx.conn.async.waiting.empty());
}

TEST_CASE("pipe: waiting READs come out as frames, encrypted or signed as asked", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("srvsvc");
  fx.session->keys.signing_key = Bytes(16, 0x5A);
  fx.session->signing_required = true;
  fx.conn.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
  REQUIRE(fx.call(handle_read, Command::Read, read_body(id, 4096)).status == NtStatus::Pending);
  REQUIRE(fx.conn.async.waiting.begin()->second.seal.sign);
  REQUIRE(fx.call(handle_write, Command::Write, write_body(id, srvsvc_bind())).status == NtStatus::Success);
  Bytes out = {1, 2, 3};
  send_ready(fx.conn, fx.server, out);
  REQUIRE(out.size() > 3 + 4 + 64);
  size_t len = (size_t(out[4]) << 16) | (size_t(out[5]) << 8) | out[6];
  CHECK(out[3] == 0);
  REQUIRE(out.size() == 3 + 4 + len);
  ByteSpan msg(out.data() + 7, len);
  CHECK(crypto::verify_message(crypto::SigningAlgorithm::AesCmac, fx.session->keys.signing_key, msg));
  CHECK(fx.conn.async.ready.empty());

  // A session gone meanwhile: the response still goes out, signed with
  // the key the request had (smb2.lock.cancel-logoff expects it).
  REQUIRE(fx.call(handle_read, Command::Read, read_body(id, 4096)).status == NtStatus::Pending);
  Bytes key = fx.session->keys.signing_key;
  fx.conn.tables->sessions.clear();
  fx.session = nullptr;
  std::vector<uint64_t> ids;
  for (auto& [aid, w] : fx.conn.async.waiting) ids.push_back(aid);
  REQUIRE(ids.size() == 1);
  REQUIRE(complete(fx.conn, ids[0], NtStatus::Cancelled));
  Bytes late;
  send_ready(fx.conn, fx.server, late);
  REQUIRE(late.size() > 4 + 64);
  CHECK(crypto::verify_message(crypto::SigningAlgorithm::AesCmac, key, ByteSpan(late).subspan(4)));
}

TEST_CASE("pipe: a broken DCE/RPC stream fails the WRITE with PIPE_BROKEN", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("lsarpc");
  Bytes junk(64, 0xEE);  // not a DCE/RPC header
  CHECK(fx.call(handle_write, Command::Write, write_body(id, junk)).status == NtStatus::PipeBroken);
  // A bad write body still fails as a malformed request.
  Bytes bad = write_body(id, junk);
  store_le16(bad.data() + 2, 0xFFF0);  // DataOffset past the end
  CHECK(fx.call(handle_write, Command::Write, bad).status == NtStatus::InvalidParameter);
}

TEST_CASE("pipe: FSCTL_PIPE_TRANSCEIVE, partial with BUFFER_OVERFLOW, rest by READ", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("srvsvc");
  Response full = fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kTransceive, id, srvsvc_bind(1), 4096));
  REQUIRE(full.status == NtStatus::Success);
  CHECK(full.u32(4) == kTransceive);
  CHECK(full.u64(8) == id.persistent);
  Bytes ack = ioctl_output(full);
  auto h = rpc::parse_header(ack);
  REQUIRE(h);
  CHECK(h->type == rpc::PduType::BindAck);

  // A second bind on the same pipe is refused with a bind_nak: a message too.
  Response part = fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kTransceive, id, srvsvc_bind(2), 16));
  REQUIRE(part.status == NtStatus::BufferOverflow);
  Bytes nak = ioctl_output(part);
  CHECK(nak.size() == 16);
  Response rest = fx.call(handle_read, Command::Read, read_body(id, 4096));
  REQUIRE(rest.status == NtStatus::Success);
  Bytes tail = read_data(rest);
  nak.insert(nak.end(), tail.begin(), tail.end());
  auto nh = rpc::parse_header(nak);
  REQUIRE(nh);
  CHECK(nh->type == rpc::PduType::BindNak);
  CHECK(nh->frag_length == nak.size());

  Response zero = fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kTransceive, id, Bytes(), 4096));
  CHECK(zero.status == NtStatus::PipeEmpty);  // a transceive never waits
}

TEST_CASE("pipe: TRANSCEIVE on a file, WAIT for known and unknown pipes", "[smb2][pipe]") {
  PipeFixture fx;
  fx.tree = fx.disk_tree;
  FileId file = fx.open_file("f.txt");
  CHECK(fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kTransceive, file, srvsvc_bind(), 4096)).status ==
        NtStatus::NotSupported);
  CHECK(fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kPipeWait, kNoFile, pipe_wait_input("srvsvc"), 0)).status ==
        NtStatus::NotSupported);  // not a named pipe share
  fx.tree = fx.session->trees.at(2).get();
  CHECK(fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kPipeWait, kNoFile, pipe_wait_input("samr"), 0)).status ==
        NtStatus::Success);
  CHECK(fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kPipeWait, kNoFile, pipe_wait_input("nope"), 0)).status ==
        NtStatus::ObjectNameNotFound);
  Bytes truncated = pipe_wait_input("samr");
  truncated.resize(16);
  CHECK(fx.call(handle_ioctl, Command::Ioctl, ioctl_body(kPipeWait, kNoFile, truncated, 0)).status ==
        NtStatus::InvalidParameter);
}

TEST_CASE("pipe: QUERY_INFO answers the pipe classes", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("wkssvc");
  Response std_info = fx.call(handle_query_info, Command::QueryInfo, query_body(id, 5, 24));
  REQUIRE(std_info.status == NtStatus::Success);
  REQUIRE(std_info.u32(4) == 24);
  CHECK(std_info.u32(8 + 16) == 1);  // NumberOfLinks
  CHECK(std_info.body[8 + 21] == 0);  // not a directory
  Response pipe_info = fx.call(handle_query_info, Command::QueryInfo, query_body(id, 23, 64));
  REQUIRE(pipe_info.status == NtStatus::Success);
  CHECK(pipe_info.u32(8) == 1);  // FILE_PIPE_MESSAGE_MODE
  Response local = fx.call(handle_query_info, Command::QueryInfo, query_body(id, 24, 40));
  REQUIRE(local.status == NtStatus::Success);
  CHECK(local.u32(8 + 32) == 3);  // FILE_PIPE_CONNECTED_STATE
  CHECK(fx.call(handle_query_info, Command::QueryInfo, query_body(id, 5, 23)).status ==
        NtStatus::InfoLengthMismatch);
  CHECK(fx.call(handle_query_info, Command::QueryInfo, query_body(id, 18, 4096)).status ==
        NtStatus::InvalidParameter);  // FileAllInformation: not for a pipe
  CHECK(fx.call(handle_query_info, Command::QueryInfo, query_body(id, 1, 4096, 2)).status ==
        NtStatus::NotSupported);  // filesystem information
}

TEST_CASE("pipe: CLOSE, tree disconnect and connection teardown close the control plane's pipe", "[smb2][pipe]") {
  PipeFixture fx;
  FileId a = fx.open_pipe("srvsvc");
  FileId b = fx.open_pipe("samr");
  REQUIRE(fx.control.open.size() == 2);
  Bytes close_body;
  {
    ByteWriter w(close_body);
    w.u16(24);
    w.u16(1);  // POSTQUERY_ATTRIB: nothing to stat on a pipe, still fine
    w.u32(0);
    w.u64(a.persistent);
    w.u64(a.volatile_id);
  }
  Response c = fx.call(handle_close, Command::Close, close_body);
  CHECK(c.status == NtStatus::Success);
  CHECK(fx.control.open.size() == 1);
  CHECK(fx.find(a) == nullptr);
  CHECK(fx.conn.tables->pipes.count(a.volatile_id) == 0);
  CHECK(fx.call(handle_read, Command::Read, read_body(a, 10)).status == NtStatus::FileClosed);

  Response td = fx.call(handle_tree_disconnect, Command::TreeDisconnect, Bytes{4, 0, 0, 0});
  CHECK(td.status == NtStatus::Success);
  CHECK(fx.control.open.empty());
  CHECK(fx.conn.tables->pipes.empty());
  (void)b;
}

TEST_CASE("pipe: a pipe the control plane lost reads as broken", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("srvsvc");
  fx.control.pipe_close(fx.conn.tables->pipes.at(id.volatile_id).handle);  // e.g. ringsmb-ctld restarted
  CHECK(fx.call(handle_read, Command::Read, read_body(id, 10)).status == NtStatus::PipeBroken);
  CHECK(fx.call(handle_write, Command::Write, write_body(id, srvsvc_bind())).status == NtStatus::PipeBroken);
}

namespace {

Bytes set_pipe_info_body(FileId id, uint32_t read_mode, uint32_t completion, uint8_t cls = 23, uint8_t type = 1) {
  Bytes b;
  ByteWriter w(b);
  w.u16(33);
  w.u8(type);
  w.u8(cls);
  w.u32(8);
  w.u16(64 + 32);
  w.u16(0);
  w.u32(0);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  w.u32(read_mode);
  w.u32(completion);
  return b;
}

}  // namespace

TEST_CASE("pipe: SET_INFO FilePipeInformation sets the read mode", "[smb2][pipe]") {
  PipeFixture fx;
  FileId id = fx.open_pipe("lsarpc");
  CHECK(fx.call(handle_set_info, Command::SetInfo, set_pipe_info_body(id, 1, 0)).status == NtStatus::Success);
  CHECK(fx.call(handle_set_info, Command::SetInfo, set_pipe_info_body(id, 2, 0)).status ==
        NtStatus::InvalidParameter);
  CHECK(fx.call(handle_set_info, Command::SetInfo, set_pipe_info_body(id, 1, 7)).status ==
        NtStatus::InvalidParameter);
  CHECK(fx.call(handle_set_info, Command::SetInfo, set_pipe_info_body(id, 1, 0, 4)).status ==
        NtStatus::InvalidParameter);  // FileBasicInformation: not on a pipe
  CHECK(fx.call(handle_set_info, Command::SetInfo, set_pipe_info_body(id, 1, 0, 23, 3)).status ==
        NtStatus::NotSupported);  // security

  // Byte-stream mode: a short read of a longer message is not an overflow.
  REQUIRE(fx.call(handle_set_info, Command::SetInfo, set_pipe_info_body(id, 0, 0)).status == NtStatus::Success);
  Response mode = fx.call(handle_query_info, Command::QueryInfo, query_body(id, 23, 8));
  REQUIRE(mode.status == NtStatus::Success);
  CHECK(mode.u32(8) == 0);
  Bytes bind = rpc_test::build_bind(1, {{rpc::lsarpc_interface().syntax, rpc::ndr20_syntax()}});
  REQUIRE(fx.call(handle_write, Command::Write, write_body(id, bind)).status == NtStatus::Success);
  Response part = fx.call(handle_read, Command::Read, read_body(id, 10));
  CHECK(part.status == NtStatus::Success);
  CHECK(read_data(part).size() == 10);
  Response rest = fx.call(handle_read, Command::Read, read_body(id, 4096));
  CHECK(rest.status == NtStatus::Success);
  CHECK(read_data(rest).size() > 10);
}

TEST_CASE("pipe: one connection opens at most 256 pipes", "[smb2][pipe]") {
  PipeFixture fx;
  for (int i = 0; i < 256; ++i) fx.open_pipe("srvsvc");
  FileId id;
  CHECK(fx.create("srvsvc", FILE_GENERIC_READ, kOpen, 0, id) == NtStatus::InsufficientResources);
  CHECK(fx.control.open.size() == 256);
  fx.close(FileId{fx.conn.tables->pipes.begin()->first, fx.conn.tables->pipes.begin()->first});
  CHECK(fx.create("srvsvc", FILE_GENERIC_READ, kOpen, 0, id) == NtStatus::Success);
}

TEST_CASE("pipe: a waiting READ and a waiting CREATE share the AsyncIds, CANCEL and teardown", "[smb2][pipe][oplock]") {
  PipeFixture fx;
  QueuedPoster poster;
  fx.server.poster = &poster;
  FileId pipe = fx.open_pipe("srvsvc");
  Bytes out;
  REQUIRE(process_frame(fx.conn, fx.server, request_frame(Command::Echo, {4, 0, 0, 0}, 0, 1, 32), out) ==
          FrameResult::Ok);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, request_frame(Command::Create, create_body("b.txt", kOpenIf, 9), 1, 1),
                        out) == FrameResult::Ok);
  REQUIRE(response_header(out).status == 0);

  // A second open of b.txt waits for the batch break; a READ on the empty pipe waits too.
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, request_frame(Command::Create, create_body("b.txt", kOpenIf, 9), 2, 1),
                        out) == FrameResult::Ok);
  wire::Header create_interim = response_header(out);
  CHECK(create_interim.status == uint32_t(NtStatus::Pending));
  CHECK(create_interim.is_async());
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, request_frame(Command::Read, read_body(pipe, 100), 3, 2), out) ==
          FrameResult::Ok);
  wire::Header read_interim = response_header(out);
  CHECK(read_interim.status == uint32_t(NtStatus::Pending));
  CHECK(read_interim.is_async());
  CHECK(read_interim.async_id != 0);
  CHECK(read_interim.async_id != create_interim.async_id);  // one counter per connection
  REQUIRE(fx.conn.async.waiting.size() == 2);
  CHECK(fx.conn.async.waiting.at(create_interim.async_id).kind == WaitKind::RunAgain);
  CHECK(fx.conn.async.waiting.at(read_interim.async_id).kind == WaitKind::PipeRead);
  poster.run_all(fx.conn);  // the break notification

  // CANCEL by MessageId finds the READ: answered after the (empty) frame.
  Bytes cancel_read = request_frame(Command::Cancel, {4, 0, 0, 0}, 3, 2);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, cancel_read, out) == FrameResult::Ok);
  wire::Header read_final = response_header(out);
  CHECK(read_final.command == Command::Read);
  CHECK(read_final.status == uint32_t(NtStatus::Cancelled));
  CHECK(read_final.async_id == read_interim.async_id);
  CHECK(fx.conn.async.waiting.size() == 1);

  // CANCEL by AsyncId finds the CREATE: its chain runs again after the
  // frame, the CREATE answered STATUS_CANCELLED.
  Bytes cancel_create = request_frame(Command::Cancel, {4, 0, 0, 0}, 0, 1);
  store_le32(cancel_create.data() + wire::hdr::Flags, wire::SMB2_FLAGS_ASYNC_COMMAND);
  store_le64(cancel_create.data() + wire::hdr::AsyncId, create_interim.async_id);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, cancel_create, out) == FrameResult::Ok);
  wire::Header create_final = response_header(out);
  CHECK(create_final.command == Command::Create);
  CHECK(create_final.status == uint32_t(NtStatus::Cancelled));
  CHECK(create_final.async_id == create_interim.async_id);
  CHECK(fx.conn.async.waiting.empty());

  // Both kinds waiting when the connection goes: teardown drops both.
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, request_frame(Command::Create, create_body("b.txt", kOpenIf, 9), 4, 1),
                        out) == FrameResult::Ok);
  out.clear();
  REQUIRE(process_frame(fx.conn, fx.server, request_frame(Command::Read, read_body(pipe, 100), 5, 2), out) ==
          FrameResult::Ok);
  REQUIRE(fx.conn.async.waiting.size() == 2);
  teardown_connection(fx.conn, fx.server);
  CHECK(fx.conn.async.waiting.empty());
  CHECK(fx.conn.async.ready.empty());
  CHECK(fx.conn.tables->opens.empty());
  CHECK(fx.control.open.empty());
  fx.server.poster = nullptr;
}
