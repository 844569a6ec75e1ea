#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.hpp"
#include "config/config_editor.hpp"

using namespace ringsmb::config;

namespace {

// A file with everything an admin's hand-written config has: comments of
// both kinds, blank lines, odd spacing and case, a continuation line.
const std::string kFile =
    "; ringsmb.conf on the NAS\n"
    "[global]\n"
    "   server string = NAS   ; not a comment: part of the value\n"
    "\n"
    "# the media share\n"
    "[Media]\n"
    "   path = /srv/media\n"
    "   ; only the family\n"
    "   valid users = alice, \\\n"
    "                 bob\n"
    "   Writeable = yes\n"
    "\n"
    "# backups\n"
    "[backup]\n"
    "\tpath = /srv/backup\n"
    "\tread only = yes\n";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

ParseOutput parsed(const std::string& text) {
  auto r = parse_config_text(text, "t.conf");
  if (!r) FAIL("edited text does not parse: " << r.error() << "\n" << text);
  return std::move(*r);
}

}  // namespace

TEST_CASE("an unedited file is written back byte for byte", "[config][editor]") {
  for (const std::string& text :
       {kFile, replace_all(kFile, "\n", "\r\n"), "\xEF\xBB\xBF" + kFile, std::string("[a]\npath = /x"), std::string()}) {
    ConfigEditor e(text);
    CHECK(e.text() == text);
  }
}

TEST_CASE("sections and entries are read with the parser's rules", "[config][editor]") {
  ConfigEditor e(kFile);
  CHECK(e.section_names() == std::vector<std::string>{"global", "Media", "backup"});
  CHECK(e.has_section("media"));
  CHECK(e.has_section(" MEDIA "));
  CHECK_FALSE(e.has_section("homes"));
  CHECK(e.section_name("MEDIA") == "Media");
  auto entries = e.entries("media");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].key == "path");
  CHECK(entries[0].line == 7);
  CHECK(entries[1].key == "valid users");
  CHECK(entries[1].value == "alice,                  bob");
  CHECK(entries[2].key == "Writeable");
}

TEST_CASE("add_section appends after one blank line, indented like the file", "[config][editor]") {
  ConfigEditor e(kFile);
  REQUIRE(e.add_section("photos", {{"path", "/srv/photos"}, {"comment", "Holiday photos"}}));
  CHECK(e.text() == kFile + "\n[photos]\n   path = /srv/photos\n   comment = Holiday photos\n");
  auto out = parsed(e.text());
  REQUIRE(out.config.find_share("photos"));
  CHECK(out.config.find_share("photos")->comment == "Holiday photos");

  SECTION("a file without a final newline gets one first") {
    ConfigEditor f("[a]\npath = /a");
    REQUIRE(f.add_section("b", {{"path", "/b"}}));
    CHECK(f.text() == "[a]\npath = /a\n\n[b]\npath = /b\n");
  }
  SECTION("CRLF files stay CRLF") {
    ConfigEditor f("[a]\r\n  path = /a\r\n");
    REQUIRE(f.add_section("b", {{"path", "/b"}}));
    CHECK(f.text() == "[a]\r\n  path = /a\r\n\r\n[b]\r\n  path = /b\r\n");
  }
  SECTION("an empty file") {
    ConfigEditor f("");
    REQUIRE(f.add_section("b", {{"path", "/b"}}));
    CHECK(f.text() == "[b]\n  path = /b\n");
  }
}

TEST_CASE("add_section refuses duplicates and values that break the syntax", "[config][editor]") {
  ConfigEditor e(kFile);
  auto dup = e.add_section("MEDIA", {{"path", "/x"}});
  REQUIRE_FALSE(dup);
  CHECK(dup.error() == "section [Media] already exists");
  CHECK_FALSE(e.add_section("x", {{"path", "/x\n[global]"}}));
  CHECK_FALSE(e.add_section("x", {{"path", "/x\\"}}));
  CHECK_FALSE(e.add_section("x]", {{"path", "/x"}}));
  CHECK_FALSE(e.add_section("x", {{"a = b", "c"}}));
  CHECK_FALSE(e.add_section("x", {{"[y", "c"}}));
  CHECK(e.text() == kFile);  // nothing changed by the failures
}

TEST_CASE("remove_section removes the section and one separating blank line", "[config][editor]") {
  ConfigEditor e(kFile);
  REQUIRE(e.remove_section("media"));
  // The comment above [Media] and the one above [backup] stay: an editor
  // cannot know which section a comment is about; the entries' comment goes.
  CHECK(e.text() ==
        "; ringsmb.conf on the NAS\n"
        "[global]\n"
        "   server string = NAS   ; not a comment: part of the value\n"
        "\n"
        "# the media share\n"
        "\n"
        "# backups\n"
        "[backup]\n"
        "\tpath = /srv/backup\n"
        "\tread only = yes\n");
  auto out = parsed(e.text());
  CHECK(out.config.shares.size() == 1);

  SECTION("the last section, leaving no trailing blank line") {
    ConfigEditor f(kFile);
    REQUIRE(f.remove_section("BACKUP"));
    CHECK(f.text() == kFile.substr(0, kFile.find("# backups")) + "# backups\n");
    ConfigEditor g("[a]\npath = /a\n\n[b]\npath = /b\n");
    REQUIRE(g.remove_section("b"));
    CHECK(g.text() == "[a]\npath = /a\n");
  }
  SECTION("a missing section is an error") { CHECK_FALSE(e.remove_section("nope")); }
}

TEST_CASE("set rewrites the entry in place and keeps everything else", "[config][editor]") {
  ConfigEditor e(kFile);
  REQUIRE(e.set("media", "PATH", "/srv/media2"));
  CHECK(e.text() == replace_all(kFile, "path = /srv/media\n", "path = /srv/media2\n"));

  SECTION("a continued entry becomes one line") {
    REQUIRE(e.set("media", "validusers", "carol"));
    CHECK(e.text() == replace_all(replace_all(kFile, "path = /srv/media\n", "path = /srv/media2\n"),
                                  "valid users = alice, \\\n                 bob\n", "valid users = carol\n"));
    CHECK(parsed(e.text()).config.find_share("media")->valid_users == std::vector<std::string>{"carol"});
  }
  SECTION("an inverted alias is replaced by the key that was set") {
    REQUIRE(e.set("media", "read only", "yes"));
    CHECK(e.text().find("Writeable") == std::string::npos);
    CHECK(e.text().find("   read only = yes\n\n# backups") != std::string::npos);
    CHECK(parsed(e.text()).config.find_share("media")->read_only);
  }
  SECTION("a new key goes after the section's last entry, with its indentation") {
    REQUIRE(e.set("backup", "comment", "nightly"));
    CHECK(e.text() == replace_all(kFile, "path = /srv/media\n", "path = /srv/media2\n") + "\tcomment = nightly\n");
    REQUIRE(e.set("media", "guest ok", "yes"));
    CHECK(e.text().find("   Writeable = yes\n   guest ok = yes\n\n# backups") != std::string::npos);
  }
  SECTION("a dangling continuation at the end of the file does not swallow the new entry") {
    ConfigEditor f("[a]\npath = /a\ncomment = x \\\n");
    REQUIRE(f.set("a", "guest ok", "yes"));
    CHECK(f.text() == "[a]\npath = /a\ncomment = x \\\n\nguest ok = yes\n");
    CHECK(parsed(f.text()).config.shares[0].guest_ok);
  }
  SECTION("every other entry of the setting is removed") {
    ConfigEditor f("[a]\npath = /a\nread only = no\nwritable = no\npublic = no\n");
    REQUIRE(f.set("a", "writeable", "yes"));
    CHECK(f.text() == "[a]\npath = /a\nwriteable = yes\npublic = no\n");
    CHECK_FALSE(parsed(f.text()).config.shares[0].read_only);
  }
  SECTION("errors") {
    CHECK_FALSE(e.set("nope", "path", "/x"));
    CHECK_FALSE(e.set("media", "path", "a\nb"));
    CHECK_FALSE(e.set("media", "", "x"));
  }
}

TEST_CASE("unset removes a setting with its aliases", "[config][editor]") {
  ConfigEditor e(kFile);
  CHECK(e.unset("media", "read only"));
  CHECK(e.text() == replace_all(kFile, "   Writeable = yes\n", ""));
  CHECK_FALSE(e.unset("media", "read only"));
  CHECK_FALSE(e.unset("nope", "path"));
}

TEST_CASE("key_aliases groups the parser's synonyms", "[config][editor]") {
  CHECK(ConfigEditor::key_aliases("Read Only") ==
        std::vector<std::string>{"readonly", "writeable", "writable", "writeok"});
  CHECK(ConfigEditor::key_aliases("public") == std::vector<std::string>{"guestok", "public"});
  CHECK(ConfigEditor::key_aliases("hosts allow") == std::vector<std::string>{"hostsallow", "allowhosts"});
  CHECK(ConfigEditor::key_aliases("Create Mode") == std::vector<std::string>{"createmask", "createmode"});
  CHECK(ConfigEditor::key_aliases("group") == std::vector<std::string>{"forcegroup", "group"});
  CHECK(ConfigEditor::key_aliases("veto files") == std::vector<std::string>{"vetofiles"});
}

TEST_CASE("write_file_atomically replaces the file and keeps its mode", "[config][editor]") {
  char tmpl[] = "/tmp/ringsmb-editor-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string dir = tmpl, path = dir + "/ringsmb.conf";
  REQUIRE(write_file_atomically(path, "[a]\npath = /a\n"));
  struct stat st{};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);  // a new file
  REQUIRE(chmod(path.c_str(), 0640) == 0);
  REQUIRE(write_file_atomically(path, "[b]\npath = /b\n"));
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "[b]\npath = /b\n");
  // No temporary file is left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.is_regular_file() ? 1 : 0;
  CHECK(entries == 1);
  auto missing_dir = write_file_atomically(dir + "/no/such/dir/x.conf", "x");
  CHECK_FALSE(missing_dir);
  std::filesystem::remove_all(dir);
}
