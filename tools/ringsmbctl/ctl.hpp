// Shared pieces of ringsmbctl's command groups.
#pragma once

#include <expected>
#include <string>

#include <CLI/CLI.hpp>

#include "config/config.hpp"

namespace ringsmb::ctl {

// Exit codes; also listed in the --help footer, which is the user's contract.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

inline constexpr const char* kDefaultConfig = "/etc/ringsmb/ringsmb.conf";

struct Context {
  std::string config_path = kDefaultConfig;
  int exit_code = kExitOk;
};

// Prints "ringsmbctl: MESSAGE" on stderr and returns kExitError, so commands
// can `return fail(...)`.
int fail(const std::string& message);

// Parses the configuration; warnings are dropped (config check shows them).
std::expected<config::Config, std::string> load_config(const std::string& path);

void add_user_commands(CLI::App& app, Context& ctx);
void add_config_commands(CLI::App& app, Context& ctx);
void add_daemon_commands(CLI::App& app, Context& ctx);  // reload, shutdown (via ringsmb-ctld)

// Password entry: one line of stdin, or two no-echo prompts on the terminal.
std::expected<std::string, std::string> read_password(bool from_stdin);

}  // namespace ringsmb::ctl
