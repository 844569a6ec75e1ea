#include "config/config_editor.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "config/config.hpp"
#include "config/config_internal.hpp"

namespace ringsmb::config {

using detail::iequals;
using detail::trim;

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::string_view kDefaultIndent = "  ";

// Keys the parser treats as one setting (config_keys.cpp). Kept here, not
// derived from the parser's table, because inverted aliases ("writeable" is
// "read only" negated) are one setting for an editor but two keys there.
constexpr std::array<std::array<std::string_view, 4>, 10> kAliasGroups = {{
    {"readonly", "writeable", "writable", "writeok"},
    {"guestok", "public", "", ""},
    {"browseable", "browsable", "", ""},
    {"path", "directory", "", ""},
    {"smb3encryption", "serversmbencrypt", "", ""},
    {"hostsallow", "allowhosts", "", ""},
    {"hostsdeny", "denyhosts", "", ""},
    {"createmask", "createmode", "", ""},
    {"directorymask", "directorymode", "", ""},
    {"forcegroup", "group", "", ""},
}};

bool ends_with_backslash(std::string_view s, std::string_view* body) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s.empty() || s.back() != '\\') return false;
  if (body) *body = s.substr(0, s.size() - 1);
  return true;
}

bool is_comment_or_blank(std::string_view t) { return t.empty() || t.front() == ';' || t.front() == '#'; }

std::string leading_space(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (s[n] == ' ' || s[n] == '\t')) ++n;
  return std::string(s.substr(0, n));
}

std::expected<void, std::string> check_key(std::string_view key) {
  std::string_view k = trim(key);
  if (k.empty()) return std::unexpected("empty key");
  if (k.find_first_of("=\n\r") != std::string_view::npos || k.find('\0') != std::string_view::npos)
    return std::unexpected(cat("invalid key '", k, "'"));
  if (k.front() == '[' || k.front() == ';' || k.front() == '#') return std::unexpected(cat("invalid key '", k, "'"));
  return {};
}

std::expected<void, std::string> check_section_name(std::string_view name) {
  if (trim(name).empty()) return std::unexpected("empty section name");
  if (name.find_first_of("[]\n\r") != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return std::unexpected(cat("invalid section name '", name, "'"));
  return {};
}

}  // namespace

std::expected<void, std::string> check_editable_value(std::string_view key, std::string_view value) {
  if (value.find_first_of("\n\r") != std::string_view::npos || value.find('\0') != std::string_view::npos)
    return std::unexpected(cat("the value of '", key, "' must be one line"));
  if (ends_with_backslash(value, nullptr))
    return std::unexpected(cat("the value of '", key, "' must not end with '\\' (it would continue the line)"));
  return {};
}

ConfigEditor::ConfigEditor(std::string_view text) {
  if (text.starts_with(kBom)) {
    bom_ = kBom;
    text.remove_prefix(kBom.size());
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    Line l;
    if (nl == std::string_view::npos) {
      l.text = text.substr(pos);
      pos = text.size();
    } else {
      l.text = text.substr(pos, nl - pos);
      l.eol = "\n";
      pos = nl + 1;
    }
    if (!l.text.empty() && l.text.back() == '\r') {
      l.text.pop_back();
      l.eol = "\r" + l.eol;
    }
    lines_.push_back(std::move(l));
  }
}

std::string ConfigEditor::text() const {
  std::string out = bom_;
  for (const auto& l : lines_) out += l.text + l.eol;
  return out;
}

// Mirrors the parser's logical_lines() and lex(): continuation lines join
// the line they continue; a comment never continues.
std::vector<ConfigEditor::SectionInfo> ConfigEditor::scan() const {
  std::vector<Span> logical;
  bool continuing = false;
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (!continuing) {
      if (is_comment_or_blank(trim(lines_[i].text))) continue;
      logical.push_back({i, i});
    }
    logical.back().last = i;
    continuing = ends_with_backslash(lines_[i].text, nullptr);
  }
  std::vector<SectionInfo> sections;
  for (const auto& span : logical) {
    std::string_view t = trim(lines_[span.first].text);
    if (t.front() == '[') {
      size_t close = t.find(']');
      std::string_view name = trim(t.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
      if (!sections.empty()) sections.back().end = span.first;
      sections.push_back({std::string(name), span.first, {}, lines_.size()});
    } else if (!sections.empty()) {
      sections.back().entries.push_back(span);
    }
  }
  return sections;
}

const ConfigEditor::SectionInfo* ConfigEditor::find(const std::vector<SectionInfo>& sections,
                                                    std::string_view name) const {
  for (const auto& s : sections)
    if (iequals(s.name, trim(name))) return &s;
  return nullptr;
}

std::string ConfigEditor::entry_key(const Span& s) const {
  std::string joined;
  for (size_t i = s.first; i <= s.last; ++i) {
    std::string_view body;
    joined += ends_with_backslash(lines_[i].text, &body) && i < s.last ? std::string(body) : lines_[i].text;
  }
  size_t eq = joined.find('=');
  return std::string(trim(std::string_view(joined).substr(0, eq)));
}

bool ConfigEditor::has_section(std::string_view name) const {
  auto sections = scan();
  return find(sections, name) != nullptr;
}

std::string ConfigEditor::section_name(std::string_view name) const {
  auto sections = scan();
  const SectionInfo* s = find(sections, name);
  return s ? s->name : std::string();
}

std::vector<std::string> ConfigEditor::section_names() const {
  std::vector<std::string> out;
  for (const auto& s : scan()) out.push_back(s.name);
  return out;
}

std::vector<ConfigEditor::Entry> ConfigEditor::entries(std::string_view section) const {
  auto sections = scan();
  const SectionInfo* s = find(sections, section);
  std::vector<Entry> out;
  if (!s) return out;
  for (const auto& span : s->entries) {
    std::string joined;
    for (size_t i = span.first; i <= span.last; ++i) {
      std::string_view body;
      joined += ends_with_backslash(lines_[i].text, &body) && i < span.last ? std::string(body) : lines_[i].text;
    }
    size_t eq = joined.find('=');
    if (eq == std::string::npos) continue;  // not an entry; the parser rejects it
    out.push_back({std::string(trim(std::string_view(joined).substr(0, eq))),
                   std::string(trim(std::string_view(joined).substr(eq + 1))), int(span.first) + 1});
  }
  return out;
}

std::string ConfigEditor::default_eol() const {
  for (const auto& l : lines_)
    if (!l.eol.empty()) return l.eol;
  return "\n";
}

std::string ConfigEditor::indent_for_new_entry(const SectionInfo* in) const {
  if (in && !in->entries.empty()) return leading_space(lines_[in->entries.front().first].text);
  for (const auto& s : scan())
    if (!iequals(s.name, "global") && !s.entries.empty()) return leading_space(lines_[s.entries.front().first].text);
  for (const auto& s : scan())
    if (!s.entries.empty()) return leading_space(lines_[s.entries.front().first].text);
  return std::string(kDefaultIndent);
}

void ConfigEditor::erase_lines(size_t first, size_t last_inclusive) {
  bool had_eol = !lines_[last_inclusive].eol.empty();
  lines_.erase(lines_.begin() + long(first), lines_.begin() + long(last_inclusive) + 1);
  // Removing the last lines must not glue the new last line to nothing.
  if (!had_eol && first == lines_.size() && !lines_.empty()) lines_.back().eol = "";
}

std::expected<void, std::string> ConfigEditor::add_section(
    std::string_view name, const std::vector<std::pair<std::string, std::string>>& entries) {
  if (auto ok = check_section_name(name); !ok) return ok;
  if (has_section(name)) return std::unexpected(cat("section [", section_name(name), "] already exists"));
  for (const auto& [k, v] : entries) {
    if (auto ok = check_key(k); !ok) return ok;
    if (auto ok = check_editable_value(k, v); !ok) return ok;
  }
  std::string indent = indent_for_new_entry(nullptr);
  std::string eol = default_eol();
  if (!lines_.empty()) {
    if (lines_.back().eol.empty()) lines_.back().eol = eol;
    if (!trim(lines_.back().text).empty()) lines_.push_back({"", eol});
  }
  lines_.push_back({cat("[", trim(name), "]"), eol});
  for (const auto& [k, v] : entries) lines_.push_back({cat(indent, trim(k), " = ", trim(v)), eol});
  return {};
}

std::expected<void, std::string> ConfigEditor::remove_section(std::string_view name) {
  auto sections = scan();
  const SectionInfo* s = find(sections, name);
  if (!s) return std::unexpected(cat("no section [", name, "]"));
  size_t first = s->header;
  size_t last = s->entries.empty() ? s->header : s->entries.back().last;
  // One blank line separated this section from the previous one; drop it
  // too when a blank line (or the end of the file) follows, so no double
  // blank line is left behind.
  bool blank_before = first > 0 && trim(lines_[first - 1].text).empty();
  bool blank_after = last + 1 >= lines_.size() || trim(lines_[last + 1].text).empty();
  if (blank_before && blank_after) --first;
  erase_lines(first, last);
  return {};
}

std::vector<std::string> ConfigEditor::key_aliases(std::string_view key) {
  std::string k = normalize_key(key);
  for (const auto& group : kAliasGroups) {
    if (std::find(group.begin(), group.end(), k) == group.end()) continue;
    std::vector<std::string> out;
    for (auto a : group)
      if (!a.empty()) out.emplace_back(a);
    return out;
  }
  return {k};
}

std::expected<void, std::string> ConfigEditor::set(std::string_view section, std::string_view key,
                                                   std::string_view value) {
  if (auto ok = check_key(key); !ok) return ok;
  if (auto ok = check_editable_value(trim(key), value); !ok) return ok;
  auto sections = scan();
  const SectionInfo* s = find(sections, section);
  if (!s) return std::unexpected(cat("no section [", section, "]"));
  auto aliases = key_aliases(key);
  std::vector<Span> matches;
  for (const auto& span : s->entries)
    if (std::ranges::find(aliases, normalize_key(entry_key(span))) != aliases.end()) matches.push_back(span);
  std::string eol = default_eol();
  if (matches.empty()) {
    size_t after = s->entries.empty() ? s->header : s->entries.back().last;
    if (lines_[after].eol.empty()) lines_[after].eol = eol;
    Line entry{cat(indent_for_new_entry(s), trim(key), " = ", trim(value)), eol};
    lines_.insert(lines_.begin() + long(after) + 1, std::move(entry));
    // A last line ending in '\' (only possible at the end of the file)
    // would swallow the new entry; a blank line ends the continuation.
    if (ends_with_backslash(lines_[after].text, nullptr)) lines_.insert(lines_.begin() + long(after) + 1, {"", eol});
    return {};
  }
  // Keep the admin's spelling of the key when it is the same key.
  const Span& first = matches.front();
  std::string written_key = entry_key(first);
  if (normalize_key(written_key) != normalize_key(key)) written_key = std::string(trim(key));
  Line replacement{cat(leading_space(lines_[first.first].text), written_key, " = ", trim(value)),
                   lines_[first.last].eol};
  for (size_t i = matches.size(); i-- > 1;) erase_lines(matches[i].first, matches[i].last);
  lines_.erase(lines_.begin() + long(first.first) + 1, lines_.begin() + long(first.last) + 1);
  lines_[first.first] = std::move(replacement);
  return {};
}

bool ConfigEditor::unset(std::string_view section, std::string_view key) {
  auto sections = scan();
  const SectionInfo* s = find(sections, section);
  if (!s) return false;
  auto aliases = key_aliases(key);
  bool any = false;
  for (size_t i = s->entries.size(); i-- > 0;) {
    const Span& span = s->entries[i];
    if (std::ranges::find(aliases, normalize_key(entry_key(span))) == aliases.end()) continue;
    erase_lines(span.first, span.last);
    any = true;
  }
  return any;
}

namespace {

std::string io_error(const std::string& what, int err) {
  if (err == EACCES || err == EPERM || err == EROFS)
    return cat("permission denied: run as root (", what, ": ", std::strerror(err), ")");
  return cat(what, ": ", std::strerror(err));
}

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(size_t(n));
  }
  return true;
}

}  // namespace

std::expected<void, std::string> write_file_atomically(const std::string& path, std::string_view text) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat old{};
  bool existed = ::stat(path.c_str(), &old) == 0;
  std::string tmp = path + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return std::unexpected(io_error(cat("cannot create a file in ", dir), errno));
  auto abandon = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return std::unexpected(io_error(what, err));
  };
  if (!write_all(fd, text)) return abandon(cat("cannot write ", tmp));
  if (::fchmod(fd, existed ? (old.st_mode & 07777) : 0644) != 0) return abandon(cat("cannot chmod ", tmp));
  if (existed && (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) &&
      ::fchown(fd, old.st_uid, old.st_gid) != 0)
    return abandon(cat("cannot keep the owner of ", path));
  if (::fsync(fd) != 0) return abandon(cat("cannot sync ", tmp));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return std::unexpected(io_error(cat("cannot write ", tmp), errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return std::unexpected(io_error(cat("cannot replace ", path), err));
  }
  // The rename is durable only once the directory is.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace ringsmb::config
