// Shared by the SMB2 fuzz targets (fuzz_smb2_frame, fuzz_transform): the
// connection each input runs on, and the message ids its chains get.
#pragma once

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/bytes.hpp"
#include "smb2/fixture.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::fuzz {

// Inputs may ask for files of any size (EndOfFile, AllocationSize, WRITE
// offsets): a reservation near the disk's free space succeeds, and a run of
// such inputs took tens of GB from this machine's disk for a moment, and
// left gigabytes behind in /tmp. As root, the share DIR becomes a 64 MiB
// tmpfs in a mount namespace of our own; the scratch directory itself is
// removed when the process exits (the targets' worlds live to the end).
inline void confine_share(const std::filesystem::path& dir, const char* target) {
  static std::string scratch;
  scratch = dir.string();
  std::atexit([] {
    umount2(scratch.c_str(), MNT_DETACH);
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
  });
  if (unshare(CLONE_NEWNS) == 0 && mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
      mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64m") == 0)
    return;
  std::fprintf(stderr, "%s: no tmpfs for the share (%s); its files may grow large\n", target, std::strerror(errno));
}

// Gives every element of the chain in `frame` the next message id, so the
// credit window accepts it.
void renumber(Bytes& frame, uint64_t& next_mid) {
  size_t off = 0;
  while (frame.size() - off >= wire::kHeaderSize && load_le32(frame.data() + off) == wire::kProtocolIdSmb2) {
    uint16_t charge = std::max<uint16_t>(load_le16(frame.data() + off + wire::hdr::CreditCharge), 1);
    store_le64(frame.data() + off + wire::hdr::MessageId, next_mid);
    next_mid += charge;
    uint32_t next = load_le32(frame.data() + off + wire::hdr::NextCommand);
    if (next == 0 || next > frame.size() - off) break;
    off += next;
  }
}

// A connection as after NEGOTIATE and SESSION_SETUP, with a tree on DIR and
// a credit window wide enough for every frame of one input; its session.
inline state::Session* open_connection(smb2::ConnState& conn, const std::filesystem::path& dir) {
  conn.framing = &transport::direct_tcp_framing();
  state::Session* session = nullptr;
  smb2::test::add_session_and_tree(conn, dir, session);
  conn.credits.consume(0, 1);
  conn.credits.grant(8192, 8192);
  conn.credits.commit();
  conn.supports_multi_credit = true;
  return session;
}

}  // namespace ringsmb::fuzz
