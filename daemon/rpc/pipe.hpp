// The DCE/RPC endpoint behind one open of an IPC$ named pipe ("srvsvc",
// "wkssvc", "lsarpc", "samr"). It knows nothing of SMB2: the SMB2 layer
// feeds it the bytes of WRITE requests and drains READ responses (or does
// both for FSCTL_PIPE_TRANSCEIVE). Per the design it runs in the control
// plane, next to the configuration and the user database.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"
#include "config/config.hpp"

namespace ringsmb::rpc {

// A user account as LSA and SAMR name it.
struct Account {
  std::string name;  // as stored (the SMB name, or the Unix login)
  uint32_t uid = 0;
  bool smb_user = false;  // in the ringsmb user database
};

// Where the RPC interfaces look accounts up. The system implementation
// reads the user database and the Unix account database; tests inject
// their own.
class AccountSource {
 public:
  virtual ~AccountSource() = default;
  // SMB users first (case-insensitive), then Unix logins.
  virtual std::optional<Account> user_by_name(std::string_view name) const = 0;
  // The SMB user mapped to this uid if there is one, else the Unix login.
  virtual std::optional<Account> user_by_uid(uint32_t uid) const = 0;
  virtual std::optional<uint32_t> group_by_name(std::string_view name) const = 0;
  virtual std::optional<std::string> group_by_gid(uint32_t gid) const = 0;
  // Every SMB user whose Unix user exists, in database order.
  virtual std::vector<Account> smb_users() const = 0;
};

// UserDb::load(config.global.users_db) once, plus getpwnam/getpwuid and
// getgrnam/getgrgid on each lookup.
std::shared_ptr<const AccountSource> make_system_accounts(const config::Config& config);

struct RpcContext {
  const config::Config* config = nullptr;  // required (open fails without it); must outlive the pipe
  std::string user;                        // the session's account name
  bool is_guest = false;
  std::shared_ptr<const AccountSource> accounts;  // null: make_system_accounts(*config)
  std::string home_share;  // the caller's own home share ([homes]); empty: none
};

// True for a pipe name open() accepts (same matching).
bool pipe_served(std::string_view pipe_name);

struct PipeState;  // bound contexts, handle table, call reassembly

// One per open of a pipe. Not thread-safe: the owner serializes calls (the
// SMB2 layer already does per open).
class RpcPipe {
 public:
  // nullptr for a pipe we do not serve. `pipe_name` is matched
  // case-insensitively, with or without a leading "\PIPE\" (or "\").
  static std::unique_ptr<RpcPipe> open(std::string_view pipe_name, const RpcContext& ctx);
  ~RpcPipe();
  RpcPipe(const RpcPipe&) = delete;
  RpcPipe& operator=(const RpcPipe&) = delete;

  // Client bytes from a WRITE: any part of one or more PDUs. False on a
  // protocol error the client cannot recover from (the SMB2 layer then
  // fails the write, e.g. with STATUS_INVALID_PARAMETER, or closes the
  // pipe); errors the client can handle come back as fault or bind_nak PDUs.
  bool write(ByteSpan data);
  // Message mode, as Windows' RPC pipes: up to `max` bytes of the next
  // queued response PDU, never spanning two PDUs. `more` is set when the
  // PDU has bytes left: the caller answers STATUS_BUFFER_OVERFLOW and the
  // client reads the rest. Further PDUs (a fragmented response) stay queued
  // for the next read; pending_bytes() counts them. Empty when nothing is
  // pending (Windows would block; the caller picks the status).
  Bytes read(size_t max, bool& more);
  // FSCTL_PIPE_TRANSCEIVE: write(in), then read(max_out, more).
  bool transceive(ByteSpan in, size_t max_out, Bytes& out, bool& more);
  size_t pending_bytes() const;
  // The canonical lower-case name ("srvsvc").
  const std::string& name() const;

 private:
  explicit RpcPipe(std::unique_ptr<PipeState> state);
  std::unique_ptr<PipeState> state_;
};

}  // namespace ringsmb::rpc
