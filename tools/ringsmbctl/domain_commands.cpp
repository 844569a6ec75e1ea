// ringsmbctl domain join / leave / status: membership of an Active
// Directory domain through adcli (Debian's adcli package, the tool realmd
// uses) rather than an LDAP and Kerberos client of ringsmb's own. adcli
// makes the computer account, sets its cifs/ and host/ service principal
// names and writes their keys to the keytab; ringsmbctl then sets
// `security = ads`, `realm`, `workgroup` and the keytab in ringsmb.conf
// (docs/active-directory.md). krb5.conf, NSS (sssd, winbind) and the clock
// stay the NAS owner's, as realmd and sssd set them up.
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "config/config_editor.hpp"
#include "ctl.hpp"

extern char** environ;

namespace ringsmb::ctl {

namespace {

struct DomainOptions {
  std::string realm;
  std::string user;  // --login-user; empty: adcli's default (Administrator)
  bool password_stdin = false;
  std::string computer_name;  // empty: from the host name
  std::string host_fqdn;      // empty: the host's
  std::string keytab;         // empty: the system keytab, /etc/krb5.keytab
  std::string domain_controller;
  std::string adcli = "adcli";
};

struct AdcliRun {
  int exit_status = 0;  // 0: success
  std::string out;      // stdout (--show-details)
  std::string err;      // stderr, already echoed to ours
};

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

// Runs adcli ARGS with our stdin (the password with --password-stdin, or
// the terminal it prompts on). Its stderr goes to a memory file so that a
// failure can be explained; it is echoed once adcli has exited.
std::expected<AdcliRun, std::string> run_adcli(const std::string& adcli, std::vector<std::string> args) {
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return std::unexpected(std::string("pipe: ") + std::strerror(errno));
  int err_file = ::memfd_create("adcli-stderr", MFD_CLOEXEC);
  if (err_file < 0) err_file = ::dup(STDERR_FILENO);  // no memfd: adcli speaks directly
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_file, STDERR_FILENO);
  args.insert(args.begin(), adcli);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, adcli.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_file);
    return std::unexpected(adcli + ": cannot run: " + std::strerror(rc) +
                           (rc == ENOENT ? " (install it: apt-get install adcli)" : ""));
  }
  AdcliRun run;
  run.out = read_all(out_pipe[0]);
  ::close(out_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (::lseek(err_file, 0, SEEK_SET) == 0) run.err = read_all(err_file);
  ::close(err_file);
  std::cerr << run.err << std::flush;
  return run;
}

// What went wrong, from adcli's messages (its exit codes only say "error",
// "usage" or "could not connect"), most specific first: a clock skew
// message also says it could not authenticate.
Failure explain_adcli_failure(const std::string& step, const AdcliRun& run) {
  auto says = [&run](const char* text) { return run.err.find(text) != std::string::npos; };
  std::string what = "adcli " + step + " failed (exit status " + std::to_string(run.exit_status) + "): ";
  if (says("Clock skew too great"))
    return {kExitError, what + "clock skew: this host's clock and the domain controller's differ by more than "
                               "5 minutes; synchronise with the domain's NTP servers (chronyc sources)"};
  if (step == "testjoin" && (says("not found in Kerberos database") || says("Preauthentication failed")))
    return {kExitPermission, what + "credentials: the domain refuses the computer account's keys (the account "
                                    "was deleted, or its password changed since): join again"};
  if (says("Preauthentication failed") || says("Password incorrect") || says("password has expired") ||
      says("not found in Kerberos database") || says("No admin password") || says("couldn't read password"))
    return {kExitPermission, what + "credentials: the domain refused the account's name or password"};
  if (says("Insufficient permissions"))
    return {kExitPermission, what + "credentials: the account may not create or change computer accounts"};
  if (says("SRV") || says("Couldn't resolve") || says("Couldn't find usable domain controller") ||
      says("couldn't discover") || says("Couldn't connect to host") || says("Couldn't perform discovery"))
    return {kExitNotFound, what + "DNS: no domain controller found or reachable; the resolver must be the "
                                  "domain's DNS (host -t SRV _ldap._tcp.REALM), or name one with "
                                  "--domain-controller"};
  return {kExitError, what + "see adcli's message above"};
}

// adcli --show-details: "key = value" lines under "[domain]",
// "[computer]" and "[keytab]" headers; keys are unique across them.
std::map<std::string, std::string> parse_details(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find(" = ");
    if (eq == std::string::npos || line.starts_with('[')) continue;
    out[line.substr(0, eq)] = line.substr(eq + 3);
  }
  return out;
}

std::vector<std::string> connection_args(const DomainOptions& o) {
  std::vector<std::string> a{"--domain=" + o.realm, "--domain-realm=" + o.realm};
  if (!o.user.empty()) a.push_back("--login-user=" + o.user);
  if (o.password_stdin) a.push_back("--stdin-password");
  if (!o.domain_controller.empty()) a.push_back("--domain-controller=" + o.domain_controller);
  return a;
}

using Keys = std::vector<std::pair<std::string, std::string>>;  // value "": unset

// Sets (or, for an empty value, removes) KEYS in [global], checks the
// result parses, writes it and asks the running server to reload.
int edit_global(const Context& ctx, const Keys& keys) {
  std::ifstream f(ctx.config_path);
  if (!f) return fail(kExitError, ctx.config_path + ": cannot open: " + std::strerror(errno));
  std::stringstream text;
  text << f.rdbuf();
  config::ConfigEditor ed(text.str());
  for (const auto& [k, v] : keys) {
    if (v.empty()) {
      ed.unset("global", k);
    } else if (auto r = ed.set("global", k, v); !r) {
      return fail("global '" + k + "': " + r.error());
    }
  }
  auto parsed = config::parse_config_text(ed.text(), ctx.config_path);
  if (!parsed) return fail("the configuration would be invalid: " + parsed.error());
  if (auto w = config::write_file_atomically(ctx.config_path, ed.text()); !w) return fail(w.error());
  return apply_to_running_server(ctx);
}

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

int domain_join(const Context& ctx, DomainOptions o) {
  o.realm = upper(o.realm);
  if (auto cfg = load_config(ctx.config_path); !cfg) return fail_loading(cfg.error());
  // Checked first: a join whose configuration cannot be written would
  // leave a computer account ringsmb does not use.
  if (::access(ctx.config_path.c_str(), W_OK) != 0)
    return fail(kExitPermission, ctx.config_path + ": cannot write: " + std::strerror(errno) + " (run as root)");
  std::vector<std::string> args{"join", "--service-name=cifs", "--service-name=host", "--show-details"};
  auto conn = connection_args(o);
  args.insert(args.end(), conn.begin(), conn.end());
  if (!o.computer_name.empty()) args.push_back("--computer-name=" + o.computer_name);
  if (!o.host_fqdn.empty()) args.push_back("--host-fqdn=" + o.host_fqdn);
  if (!o.keytab.empty()) args.push_back("--host-keytab=" + o.keytab);
  auto run = run_adcli(o.adcli, args);
  if (!run) return fail(run.error());
  if (run->exit_status != 0) return fail(explain_adcli_failure("join", *run));
  auto details = parse_details(run->out);
  const std::string& workgroup = details["domain-short"];
  const std::string& computer = details["computer-name"];
  std::cout << "Joined " << o.realm << " as " << (computer.empty() ? "?" : computer) << " (keytab "
            << (o.keytab.empty() ? "/etc/krb5.keytab" : o.keytab) << ")\n";
  Keys keys{{"security", "ads"}, {"realm", o.realm}};
  if (!workgroup.empty()) keys.push_back({"workgroup", workgroup});
  if (o.keytab.empty()) {
    keys.push_back({"kerberos method", "system keytab"});
    keys.push_back({"dedicated keytab file", ""});
  } else {
    keys.push_back({"kerberos method", "dedicated keytab"});
    keys.push_back({"dedicated keytab file", "FILE:" + o.keytab});
  }
  return edit_global(ctx, keys);
}

// The keytab file ringsmb.conf names ("" for the system keytab).
std::string keytab_file(const config::GlobalConfig& g) {
  auto keytab = config::kerberos_keytab(g);
  if (keytab && keytab->starts_with("FILE:")) return keytab->substr(5);
  return "";
}

int domain_leave(const Context& ctx, DomainOptions o) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  if (o.realm.empty()) o.realm = cfg->global.realm;
  if (o.realm.empty()) return fail(kExitUsage, "no realm: give one, or set realm in " + ctx.config_path);
  // delete-computer authenticates as -U only; the keytab file is kept.
  std::vector<std::string> args{"delete-computer"};
  auto conn = connection_args(o);
  args.insert(args.end(), conn.begin(), conn.end());
  if (!o.computer_name.empty()) args.push_back(o.computer_name);
  auto run = run_adcli(o.adcli, args);
  if (!run) return fail(run.error());
  if (run->exit_status != 0) return fail(explain_adcli_failure("delete-computer", *run));
  std::cout << "Left " << upper(o.realm) << "\n";
  return edit_global(ctx, {{"security", "user"}, {"realm", ""}, {"kerberos method", ""}, {"dedicated keytab file", ""}});
}

int domain_status(const Context& ctx, DomainOptions o) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  const config::GlobalConfig& g = cfg->global;
  std::cout << "security: " << (g.security == config::SecurityMode::Ads ? "ads" : "user") << "\n"
            << "realm: " << (g.realm.empty() ? "(none)" : g.realm) << "\nworkgroup: " << g.workgroup << "\n";
  auto keytab = config::kerberos_keytab(g);
  std::cout << "keytab: " << (!keytab ? "(Kerberos off)" : keytab->empty() ? "/etc/krb5.keytab" : *keytab) << "\n";
  if (g.realm.empty()) return kExitOk;
  if (o.realm.empty()) o.realm = g.realm;
  if (o.keytab.empty()) o.keytab = keytab_file(g);
  std::vector<std::string> args{"testjoin", "--domain=" + o.realm};
  if (!o.keytab.empty()) args.push_back("--host-keytab=" + o.keytab);
  if (!o.domain_controller.empty()) args.push_back("--domain-controller=" + o.domain_controller);
  auto run = run_adcli(o.adcli, args);
  if (!run) return fail(run.error());
  if (run->exit_status != 0) {
    std::cout << "membership: not working\n";
    return fail(explain_adcli_failure("testjoin", *run));
  }
  std::cout << "membership: valid (adcli testjoin)\n";
  return kExitOk;
}

}  // namespace

void add_domain_commands(CLI::App& app, Context& ctx) {
  auto* domain = app.add_subcommand("domain", "Active Directory membership through adcli (join, leave, status)");
  domain->require_subcommand(1);
  auto opts = std::make_shared<DomainOptions>();
  auto common = [opts](CLI::App* c) {
    c->add_option("--domain-controller", opts->domain_controller, "Talk to this DC rather than one DNS finds");
    c->add_option("--keytab", opts->keytab, "Keytab file for the machine's keys (default: the system keytab)");
    c->add_option("--adcli", opts->adcli, "The adcli program")->capture_default_str();
  };
  auto credentials = [opts](CLI::App* c) {
    c->add_option("-U,--user", opts->user, "Domain account that may join computers (default: Administrator)");
    c->add_flag("--password-stdin", opts->password_stdin, "Read that account's password from stdin");
  };
  auto* join = domain->add_subcommand("join", "Join REALM: computer account, cifs/ and host/ keys, ringsmb.conf");
  join->add_option("realm", opts->realm, "The domain's realm (EXAMPLE.TEST)")->required();
  join->add_option("--computer-name", opts->computer_name, "The computer account's name (default: the host name)");
  join->add_option("--host-fqdn", opts->host_fqdn, "The name clients use (default: the host's)");
  credentials(join);
  common(join);
  join->callback([&ctx, opts] { ctx.exit_code = domain_join(ctx, *opts); });
  auto* leave = domain->add_subcommand("leave", "Delete the computer account; security = user");
  leave->add_option("realm", opts->realm, "The domain's realm (default: realm of ringsmb.conf)");
  leave->add_option("--computer-name", opts->computer_name, "The computer account's name (default: the host name)");
  leave->add_option("--domain-controller", opts->domain_controller, "Talk to this DC rather than one DNS finds");
  leave->add_option("--adcli", opts->adcli, "The adcli program")->capture_default_str();
  credentials(leave);
  leave->callback([&ctx, opts] { ctx.exit_code = domain_leave(ctx, *opts); });
  auto* status = domain->add_subcommand("status", "Show the membership and check it (adcli testjoin)");
  common(status);
  status->callback([&ctx, opts] { ctx.exit_code = domain_status(ctx, *opts); });
}

}  // namespace ringsmb::ctl
