// Shared pieces of ringsmbctl's command groups.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "config/config.hpp"
#include "ipc/ctl_abi.hpp"
#include "ipc/ctl_codec.hpp"

namespace ringsmb::ctl {

// Exit codes: the user's contract, listed in the --help footer
// (kExitCodesHelp) and in ringsmbctl(8).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;       // bad configuration, I/O failure, server error
inline constexpr int kExitUsage = 2;       // unknown command or option, missing argument
inline constexpr int kExitNotFound = 3;    // no such share, user, path, session; no domain controller
inline constexpr int kExitExists = 4;      // share already exists, a hand-written avahi file
inline constexpr int kExitPermission = 5;  // permission denied (run as root); the domain refused the credentials
inline constexpr int kExitNotRunning = 6;  // the server is not running
inline constexpr const char* kExitCodesHelp =
    "Exit status:\n"
    "  0  success\n"
    "  1  error (invalid configuration, I/O failure, the server refused)\n"
    "  2  usage error (unknown command or option, missing argument)\n"
    "  3  not found (share, user, unix user, path, session), or no domain controller found\n"
    "  4  already exists (share add; discovery avahi: a file written by hand)\n"
    "  5  permission denied (run as root), or the domain refused the account or its rights\n"
    "  6  the server is not running (status, reload, shutdown, session close, file close, share close)";

inline constexpr const char* kDefaultConfig = "/etc/ringsmb/ringsmb.conf";

struct Context {
  std::string config_path = kDefaultConfig;
  bool no_reload = false;  // after an edit, do not ask the running server to reload
  int exit_code = kExitOk;
};

// A failed command: what to print and which exit code.
struct Failure {
  int code = kExitError;
  std::string message;
};

// Prints "ringsmbctl: MESSAGE" on stderr and returns CODE, so commands can
// `return fail(...)`.
int fail(const std::string& message);
int fail(int code, const std::string& message);
int fail(const Failure& f);
// For a configuration or users db that could not be loaded: kExitPermission
// when it was not readable (a user who is not root), else kExitError.
int fail_loading(const std::string& message);

// Parses the configuration; warnings are dropped (config check shows them).
std::expected<config::Config, std::string> load_config(const std::string& path);

void add_user_commands(CLI::App& app, Context& ctx);
void add_share_commands(CLI::App& app, Context& ctx);
void add_config_commands(CLI::App& app, Context& ctx);
void add_daemon_commands(CLI::App& app, Context& ctx);  // reload, shutdown, debug
void add_status_commands(CLI::App& app, Context& ctx);  // status, session close
void add_discovery_commands(CLI::App& app, Context& ctx);  // discovery wsdd, discovery avahi
void add_import_commands(CLI::App& app, Context& ctx);     // import samba, import ksmbd
void add_recycle_commands(CLI::App& app, Context& ctx);    // recycle list, recycle empty
void add_domain_commands(CLI::App& app, Context& ctx);     // domain join, domain leave, domain status
// file close, share close (after add_share_commands).
void add_close_commands(CLI::App& app, Context& ctx);
// user disable, user enable (after add_user_commands).
void add_user_state_commands(CLI::App& app, Context& ctx);
// "0x..." or decimal, the whole text; nullopt otherwise.
std::optional<uint64_t> parse_id(const std::string& text);
// "0x%016x", as status prints session and file ids.
std::string hex_id(uint64_t id);
// Password entry: one line of stdin, or two no-echo prompts on the terminal.
std::expected<std::string, std::string> read_password(bool from_stdin);

// --- talking to the running server (server_link.cpp) ----------------------

enum class Daemon { Ctld, Ringsmbd };

// One answer: the reply datagrams of a request (more than one for LIST_*).
struct Answer {
  NtStatus status = NtStatus::Success;
  std::string text;             // ATTR_TEXT of the last datagram
  std::vector<Bytes> datagrams;  // every datagram, for decoders
};

// Sends CMD (with SESSION_ID when given) to DAEMON, found through its pid
// file in the configuration's state directory, and waits for the whole
// answer. kExitNotRunning when the daemon is not running.
// U32S: further u32 attributes of the request.
std::expected<Answer, Failure> ask(const config::Config& cfg, Daemon daemon, ipc::abi::Cmd cmd,
                                   std::optional<uint64_t> session_id = std::nullopt,
                                   const std::vector<std::pair<ipc::abi::Attr, uint32_t>>& u32s = {});
// The same with the request's attributes put by FILL.
using RequestFill = std::function<void(ipc::MsgBuilder&)>;
std::expected<Answer, Failure> ask_with(const config::Config& cfg, Daemon daemon, ipc::abi::Cmd cmd,
                                        const RequestFill& fill);
const char* daemon_name(Daemon d);

// What a reload did: which daemon reloaded, and the file's warnings.
struct Reloaded {
  std::string by;
  std::vector<std::string> warnings;
};

// RELOAD to ringsmb-ctld when it runs, else to ringsmbd (--no-ctld); after
// ctld, ringsmbd takes the file's log level (DEBUG), as on SIGHUP.
// kExitNotRunning when neither runs.
std::expected<Reloaded, Failure> reload_server(const config::Config& cfg, const std::string& config_path);

// The configuration for finding the running server: the state directory
// of a file that may have errors (the server then refuses the reload and
// logs why). An error only when the file cannot be read.
std::expected<config::Config, std::string> load_config_for_server(const std::string& path);

// After an edit of the configuration or the users: asks a running server
// to reload (unless --no-reload) and says so. kExitOk when it reloaded or
// is not running.
int apply_to_running_server(const Context& ctx);

}  // namespace ringsmb::ctl
