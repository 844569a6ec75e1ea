// Reading what `import samba|ksmbd` brings over: the smb.conf-format file
// of the old server, sorted key by key with ringsmb's own parser, and its
// users with their NT hashes (pdbedit output or ksmbdpwd.db).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/config.hpp"
#include "config/substitution.hpp"
#include "import.hpp"

extern char** environ;

namespace ringsmb::ctl::import {

namespace {

std::string strip_location(const std::string& message) {
  // The parser's messages start "FILE:LINE: "; the line is the probe's.
  size_t first = message.find(": ");
  return first == std::string::npos ? message : message.substr(first + 2);
}

// What ringsmb makes of KEY = VALUE in a section of its own config: taken,
// or why not. Each probe is a one-key config through the real parser, so
// the import accepts exactly what ringsmbd will.
enum class Fit { Taken, Unknown, Rejected, OtherSection };
struct Verdict {
  Fit fit;
  std::string why;
};

Verdict probe(const std::string& key, const std::string& value, bool global) {
  std::string text = global ? "[global]\n" : "[probe]\n";
  if (!global && config::normalize_key(key) != "path") text += "path = /\n";
  text += key + " = " + value + "\n";
  auto parsed = config::parse_config_text(text, "probe");
  if (!parsed) return {Fit::Rejected, strip_location(parsed.error())};
  for (const auto& w : parsed->warnings) {
    if (w.find("unknown key") != std::string::npos) return {Fit::Unknown, "ringsmb has no such key"};
    if (w.find("is a global key") != std::string::npos) return {Fit::OtherSection, "a [global] key"};
    return {Fit::Rejected, strip_location(w)};
  }
  return {Fit::Taken, ""};
}

// Global keys ringsmb knows but whose Samba value is about Samba itself
// (its files, its ports, its log syntax): ringsmb keeps its own.
bool keeps_own(const std::string& key) {
  std::string k = config::normalize_key(key);
  return k == "statedirectory" || k == "usersdb" || k == "smbports" || k == "tcpport" || k == "loglevel" ||
         k == "debuglevel";
}

bool is_printer_section(const config::ConfigEditor& ed, const std::string& section) {
  std::string n = config::normalize_key(section);
  if (n == "printers" || n == "print$") return true;
  for (const auto& e : ed.entries(section)) {
    std::string k = config::normalize_key(e.key);
    bool yes = false;
    if ((k == "printable" || k == "printok") && config::parse_bool(e.value, yes) && yes) return true;
  }
  return false;
}

bool sets_same(const std::vector<Setting>& settings, const std::string& key) {
  auto aliases = config::ConfigEditor::key_aliases(key);
  for (const auto& s : settings)
    for (const auto& a : aliases)
      if (config::normalize_key(s.first) == a) return true;
  return false;
}

// Why a setting about to be imported keeps Windows clients out
// (docs/windows-clients.md), or "" when it does not. Windows 11 24H2 and
// Windows Enterprise/Education refuse guest sessions ("insecure guest
// logons"), and a 24H2 client requires signing, which a guest session
// cannot do.
std::string windows_trouble(const std::string& key, const std::string& value) {
  std::string k = config::normalize_key(key);
  std::string v = config::normalize_key(value);
  if (k == "maptoguest" && v != "never")
    return "Windows 11 24H2 and Windows Enterprise/Education refuse the guest sessions this gives to unknown users "
           "or wrong passwords (\"unauthenticated guest access\", system error 1272); 'map to guest = never' and a "
           "ringsmb user for each person serve Windows (docs/windows-clients.md)";
  bool yes = false;
  if ((k == "guestok" || k == "public") && config::parse_bool(value, yes) && yes)
    return "a guest share serves only clients that still allow guest logons, not Windows 11 24H2 or Windows "
           "Enterprise/Education (docs/windows-clients.md)";
  return {};
}

void warn_if_windows_trouble(const std::string& where, const std::string& entry, const std::string& key,
                             const std::string& value, ConfigPlan& plan) {
  std::string why = windows_trouble(key, value);
  if (!why.empty()) plan.warnings.push_back({where, entry + ": imported, but " + why});
}

// [global]: ringsmb's global keys are taken.
void plan_global(const config::ConfigEditor& ed, const std::string& file, ConfigPlan& plan,
                 std::vector<Setting>& share_defaults) {
  std::string section = ed.section_name("global");
  if (section.empty()) return;
  for (const auto& e : ed.entries(section)) {
    std::string where = file + ":" + std::to_string(e.line);
    std::string entry = "'" + e.key + " = " + e.value + "'";
    // A key shares take is Samba's default for every share: copied into
    // each imported share, not into ringsmb's [global], where it would
    // change the shares ringsmb already has.
    Verdict s = probe(e.key, e.value, false);
    if (s.fit == Fit::Taken) {
      share_defaults.push_back({e.key, e.value});
      warn_if_windows_trouble(where, entry, e.key, e.value, plan);
      continue;
    }
    Verdict g = probe(e.key, e.value, true);
    if (g.fit == Fit::Taken && e.value.find('%') != std::string::npos) {
      plan.skipped.push_back({where, entry + ": Samba's %-substitutions are not expanded in [global] keys"});
    } else if (g.fit != Fit::Taken) {
      plan.skipped.push_back({where, entry + ": " + (s.fit == Fit::Rejected ? s.why : g.why)});
    } else if (keeps_own(e.key)) {
      plan.skipped.push_back({where, entry + ": about the old server itself; ringsmb keeps its own"});
    } else {
      plan.global.push_back({e.key, e.value});
      warn_if_windows_trouble(where, entry, e.key, e.value, plan);
    }
  }
}

// The line of SECTION's header "[name]" (1-based), for the report.
int header_line(const std::string& text, const std::string& section) {
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    size_t open = line.find_first_not_of(" \t");
    size_t close = line.find(']');
    if (open == std::string::npos || line[open] != '[' || close == std::string::npos) continue;
    if (config::normalize_key(line.substr(open + 1, close - open - 1)) == config::normalize_key(section)) return no;
  }
  return 0;
}

// [homes] (HOMES) needs no path: each user's home directory is its root.
// A path the same for every user is left out, as ringsmb refuses it.
void plan_share(const config::ConfigEditor& ed, const std::string& where_header, const std::string& file,
                const std::string& section, const std::vector<Setting>& share_defaults, ConfigPlan& plan,
                bool homes) {
  SharePlan share{section, where_header, {}};
  for (const auto& e : ed.entries(section)) {
    std::string where = file + ":" + std::to_string(e.line);
    std::string entry = "'" + e.key + " = " + e.value + "'";
    if (homes && config::normalize_key(e.key) == "path" && !config::has_substitution(e.value)) {
      plan.skipped.push_back({where, "[homes] " + entry + ": the same for every user; each user's home directory "
                                     "(passwd) is used instead"});
      continue;
    }
    Verdict v = probe(e.key, e.value, false);
    if (v.fit == Fit::Taken) {
      share.settings.push_back({e.key, e.value});
      warn_if_windows_trouble(where, "[" + section + "] " + entry, e.key, e.value, plan);
    } else {
      plan.skipped.push_back({where, "[" + section + "] " + entry + ": " + v.why});
    }
  }
  for (const auto& d : share_defaults)
    if (!sets_same(share.settings, d.first)) share.settings.push_back(d);
  if (!homes && !sets_same(share.settings, "path")) {
    plan.skipped.push_back({share.where, "share [" + section + "]: not imported: no path ringsmb can use"});
    return;
  }
  plan.shares.push_back(std::move(share));
}

std::expected<std::string, std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == sep) {
      out.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

bool parse_hex16(const std::string& hex, std::array<uint8_t, 16>& out) {
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    unsigned v = 0;
    for (char c : hex.substr(2 * i, 2)) {
      int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
              : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
              : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                          : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<unsigned>(d);
    }
    out[i] = static_cast<uint8_t>(v);
  }
  return true;
}

bool parse_base64_16(const std::string& text, std::array<uint8_t, 16>& out) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  // 16 bytes are 22 characters and "==".
  if (text.size() != 24 || text.substr(22) != "==") return false;
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;
  for (char c : text.substr(0, 22)) {
    size_t v = alphabet.find(c);
    if (v == std::string::npos) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n == 16) return false;
      out[n++] = static_cast<uint8_t>((acc >> bits) & 0xff);
    }
  }
  return n == 16;
}

template <typename LineFn>
void for_each_line(const std::string& text, LineFn fn) {
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    fn(line, no);
  }
}

}  // namespace

std::expected<ConfigPlan, std::string> plan_config(const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  config::ConfigEditor ed(*text);
  ConfigPlan plan;
  std::vector<Setting> share_defaults;
  plan_global(ed, path, plan, share_defaults);
  for (const auto& section : ed.section_names()) {
    std::string n = config::normalize_key(section);
    if (n == "global") continue;
    std::string where = path + ":" + std::to_string(header_line(*text, section));
    if (n == "ipc$") plan.skipped.push_back({where, "[IPC$] is built into ringsmb"});
    else if (is_printer_section(ed, section)) plan.skipped.push_back({where, "[" + section + "]: printing is not supported"});
    else plan_share(ed, where, path, section, share_defaults, plan, n == "homes");
  }
  return plan;
}

UsersPlan parse_smbpasswd(const std::string& text, const std::string& source) {
  UsersPlan plan;
  for_each_line(text, [&](const std::string& line, int no) {
    std::string where = source + ":" + std::to_string(no);
    auto f = split(line, ':');
    if (f.size() < 6) return plan.skipped.push_back({where, "not a pdbedit -w line (NAME:UID:LM:NT:[FLAGS]:LCT:)"});
    const std::string& name = f[0];
    const std::string& flags = f[4];
    auto has = [&](char c) { return flags.find(c) != std::string::npos; };
    if (has('W') || has('S') || has('I')) return plan.skipped.push_back({where, "user " + name + ": a machine or trust account"});
    if (!has('U')) return plan.skipped.push_back({where, "user " + name + ": not a normal user account " + flags});
    if (has('D')) return plan.skipped.push_back({where, "user " + name + ": disabled in the old server"});
    if (f[3].starts_with("NO PASSWORD")) return plan.skipped.push_back({where, "user " + name + ": has no password"});
    UserPlan u{name, {}, where};
    if (!parse_hex16(f[3], u.nt_hash)) return plan.skipped.push_back({where, "user " + name + ": no NT hash"});
    plan.users.push_back(std::move(u));
  });
  return plan;
}

UsersPlan parse_ksmbdpwd(const std::string& text, const std::string& source) {
  UsersPlan plan;
  for_each_line(text, [&](const std::string& line, int no) {
    std::string where = source + ":" + std::to_string(no);
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) return plan.skipped.push_back({where, "not a NAME:HASH line"});
    UserPlan u{line.substr(0, colon), {}, where};
    if (!parse_base64_16(line.substr(colon + 1), u.nt_hash))
      return plan.skipped.push_back({where, "user " + u.name + ": the hash is not a base64 NT hash"});
    plan.users.push_back(std::move(u));
  });
  return plan;
}

std::expected<std::string, std::string> run_pdbedit(const std::string& pdbedit, const std::string& conf) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::unexpected(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<std::string> args{pdbedit, "-s", conf, "-L", "-w"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, pdbedit.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return std::unexpected(pdbedit + ": cannot run: " + std::strerror(rc) +
                           (rc == ENOENT ? " (Samba's pdbedit is in the samba package; or give --pdbedit-output)" : ""));
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return std::unexpected(pdbedit + " -s " + conf + " -L -w failed (exit status " +
                           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) + ")");
  return out;
}

}  // namespace ringsmb::ctl::import
