// `file close ID` and `share close NAME`: ask ringsmbd, which holds the
// opens and tree connects, to end them (CLOSE_FILE and CLOSE_SHARE in
// daemon/ipc/ctl_abi.hpp), as Windows' Close-SmbOpenFile and Samba's
// `smbcontrol close-share` do.
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <cstdio>
#include <iostream>
#include <memory>

#include "ctl.hpp"
#include "ipc/ctl_codec.hpp"

namespace ringsmb::ctl {

std::optional<uint64_t> parse_id(const std::string& text) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return std::nullopt;
  try {
    size_t used = 0;
    uint64_t id = std::stoull(text, &used, 0);  // 0x... as status prints it, or decimal
    if (used != text.size()) return std::nullopt;
    return id;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string hex_id(uint64_t id) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%016" PRIx64, id);
  return buf;
}

namespace {

using namespace ipc::abi;

constexpr const char* kNotWithKsmbd =
    "not available with data plane = ksmbd: ksmbd.ko's opens and tree connects are not reachable from "
    "ringsmb-ctld (docs/kmod-shim.md)";

// The configuration of a command that talks to ringsmbd; a Failure when it
// cannot be loaded or ringsmbd is not the data plane.
std::expected<config::Config, Failure> data_plane_config(const Context& ctx, const char* command) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) {
    bool denied = cfg.error().find(std::strerror(EACCES)) != std::string::npos ||
                  cfg.error().find(std::strerror(EPERM)) != std::string::npos;
    return std::unexpected(Failure{denied ? kExitPermission : kExitError, cfg.error() + (denied ? " (run as root)" : "")});
  }
  if (cfg->global.data_plane == config::DataPlane::Ksmbd)
    return std::unexpected(Failure{kExitError, std::string(command) + ": " + kNotWithKsmbd});
  return std::move(*cfg);
}

int cmd_file_close(const Context& ctx, const std::string& id_text) {
  auto id = parse_id(id_text);
  if (!id) return fail(kExitUsage, "'" + id_text + "' is not a file id (see 'ringsmbctl status', column FILE ID)");
  auto cfg = data_plane_config(ctx, "file close");
  if (!cfg) return fail(cfg.error());
  auto a = ask_with(*cfg, Daemon::Ringsmbd, CMD_CLOSE_FILE, [&](ipc::MsgBuilder& b) { b.u64(ATTR_FILE_ID, *id); });
  if (!a) return fail(a.error());
  if (a->status == NtStatus::NotFound) return fail(kExitNotFound, "open file " + hex_id(*id) + " not found");
  if (a->status != NtStatus::Success) return fail("file close failed" + (a->text.empty() ? "" : ": " + a->text));
  std::cout << "closed open file " << hex_id(*id) << "\n";
  return kExitOk;
}

int cmd_share_close(const Context& ctx, const std::string& name) {
  auto cfg = data_plane_config(ctx, "share close");
  if (!cfg) return fail(cfg.error());
  // A share removed from the file may still have tree connects: only the
  // running server knows, so an unknown name is no error by itself.
  bool configured = cfg->find_share(name) != nullptr;
  auto a = ask_with(*cfg, Daemon::Ringsmbd, CMD_CLOSE_SHARE, [&](ipc::MsgBuilder& b) { b.str(ATTR_SHARE_NAME, name); });
  if (!a) return fail(a.error());
  if (a->status != NtStatus::Success) return fail("share close failed" + (a->text.empty() ? "" : ": " + a->text));
  uint32_t closed = 0;
  if (!a->datagrams.empty())
    if (auto m = ipc::parse_message(a->datagrams.back().data(), a->datagrams.back().size())) closed = m->u32(ATTR_CLOSED_COUNT);
  if (closed == 0 && !configured) return fail(kExitNotFound, "share '" + name + "' not found (and nobody is connected to it)");
  std::cout << "share '" << name << "': disconnected " << closed << " tree connect" << (closed == 1 ? "" : "s") << "\n";
  return kExitOk;
}

}  // namespace

void add_close_commands(CLI::App& app, Context& ctx) {
  auto* file = app.add_subcommand("file", "Act on open files");
  file->require_subcommand(1);
  auto id = std::make_shared<std::string>();
  auto* close = file->add_subcommand(
      "close", "Close an open file as the client's CLOSE would (its locks and lease go); the client's next use of the "
               "handle gets FILE_CLOSED");
  close->add_option("ID", *id, "File id as 'ringsmbctl status' shows it (0x... or decimal)")->required();
  close->callback([&ctx, id] { ctx.exit_code = cmd_file_close(ctx, *id); });

  CLI::App* share = app.get_subcommand("share");
  auto name = std::make_shared<std::string>();
  auto* share_close = share->add_subcommand(
      "close", "Disconnect every tree connect to a share and close their files; clients get NETWORK_NAME_DELETED "
               "(the share stays configured: new connections are accepted)");
  share_close->add_option("NAME", *name, "Share name")->required();
  share_close->callback([&ctx, name] { ctx.exit_code = cmd_share_close(ctx, *name); });
}

}  // namespace ringsmb::ctl
