// `discovery wsdd [--print] [-- WSDD-OPTIONS...]`: runs Debian's wsdd with
// the server's NetBIOS name and workgroup from the configuration, so that
// Windows shows the server in its Network view (WS-Discovery). ringsmb's
// drop-in for Debian's wsdd.service (wsdd.service.d/ringsmb.conf) makes
// this command that unit's ExecStart=.
//
// Why wsdd and not WS-Discovery inside ringsmb-ctld: WS-Discovery is
// multicast SOAP on UDP 3702 and HTTP on TCP 5357, XML from anyone on the
// LAN. ringsmb-ctld holds every NT hash and never faces the network; giving
// it an XML parser and two listeners would put the secrets behind the
// largest parser in the server. wsdd is maintained in Debian and its unit
// runs it as a dynamic user in an empty chroot.
//
// `discovery avahi [--print] [--output FILE] [--force]`: writes avahi-daemon's
// static service file for macOS (mDNS/DNS-SD: _smb._tcp on the configured
// port), so that the announcement follows "tcp port". ringsmb.service runs
// it before each start (ExecStartPre=); avahi-daemon notices the change
// itself (it watches /etc/avahi/services). Static files rather than
// registering through avahi's D-Bus API: nothing in ringsmb then links
// D-Bus or talks to avahi at run time.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "config/config_editor.hpp"
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
  if (!cfg) return fail_loading(cfg.error());
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

// The line that marks a file as ours: one without it (written by hand) is
// not replaced unless --force.
constexpr const char* kAvahiMarker = "Written by ringsmbctl discovery avahi";
constexpr const char* kAvahiServiceFile = "/etc/avahi/services/ringsmb.service";

struct AvahiOptions {
  std::string output = kAvahiServiceFile;
  bool print = false;
  bool force = false;
};

std::string xml_escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

// The shares Time Machine may back up to (fruit:time machine = yes on a
// share whose vfs objects name fruit), in configuration order.
std::vector<std::string> time_machine_shares(const config::Config& cfg) {
  std::vector<std::string> names;
  for (const auto& s : cfg.shares)
    if (s.fruit.enabled && s.fruit.time_machine) names.push_back(s.name);
  return names;
}

// _adisk._tcp, which macOS reads to offer a share as a backup disk: one
// dkN record per Time Machine share (adVN: its name; adVF=0x82: an SMB
// share Time Machine may use), and sys (waMa=0: no AirPort MAC; adVF=0x100:
// the records are for SMB). The port is not used; 9 (discard), as Samba.
void append_adisk_service(std::ostringstream& o, const std::vector<std::string>& shares) {
  if (shares.empty()) return;
  o << "  <service>\n"
    << "    <type>_adisk._tcp</type>\n"
    << "    <port>9</port>\n"
    << "    <txt-record>sys=waMa=0,adVF=0x100</txt-record>\n";
  for (size_t i = 0; i < shares.size(); ++i)
    o << "    <txt-record>dk" << i << "=adVN=" << xml_escaped(shares[i]) << ",adVF=0x82</txt-record>\n";
  o << "  </service>\n";
}

// avahi-daemon's service file (avahi.service(5), avahi-service.dtd) for the
// first "tcp port": the Finder connects to the port the SRV record names.
// conf/avahi/ringsmb.service is this text for port 445 and no Time Machine
// share (test_discovery).
std::string avahi_service_xml(uint16_t port, const std::vector<std::string>& time_machine) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\" standalone='no'?>\n"
    << "<!DOCTYPE service-group SYSTEM \"avahi-service.dtd\">\n"
    << "<!-- " << kAvahiMarker << " from ringsmb.conf (\"tcp port\"),\n"
    << "     before each start of ringsmb.service: edits here are replaced. To\n"
    << "     keep a file of your own, delete this comment (ringsmbctl then\n"
    << "     leaves the file alone).\n"
    << "     mDNS/DNS-SD for ringsmb: macOS lists SMB servers in the Finder's\n"
    << "     sidebar from _smb._tcp announcements. _device-info._tcp carries no\n"
    << "     service: its model= record picks the icon the Finder draws. -->\n"
    << "<service-group>\n"
    << "  <name replace-wildcards=\"yes\">%h</name>\n"
    << "  <service>\n"
    << "    <type>_smb._tcp</type>\n"
    << "    <port>" << port << "</port>\n"
    << "  </service>\n"
    << "  <service>\n"
    << "    <type>_device-info._tcp</type>\n"
    << "    <port>0</port>\n"
    << "    <txt-record>model=RackMac</txt-record>\n"
    << "  </service>\n";
  append_adisk_service(o, time_machine);
  o << "</service-group>\n";
  return o.str();
}

std::string parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

int cmd_avahi(const Context& ctx, const AvahiOptions& o) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  if (cfg->global.tcp_ports.empty()) return fail("the configuration has no tcp port");
  uint16_t port = cfg->global.tcp_ports.front();
  const std::vector<std::string> time_machine = time_machine_shares(*cfg);
  std::string text = avahi_service_xml(port, time_machine);
  if (o.print) {
    std::cout << text;
    return kExitOk;
  }
  struct stat st{};
  std::string dir = parent_dir(o.output);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fail(kExitNotFound, dir + " does not exist (is avahi-daemon installed?); nothing written");
  bool exists = ::stat(o.output.c_str(), &st) == 0;
  std::string old;
  if (exists) {
    std::ifstream in(o.output);
    old.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (exists && old == text) {
    std::cout << o.output << ": up to date (_smb._tcp on port " << port << ")\n";
    return kExitOk;
  }
  if (exists && old.find(kAvahiMarker) == std::string::npos && !o.force)
    return fail(kExitExists, o.output + " was not written by ringsmbctl (no \"" + kAvahiMarker +
                                 "\" comment); left alone (--force replaces it)");
  if (auto w = config::write_file_atomically(o.output, text); !w)
    return fail(w.error().starts_with("permission denied") ? kExitPermission : kExitError, w.error());
  std::cout << "wrote " << o.output << " (_smb._tcp on port " << port << ")\n";
  if (!time_machine.empty())
    std::cout << "Time Machine (_adisk._tcp): " << time_machine.size() << " share(s)\n";
  return kExitOk;
}

}  // namespace

void add_discovery_commands(CLI::App& app, Context& ctx) {
  auto* disc = app.add_subcommand(
      "discovery", "Announce the server to Windows (WS-Discovery through wsdd) and macOS (mDNS through avahi-daemon)");
  disc->require_subcommand(1);
  auto o = std::make_shared<WsddOptions>();
  auto* wsdd = disc->add_subcommand(
      "wsdd", "Run wsdd with the configuration's netbios name, workgroup and interfaces (what wsdd.service runs "
              "with ringsmb's drop-in, wsdd.service.d/ringsmb.conf); options after -- go to wsdd");
  wsdd->add_option("--wsdd", o->wsdd, "The wsdd program")->capture_default_str();
  wsdd->add_flag("--print", o->print, "Print the wsdd command line instead of running it");
  wsdd->add_option("WSDD-OPTIONS", o->extra, "Options for wsdd, after --");
  wsdd->callback([&ctx, o] { ctx.exit_code = cmd_wsdd(ctx, *o, o->extra); });

  auto a = std::make_shared<AvahiOptions>();
  auto* avahi = disc->add_subcommand(
      "avahi", "Write avahi-daemon's service file for macOS (_smb._tcp on the configuration's tcp port); "
               "ringsmb.service runs it before each start");
  avahi->add_option("--output", a->output, "The service file")->capture_default_str();
  avahi->add_flag("--print", a->print, "Print the file instead of writing it");
  avahi->add_flag("--force", a->force, "Replace a file that ringsmbctl did not write");
  avahi->callback([&ctx, a] { ctx.exit_code = cmd_avahi(ctx, *a); });
}

}  // namespace ringsmb::ctl
