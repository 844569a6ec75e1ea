// `discovery wsdd [--print] [-- WSDD-OPTIONS...]`: runs Debian's wsdd with
// the server's NetBIOS name and workgroup from the configuration, so that
// Windows shows the server in its Network view (WS-Discovery). The
// ringsmb-wsdd unit's ExecStart= is this command.
//
// Why wsdd and not WS-Discovery inside ringsmb-ctld: WS-Discovery is
// multicast SOAP on UDP 3702 and HTTP on TCP 5357, XML from anyone on the
// LAN. ringsmb-ctld holds every NT hash and never faces the network; giving
// it an XML parser and two listeners would put the secrets behind the
// largest parser in the server. wsdd is maintained in Debian and its unit
// runs it as a dynamic user in an empty chroot.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "ctl.hpp"

namespace ringsmb::ctl {

namespace {

struct WsddOptions {
  std::string wsdd = "/usr/sbin/wsdd";
  bool print = false;
  std::vector<std::string> extra;  // after --, for wsdd
};

// An interfaces entry is a name ("eth0") or an address with an optional
// prefix length ("192.168.1.10/24"); wsdd's -i takes a name or an address.
std::string wsdd_interface(const std::string& entry) { return entry.substr(0, entry.find('/')); }

std::vector<std::string> wsdd_argv(const config::GlobalConfig& g, const WsddOptions& o,
                                   const std::vector<std::string>& extra) {
  std::vector<std::string> argv{o.wsdd, "--shortlog", "--hostname", g.netbios_name, "--workgroup", g.workgroup};
  // Announce only where the server listens.
  if (g.bind_interfaces_only)
    for (const auto& i : g.interfaces) argv.insert(argv.end(), {"--interface", wsdd_interface(i)});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

int cmd_wsdd(const Context& ctx, const WsddOptions& o, const std::vector<std::string>& extra) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail(cfg.error());
  std::vector<std::string> argv = wsdd_argv(cfg->global, o, extra);
  if (o.print) {
    for (size_t i = 0; i < argv.size(); ++i) std::cout << (i ? " " : "") << argv[i];
    std::cout << "\n";
    return kExitOk;
  }
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::cout.flush();
  ::execv(cargv[0], cargv.data());
  int err = errno;
  return fail(err == ENOENT ? kExitNotFound : kExitError,
              o.wsdd + ": cannot run: " + std::strerror(err) + (err == ENOENT ? " (apt install wsdd)" : ""));
}

}  // namespace

void add_discovery_commands(CLI::App& app, Context& ctx) {
  auto* disc = app.add_subcommand("discovery", "Announce the server to Windows (WS-Discovery through wsdd)");
  disc->require_subcommand(1);
  auto o = std::make_shared<WsddOptions>();
  auto* wsdd = disc->add_subcommand(
      "wsdd", "Run wsdd with the configuration's netbios name, workgroup and interfaces (the ringsmb-wsdd "
              "service); options after -- go to wsdd");
  wsdd->add_option("--wsdd", o->wsdd, "The wsdd program")->capture_default_str();
  wsdd->add_flag("--print", o->print, "Print the wsdd command line instead of running it");
  wsdd->add_option("WSDD-OPTIONS", o->extra, "Options for wsdd, after --");
  wsdd->callback([&ctx, o] { ctx.exit_code = cmd_wsdd(ctx, *o, o->extra); });
}

}  // namespace ringsmb::ctl
