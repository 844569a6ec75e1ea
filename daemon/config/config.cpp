// ringsmb.conf parser: splits the text into sections of key/value entries,
// then applies [global] first (so share defaults set there reach every share,
// wherever the share appears) and builds the shares from it.
#include "config/config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/config_internal.hpp"
#include "config/substitution.hpp"

namespace ringsmb::config {

using namespace detail;

namespace {

struct Entry {
  std::string raw_key;  // as written, for messages
  std::string key;      // normalized
  std::string value;
  int line = 0;
};

struct Section {
  std::string name;
  int line = 0;
  std::vector<Entry> entries;
};

struct LogicalLine {
  std::string text;
  int line = 0;  // first physical line
};

std::string located(std::string_view file, int line, std::string_view msg) {
  return cat(file, ":", line, ": ", msg);
}

// Long junk lines would otherwise be echoed whole into the error message.
std::string excerpt(std::string_view s) {
  if (s.size() <= 40) return std::string(s);
  return std::string(s.substr(0, 40)) + "...";
}

bool ends_with_backslash(std::string_view s, std::string_view& body) {
  std::string_view t = s;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (t.empty() || t.back() != '\\') return false;
  body = t.substr(0, t.size() - 1);
  return true;
}

// Joins '\'-continued lines and drops blank and comment lines. Only a line
// whose first non-blank character is ';' or '#' is a comment (as in Samba),
// so "path = /srv/a#b" keeps its '#'. A comment line never continues.
std::vector<LogicalLine> logical_lines(std::string_view text) {
  std::vector<LogicalLine> out;
  std::string pending;
  bool continuing = false;
  int lineno = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view phys = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineno;
    if (!phys.empty() && phys.back() == '\r') phys.remove_suffix(1);
    if (!continuing) {
      std::string_view t = trim(phys);
      if (t.empty() || t.front() == ';' || t.front() == '#') continue;
      out.push_back({"", lineno});
    }
    std::string_view body;
    continuing = ends_with_backslash(phys, body);
    out.back().text.append(continuing ? body : phys);
  }
  return out;
}

std::expected<Section, std::string> parse_header(std::string_view t, std::string_view file, int line) {
  size_t close = t.find(']');
  if (close == std::string_view::npos)
    return std::unexpected(located(file, line, cat("malformed section header '", excerpt(t), "'")));
  if (!trim(t.substr(close + 1)).empty())
    return std::unexpected(located(file, line, cat("unexpected text after section header '", excerpt(t), "'")));
  std::string_view name = trim(t.substr(1, close - 1));
  if (name.empty()) return std::unexpected(located(file, line, "empty section name"));
  return Section{std::string(name), line, {}};
}

// Splits the text into sections. A line that cannot be read is an error
// and is skipped; after a bad section header, the entries up to the next
// header belong to no section and are skipped too (they would otherwise
// land in the section before).
std::vector<Section> lex(std::string_view text, std::string_view file, std::vector<std::string>& errors) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // editors on Windows add a UTF-8 BOM
  std::vector<Section> sections;
  bool in_bad_section = false;
  for (const auto& ll : logical_lines(text)) {
    std::string_view t = trim(ll.text);
    if (t.empty()) continue;  // e.g. a lone '\' continued into blank lines
    if (t.front() == '[') {
      auto sec = parse_header(t, file, ll.line);
      in_bad_section = !sec;
      if (sec) sections.push_back(std::move(*sec));
      else errors.push_back(sec.error());
      continue;
    }
    size_t eq = t.find('=');
    std::string_view key = eq == std::string_view::npos ? std::string_view{} : trim(t.substr(0, eq));
    if (eq == std::string_view::npos)
      errors.push_back(located(file, ll.line, cat("expected 'key = value', got '", excerpt(t), "'")));
    else if (key.empty())
      errors.push_back(located(file, ll.line, "missing key before '='"));
    else if (sections.empty() && !in_bad_section)
      errors.push_back(located(file, ll.line, cat("'", excerpt(key), "' appears before any [section]")));
    else if (!in_bad_section)
      sections.back().entries.push_back(
          {std::string(key), normalize_key(key), std::string(trim(t.substr(eq + 1))), ll.line});
  }
  return sections;
}

bool is_reserved_section(std::string_view name) {
  return iequals(name, "printers") || iequals(name, "print$") || iequals(name, "ipc$");
}

// Host lists may hold "fe80::1%eth0" (an IPv6 scope), never a substitution.
bool is_host_key(std::string_view key) {
  return key == "hostsallow" || key == "allowhosts" || key == "hostsdeny" || key == "denyhosts";
}

// A %-token that would reach a file name or a user list unexpanded: the
// control plane expands %U, %S and %H in some keys (substitution.hpp) and
// nothing anywhere else.
std::optional<std::string> token_problem(const std::string& key, std::string_view raw_key, std::string_view value) {
  if (is_substituted_key(key)) {
    if (auto t = unexpanded_token(value))
      return cat(raw_key, ": '", *t, "' is not expanded by ringsmb (only %U, %S and %H are)");
    return std::nullopt;
  }
  // shadow:format is a strftime format: its %H is the hour.
  if (!is_host_key(key) && key != "shadow:format" && has_substitution(value))
    return cat(raw_key, ": %U, %S and %H are not expanded in this key (only in path, comment, the user lists and "
                        "recycle:repository)");
  return std::nullopt;
}

bool has_dot_dot(std::string_view path) {
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (path.substr(pos, slash == std::string_view::npos ? slash : slash - pos) == "..") return true;
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return false;
}

// The recycle repository must stay inside the share: relative without
// "..", or absolute below the share's path (then made relative).
std::optional<std::string> place_repository(ShareConfig& share) {
  std::string& repo = share.recycle.repository;
  if (repo.starts_with('/') || repo.starts_with("%H")) {  // %H is absolute too
    std::string root = share.path == "/" ? "" : share.path;
    if (root.empty() || !repo.starts_with(root + "/"))
      return cat("recycle:repository ", repo, " is outside the share's path ", share.path);
    repo.erase(0, root.size() + 1);
  }
  while (repo.starts_with("./")) repo.erase(0, 2);
  if (has_dot_dot(repo)) return cat("recycle:repository ", repo, " leaves the share through '..'");
  if (repo.empty() || repo == ".") return "recycle:repository is the share's root";
  return std::nullopt;
}

// "max open files: 'lots' is not a number"; a message that already starts
// with the key ("users db must not be empty") keeps its words.
std::string with_key(std::string_view raw_key, const std::string& msg) {
  if (to_lower(msg).starts_with(to_lower(raw_key))) return msg;
  return cat(raw_key, ": ", msg);
}

struct Builder {
  std::string_view file;
  CheckedConfig out;
  ShareConfig share_defaults;  // share keys written in [global]
  GlobalState st;

  void apply_global(const Section& sec, const Entry& e);
  void check_protocols();
  std::optional<ShareConfig> build_share(const Section& sec);
  void check_share_values(const Section& sec, ShareConfig& share);
  void add_share(const Section& sec);
  void add_homes(const Section& sec);
  int line_of(const Section& sec, std::string_view key) const {
    for (const auto& e : sec.entries)
      if (e.key == key) return e.line;
    return sec.line;
  }
  void warn(int line, std::string_view msg) { out.warnings.push_back(located(file, line, msg)); }
  void error(int line, std::string_view msg) { out.errors.push_back(located(file, line, msg)); }
  void bad_value(const Entry& e, const std::string& msg) {
    // "9922   # the port" reads as a comment to a reader used to other formats.
    bool looks_commented = e.value.find(" #") != std::string::npos || e.value.find(" ;") != std::string::npos ||
                           e.value.find("\t#") != std::string::npos || e.value.find("\t;") != std::string::npos;
    error(e.line, with_key(e.raw_key, msg) +
                      (looks_commented ? " (comments are whole lines: a '#' or ';' after a value is part of it)" : ""));
  }
  void note_source(const Section& sec, const Entry& e) { out.sources.push_back({sec.name, e.key, e.line}); }
};

void Builder::apply_global(const Section& sec, const Entry& e) {
  st.current_line = e.line;
  auto known = apply_global_key(out.config.global, st, e.key, e.value);
  if (!known) return bad_value(e, known.error());
  for (const auto& n : st.notes) warn(e.line, n);
  st.notes.clear();
  if (*known) {
    out.config.global.keys_set.insert(e.key);
    return note_source(sec, e);
  }
  // Samba lets [global] carry defaults for every share; a path there makes
  // no sense, so it stays an unknown key.
  if (e.key != "path") {
    auto share_known = apply_share_key(share_defaults, e.key, e.value);
    if (!share_known) return bad_value(e, share_known.error());
    if (*share_known) {
      if (auto why = token_problem(e.key, e.raw_key, e.value)) error(e.line, *why);
      share_defaults.keys_set.insert(e.key);
      return note_source(sec, e);
    }
  }
  warn(e.line, cat("unknown key '", e.raw_key, "' in [global]"));
}

void Builder::check_protocols() {
  const auto& g = out.config.global;
  if (g.min_protocol <= g.max_protocol) return;
  int line = std::max(st.min_protocol_line, st.max_protocol_line);
  error(line, "server min protocol is higher than server max protocol");
}

// The section's keys over the [global] defaults; nullopt when the name is bad.
std::optional<ShareConfig> Builder::build_share(const Section& sec) {
  if (auto ok = check_share_name(sec.name); !ok) {
    error(sec.line, ok.error());
    return std::nullopt;
  }
  ShareConfig share = share_defaults;
  share.name = sec.name;
  share.line = sec.line;
  for (const auto& e : sec.entries) {
    auto known = apply_share_key(share, e.key, e.value);
    if (!known) {
      bad_value(e, known.error());
    } else if (*known) {
      if (auto why = token_problem(e.key, e.raw_key, e.value)) error(e.line, *why);
      share.keys_set.insert(e.key);
      note_source(sec, e);
    } else if (is_global_key(e.key)) {
      warn(e.line, cat("'", e.raw_key, "' is a global key; ignored in [", sec.name, "]"));
    } else {
      warn(e.line, cat("unknown key '", e.raw_key, "' in [", sec.name, "]"));
    }
  }
  return share;
}

void Builder::check_share_values(const Section& sec, ShareConfig& share) {
  for (const auto& m : share.vfs_objects)
    if (!is_known_vfs_object(m))
      warn(line_of(sec, "vfsobjects"), cat("vfs objects: '", m, "' is not supported; ignored"));
  if (!share.recycle.enabled || share.path.empty()) return;
  if (auto why = place_repository(share)) error(line_of(sec, "recycle:repository"), cat("share [", sec.name, "]: ", *why));
}

void Builder::add_share(const Section& sec) {
  for (const auto& other : out.config.shares)
    if (iequals(other.name, sec.name))
      return error(sec.line, cat("duplicate share [", sec.name, "] (first defined on line ", other.line, ")"));
  auto built = build_share(sec);
  if (!built) return;
  ShareConfig& share = *built;
  // A share without a usable path is left out; its other keys were still
  // checked above, and a bad path was reported there.
  if (share.path.empty()) {
    bool written = std::any_of(sec.entries.begin(), sec.entries.end(), [](const Entry& e) { return e.key == "path"; });
    if (!written) error(sec.line, cat("share [", sec.name, "] has no path"));
    return;
  }
  check_share_values(sec, share);
  out.config.shares.push_back(std::move(share));
}

// [homes] is a template: no path (each user's home directory from the
// passwd database) or a path that differs per user; one shared directory
// would give every user the same "home".
void Builder::add_homes(const Section& sec) {
  if (out.config.homes)
    return error(sec.line, cat("duplicate [homes] (first defined on line ", out.config.homes->line, ")"));
  auto built = build_share(sec);
  if (!built) return;
  ShareConfig& homes = *built;
  if (!homes.path.empty() && !has_substitution(homes.path))
    return error(line_of(sec, "path"), cat("[homes]: path ", homes.path,
                                           " is the same for every user; leave it out (each user's home directory) "
                                           "or use %S, %U or %H"));
  check_share_values(sec, homes);
  if (homes.recycle.enabled && homes.path.empty()) {
    // The home directory is the share's root: the same rules, against %H.
    homes.path = "%H";
    if (auto why = place_repository(homes)) error(line_of(sec, "recycle:repository"), cat("[homes]: ", *why));
    homes.path.clear();
  }
  out.config.homes = std::move(homes);
}

}  // namespace

std::string normalize_key(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key)
    if (c != ' ' && c != '\t') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

bool parse_bool(std::string_view value, bool& out) {
  std::string v = to_lower(trim(value));
  if (v == "yes" || v == "true" || v == "1" || v == "on") {
    out = true;
    return true;
  }
  if (v == "no" || v == "false" || v == "0" || v == "off") {
    out = false;
    return true;
  }
  return false;
}

const ShareConfig* Config::find_share(std::string_view name) const {
  for (const auto& s : shares)
    if (iequals(s.name, name)) return &s;
  return nullptr;
}

CheckedConfig check_config_text(std::string_view text, std::string_view file_name) {
  Builder b{file_name, {}, {}, {}};
  auto sections = lex(text, file_name, b.out.errors);
  for (const auto& sec : sections) {
    if (!iequals(sec.name, "global")) continue;
    for (const auto& e : sec.entries) b.apply_global(sec, e);
  }
  b.check_protocols();
  for (const auto& sec : sections) {
    if (iequals(sec.name, "global")) continue;
    if (iequals(sec.name, "homes")) {
      b.add_homes(sec);
      continue;
    }
    if (is_reserved_section(sec.name)) {
      b.warn(sec.line, cat("[", sec.name, "] is not supported; section ignored"));
      continue;
    }
    b.add_share(sec);
  }
  sort_by_line(b.out.errors);
  return std::move(b.out);
}

void sort_by_line(std::vector<std::string>& messages) {
  auto line_of = [](const std::string& m) {
    size_t colon = m.find(": ");
    size_t before = colon == std::string::npos || colon == 0 ? std::string::npos : m.rfind(':', colon - 1);
    return before == std::string::npos ? 0 : std::atoi(m.c_str() + before + 1);
  };
  std::stable_sort(messages.begin(), messages.end(),
                   [&](const std::string& a, const std::string& c) { return line_of(a) < line_of(c); });
}

std::expected<ParseOutput, std::string> parse_config_text(std::string_view text, std::string_view file_name) {
  CheckedConfig c = check_config_text(text, file_name);
  if (!c.errors.empty()) {
    std::string all;
    for (const auto& e : c.errors) all += (all.empty() ? "" : "\n") + e;
    return std::unexpected(all);
  }
  return ParseOutput{std::move(c.config), std::move(c.warnings)};
}

namespace {

std::expected<std::string, std::string> read_config_file(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return std::unexpected(cat(path, ": cannot open: ", std::strerror(errno)));
  // A directory opens and reads as empty: "OK" for /etc would hide a typo.
  if (S_ISDIR(st.st_mode)) return std::unexpected(cat(path, ": is a directory, not a configuration file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(cat(path, ": cannot open: ", std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::unexpected(cat(path, ": read error"));
  return ss.str();
}

}  // namespace

std::expected<CheckedConfig, std::string> check_config_file(const std::string& path) {
  auto text = read_config_file(path);
  if (!text) return std::unexpected(text.error());
  return check_config_text(*text, path);
}

std::expected<ParseOutput, std::string> parse_config_file(const std::string& path) {
  auto text = read_config_file(path);
  if (!text) return std::unexpected(text.error());
  auto parsed = parse_config_text(*text, path);
  if (parsed) warn_missing_share_paths(*parsed, path);
  return parsed;
}

// A share whose directory is missing parses (the admin may mount it later)
// but must not pass unnoticed: `config check`, start-up and reload print
// this warning, and a tree connect to it fails with BAD_NETWORK_NAME.
void warn_missing_share_paths(ParseOutput& out, std::string_view file) {
  for (const ShareConfig& share : out.config.shares) {
    if (share.path.empty()) continue;
    struct stat st{};
    if (stat(share.path.c_str(), &st) != 0) {
      out.warnings.push_back(located(file, share.line, cat("share [", share.name, "]: path ", share.path, ": ",
                                                           std::strerror(errno))));
    } else if (!S_ISDIR(st.st_mode)) {
      out.warnings.push_back(located(file, share.line, cat("share [", share.name, "]: path ", share.path,
                                                           " is not a directory")));
    }
  }
}

}  // namespace ringsmb::config
