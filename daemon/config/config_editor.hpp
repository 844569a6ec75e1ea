// A line-preserving editor for ringsmb.conf, for `ringsmbctl share ...`.
// It changes only the lines an edit is about: every other byte of the file
// (comments, blank lines, order, indentation, continuation lines, other
// sections, CRLF line ends, a UTF-8 BOM) is written back as it was read.
//
// The editor reads the text with the parser's rules (config.cpp): a line
// whose first non-blank character is ';' or '#' is a comment, a trailing
// '\' continues a line, "[name]" starts a section, section and key names are
// case- and space-insensitive. It does not validate values; callers run the
// real parser on text() before writing it.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ringsmb::config {

class ConfigEditor {
 public:
  struct Entry {
    std::string key;    // as written
    std::string value;  // continuation lines joined, trimmed
    int line = 0;       // first physical line (1-based)
  };

  explicit ConfigEditor(std::string_view text);

  // The edited text.
  std::string text() const;

  bool has_section(std::string_view name) const;
  // The section's name as written in its header; "" when absent.
  std::string section_name(std::string_view name) const;
  std::vector<std::string> section_names() const;
  std::vector<Entry> entries(std::string_view section) const;

  // Appends "[NAME]" and its KEY = VALUE lines at the end of the file,
  // after one blank line; entries are indented like the file's other ones.
  // Error when the section exists or an argument would break the syntax.
  std::expected<void, std::string> add_section(std::string_view name,
                                               const std::vector<std::pair<std::string, std::string>>& entries);
  // Removes the section header and its entries (with their continuation
  // lines and the comments between them). Comments and blank lines after
  // the last entry stay: they usually introduce the next section.
  std::expected<void, std::string> remove_section(std::string_view name);
  // Sets KEY in SECTION: the first entry with that key (or one of its
  // aliases, see key_aliases) is rewritten in place, keeping its
  // indentation; the other entries with that key or an alias are removed.
  // Without one, the entry is added after the section's last entry.
  std::expected<void, std::string> set(std::string_view section, std::string_view key, std::string_view value);
  // Removes every entry of KEY (and its aliases) from SECTION; false when
  // there was none.
  bool unset(std::string_view section, std::string_view key);

  // Keys that name the same setting as KEY (normalized, see normalize_key),
  // including KEY itself. An inverted alias ("writeable" for "read only")
  // counts: setting "read only" replaces a "writeable" line.
  static std::vector<std::string> key_aliases(std::string_view key);

 private:
  struct Line {
    std::string text;  // without the line end
    std::string eol;   // "\n", "\r\n" or "" (last line without one)
  };
  struct Span {  // a logical line: physical lines [first, last]
    size_t first = 0, last = 0;
  };
  struct SectionInfo {
    std::string name;
    size_t header = 0;          // physical line index of "[name]"
    std::vector<Span> entries;  // key = value logical lines
    size_t end = 0;             // one past the section's last physical line
  };

  std::vector<SectionInfo> scan() const;
  const SectionInfo* find(const std::vector<SectionInfo>& sections, std::string_view name) const;
  std::string entry_key(const Span& s) const;
  std::string indent_for_new_entry(const SectionInfo* in) const;
  std::string default_eol() const;
  void erase_lines(size_t first, size_t last_inclusive);

  std::string bom_;
  std::vector<Line> lines_;
};

// Writes TEXT to PATH so that a reader (a reloading server, a crash) sees
// the old file or the new one, never a mix: a temporary file in the same
// directory, the old file's mode and owner (0644 for a new file), fsync,
// rename over PATH, fsync of the directory. A refusal by the system starts
// with "permission denied".
std::expected<void, std::string> write_file_atomically(const std::string& path, std::string_view text);

// Checks that VALUE can be written after "key =" and read back unchanged:
// no line breaks, no NUL, no trailing '\'.
std::expected<void, std::string> check_editable_value(std::string_view key, std::string_view value);

}  // namespace ringsmb::config
