// ringsmb.conf parser: splits the text into sections of key/value entries,
// then applies [global] first (so share defaults set there reach every share,
// wherever the share appears) and builds the shares from it.
#include "config/config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/config_internal.hpp"

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

std::expected<std::vector<Section>, std::string> lex(std::string_view text, std::string_view file) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // editors on Windows add a UTF-8 BOM
  std::vector<Section> sections;
  for (const auto& ll : logical_lines(text)) {
    std::string_view t = trim(ll.text);
    if (t.empty()) continue;  // e.g. a lone '\' continued into blank lines
    if (t.front() == '[') {
      auto sec = parse_header(t, file, ll.line);
      if (!sec) return std::unexpected(sec.error());
      sections.push_back(std::move(*sec));
      continue;
    }
    size_t eq = t.find('=');
    if (eq == std::string_view::npos)
      return std::unexpected(located(file, ll.line, cat("expected 'key = value', got '", excerpt(t), "'")));
    std::string_view key = trim(t.substr(0, eq));
    if (key.empty()) return std::unexpected(located(file, ll.line, "missing key before '='"));
    if (sections.empty())
      return std::unexpected(located(file, ll.line, cat("'", excerpt(key), "' appears before any [section]")));
    sections.back().entries.push_back({std::string(key), normalize_key(key), std::string(trim(t.substr(eq + 1))), ll.line});
  }
  return sections;
}

bool is_reserved_section(std::string_view name) {
  return iequals(name, "homes") || iequals(name, "printers") || iequals(name, "print$") || iequals(name, "ipc$");
}

struct Builder {
  std::string_view file;
  ParseOutput out;
  ShareConfig share_defaults;  // share keys written in [global]
  GlobalState st;

  std::expected<void, std::string> apply_global(const Entry& e);
  std::expected<void, std::string> check_protocols();
  std::expected<void, std::string> add_share(const Section& sec);
  void warn(int line, std::string_view msg) { out.warnings.push_back(located(file, line, msg)); }
};

std::expected<void, std::string> Builder::apply_global(const Entry& e) {
  st.current_line = e.line;
  auto known = apply_global_key(out.config.global, st, e.key, e.value);
  if (!known) return std::unexpected(located(file, e.line, known.error()));
  for (const auto& n : st.notes) warn(e.line, n);
  st.notes.clear();
  if (*known) return {};
  // Samba lets [global] carry defaults for every share; a path there makes
  // no sense, so it stays an unknown key.
  if (e.key != "path") {
    auto share_known = apply_share_key(share_defaults, e.key, e.value);
    if (!share_known) return std::unexpected(located(file, e.line, share_known.error()));
    if (*share_known) return {};
  }
  warn(e.line, cat("unknown key '", e.raw_key, "' in [global]"));
  return {};
}

std::expected<void, std::string> Builder::check_protocols() {
  const auto& g = out.config.global;
  if (g.min_protocol <= g.max_protocol) return {};
  int line = std::max(st.min_protocol_line, st.max_protocol_line);
  return std::unexpected(located(file, line, "server min protocol is higher than server max protocol"));
}

std::expected<void, std::string> Builder::add_share(const Section& sec) {
  if (auto ok = check_share_name(sec.name); !ok) return std::unexpected(located(file, sec.line, ok.error()));
  for (const auto& other : out.config.shares)
    if (iequals(other.name, sec.name))
      return std::unexpected(located(
          file, sec.line, cat("duplicate share [", sec.name, "] (first defined on line ", other.line, ")")));
  ShareConfig share = share_defaults;
  share.name = sec.name;
  share.line = sec.line;
  for (const auto& e : sec.entries) {
    auto known = apply_share_key(share, e.key, e.value);
    if (!known) return std::unexpected(located(file, e.line, known.error()));
    if (*known) continue;
    if (is_global_key(e.key))
      warn(e.line, cat("'", e.raw_key, "' is a global key; ignored in [", sec.name, "]"));
    else
      warn(e.line, cat("unknown key '", e.raw_key, "' in [", sec.name, "]"));
  }
  if (share.path.empty()) return std::unexpected(located(file, sec.line, cat("share [", sec.name, "] has no path")));
  out.config.shares.push_back(std::move(share));
  return {};
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

std::expected<ParseOutput, std::string> parse_config_text(std::string_view text, std::string_view file_name) {
  auto sections = lex(text, file_name);
  if (!sections) return std::unexpected(sections.error());
  Builder b{file_name, {}, {}, {}};
  for (const auto& sec : *sections) {
    if (!iequals(sec.name, "global")) continue;
    for (const auto& e : sec.entries)
      if (auto r = b.apply_global(e); !r) return std::unexpected(r.error());
  }
  if (auto r = b.check_protocols(); !r) return std::unexpected(r.error());
  for (const auto& sec : *sections) {
    if (iequals(sec.name, "global")) continue;
    if (is_reserved_section(sec.name)) {
      b.warn(sec.line, cat("[", sec.name, "] is not supported; section ignored"));
      continue;
    }
    if (auto r = b.add_share(sec); !r) return std::unexpected(r.error());
  }
  return std::move(b.out);
}

std::expected<ParseOutput, std::string> parse_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(cat(path, ": cannot open: ", std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::unexpected(cat(path, ": read error"));
  auto parsed = parse_config_text(ss.str(), path);
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
