// State shared by every connection and worker of one ringsmbd.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "common/bytes.hpp"
#include "config/config.hpp"
#include "ipc/control_plane.hpp"
#include "state/file_table.hpp"
#include "vfs/name_index.hpp"

namespace ringsmb::smb2 {

struct ServerContext {
  config::Config config;
  ipc::ControlPlane* control = nullptr;
  state::FileTable files;
  vfs::NameIndexCache names;
  std::array<uint8_t, 16> server_guid{};
  uint64_t start_time = 0;  // FILETIME
  Bytes negotiate_hint;     // SPNEGO NegTokenInit for NEGOTIATE responses
  std::atomic<uint64_t> next_session_id{1};
  std::atomic<uint64_t> next_file_id{1};
  // Sizes advertised in NEGOTIATE (the config's smb2 max read/write/trans).
  uint32_t max_read = 0, max_write = 0, max_trans = 0;
  // Open TCP connections over all workers, for "max connections".
  std::atomic<uint32_t> connections{0};
};

}  // namespace ringsmb::smb2
