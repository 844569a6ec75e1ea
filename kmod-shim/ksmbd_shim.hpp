// What ringsmb-ctld answers ksmbd.ko (data plane = ksmbd): the kernel's
// events (kmod-shim/ksmbd_abi.hpp) translated to the same policy engine
// that answers ringsmbd (control::make_local_control_plane: shares, tree
// connect decisions, IPC$ pipes with the same DCE/RPC code), plus the one
// thing only this mode does: handing the kernel a user's NT hash, because
// ksmbd verifies NTLMv2 itself (docs/kmod-shim.md).
//
// No kernel needed: the unit tests drive handle() with raw payloads.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "config/config.hpp"
#include "ipc/control_plane.hpp"

namespace ringsmb::kmod {

struct KernelReply {
  uint8_t event = 0;
  Bytes payload;
};

class KsmbdShim {
 public:
  explicit KsmbdShim(config::Config cfg);
  ~KsmbdShim();

  // After a reload: new policy; every share's next tree connect tells the
  // kernel to fetch its configuration again.
  void reload(const config::Config& cfg);
  // The answer to one kernel event, or nothing (events without answers,
  // and malformed ones, which are logged).
  std::optional<KernelReply> handle(uint8_t event, ByteSpan payload);

 private:
  Bytes on_login(ByteSpan p);
  Bytes on_share_config(ByteSpan p);
  Bytes on_tree_connect(ByteSpan p);
  Bytes on_rpc(ByteSpan p);
  Bytes on_spnego(ByteSpan p);

  config::Config cfg_;
  std::unique_ptr<ipc::ControlPlane> policy_;
  std::set<std::string> shares_to_update_;  // lower-case names
};

// STARTING_UP's payload from the [global] section. One line is added to
// WARNINGS for every configured option ksmbd cannot honour (global or per
// share), so nothing is dropped silently.
Bytes make_startup_request(const config::Config& cfg, std::vector<std::string>& warnings);

}  // namespace ringsmb::kmod
