#include <catch2/catch.hpp>

#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "auth/user_db.hpp"

using namespace ringsmb::auth;

namespace {

// A fresh directory per test, removed afterwards.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ringsmb-userdb-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return path + "/" + name; }
  size_t entries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path)) ++n;
    return n;
  }
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

UserRecord rec(std::string name, std::string unix_user, uint8_t fill) {
  UserRecord r{std::move(name), std::move(unix_user), {}};
  r.nt_hash.fill(fill);
  return r;
}

std::string load_error(const std::string& text) {
  TempDir d;
  write_file(d.file("users.db"), text);
  auto r = UserDb::load(d.file("users.db"));
  REQUIRE_FALSE(r.has_value());
  std::string e = r.error();
  // Strip the directory so messages compare independent of the temp name.
  REQUIRE(e.starts_with(d.path + "/"));
  return e.substr(d.path.size() + 1);
}

const std::string kHash = "8846f7eaee8fb117ad06bdd830b7586c";  // NT hash of "password"

}  // namespace

TEST_CASE("missing file is an empty database", "[userdb]") {
  TempDir d;
  auto db = UserDb::load(d.file("none.db"));
  REQUIRE(db);
  CHECK(db->users().empty());
}

TEST_CASE("load parses records, comments and blank lines", "[userdb]") {
  TempDir d;
  write_file(d.file("users.db"), "# header\n\nalice:alice:" + kHash + "\n  # indented\nBob:bobu:" +
                                     std::string(32, 'F') + "\r\n");
  auto db = UserDb::load(d.file("users.db"));
  REQUIRE(db);
  REQUIRE(db->users().size() == 2);
  const auto& a = db->users()[0];
  CHECK(a.name == "alice");
  CHECK(a.unix_user == "alice");
  CHECK(a.nt_hash[0] == 0x88);
  CHECK(a.nt_hash[15] == 0x6c);
  CHECK(db->users()[1].nt_hash[7] == 0xff);
}

TEST_CASE("corrupt files give line-numbered errors", "[userdb]") {
  CHECK(load_error("alice:alice\n") ==
        "users.db:1: expected NAME:UNIX_USER:NTHASH[:FLAGS] (3 or 4 fields), got 2 fields");
  CHECK(load_error("# c\nalice\n") == "users.db:2: expected NAME:UNIX_USER:NTHASH[:FLAGS] (3 or 4 fields), got 1 field");
  CHECK(load_error("a:b:" + kHash + ":extra\n") == "users.db:1: unknown flag 'extra' for 'a' (known: disabled)");
  CHECK(load_error("a:b:" + kHash + ":disabled:x\n") ==
        "users.db:1: expected NAME:UNIX_USER:NTHASH[:FLAGS] (3 or 4 fields), got 5 fields");
  CHECK(load_error("\n\n:alice:" + kHash + "\n") == "users.db:3: empty user name");
  CHECK(load_error("alice::" + kHash + "\n") == "users.db:1: empty unix user for 'alice'");
  CHECK(load_error("alice:alice:" + kHash.substr(1) + "\n") ==
        "users.db:1: bad NT hash for 'alice' (expected 32 hex digits)");
  CHECK(load_error("alice:alice:" + kHash.substr(2) + "zz\n") ==
        "users.db:1: bad NT hash for 'alice' (expected 32 hex digits)");
  CHECK(load_error("alice:alice:" + kHash + "\nx:x:" + kHash + "\nALICE:other:" + kHash + "\n") ==
        "users.db:3: duplicate user 'ALICE' (first on line 1)");
}

TEST_CASE("find is case-insensitive; upsert and remove", "[userdb]") {
  UserDb db;
  db.upsert(rec("Alice", "alice", 1));
  db.upsert(rec("bob", "bob", 2));
  REQUIRE(db.find("ALICE"));
  CHECK(db.find("alice")->name == "Alice");
  CHECK(db.find("carol") == nullptr);
  db.upsert(rec("alice", "alice2", 3));  // replaces, keeps one record
  REQUIRE(db.users().size() == 2);
  CHECK(db.find("Alice")->unix_user == "alice2");
  CHECK(db.find("Alice")->nt_hash[0] == 3);
  CHECK(db.remove("BOB"));
  CHECK_FALSE(db.remove("bob"));
  CHECK(db.users().size() == 1);
}

TEST_CASE("save/load round trip, atomic with mode 0600", "[userdb]") {
  TempDir d;
  std::string path = d.file("users.db");
  UserDb db;
  db.upsert(rec("alice", "alice", 0xab));
  db.upsert(rec("Bob Smith", "bob", 0x01));
  REQUIRE(db.save(path));
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(d.entries() == 1);  // no temp file left behind

  auto back = UserDb::load(path);
  REQUIRE(back);
  REQUIRE(back->users().size() == 2);
  CHECK(back->users()[0].name == "alice");
  CHECK(back->users()[0].nt_hash == db.users()[0].nt_hash);
  CHECK(back->users()[1].name == "Bob Smith");
  CHECK(back->users()[1].unix_user == "bob");
  CHECK(read_file(path).find("alice:alice:abababababababababababababababab\n") != std::string::npos);

  // Saving over a world-readable file still ends up 0600 (it is replaced).
  REQUIRE(chmod(path.c_str(), 0644) == 0);
  back->remove("alice");
  REQUIRE(back->save(path));
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  auto again = UserDb::load(path);
  REQUIRE(again);
  CHECK(again->users().size() == 1);
  CHECK(d.entries() == 1);
}

TEST_CASE("save refuses unstorable names and missing directories", "[userdb]") {
  TempDir d;
  UserDb db;
  db.upsert(rec("a:b", "a", 0));
  auto r = db.save(d.file("users.db"));
  REQUIRE_FALSE(r);
  CHECK(r.error().find("not storable") != std::string::npos);
  CHECK(d.entries() == 0);

  UserDb ok;
  ok.upsert(rec("a", "a", 0));
  auto r2 = ok.save(d.file("no/such/dir/users.db"));
  REQUIRE_FALSE(r2);
  CHECK(r2.error().find("cannot create temporary file") != std::string::npos);
}

TEST_CASE("is_valid_user_name", "[userdb]") {
  CHECK(is_valid_user_name("alice"));
  CHECK(is_valid_user_name("Bob Smith"));
  CHECK(is_valid_user_name("j.doe-1_x"));
  CHECK_FALSE(is_valid_user_name(""));
  CHECK_FALSE(is_valid_user_name(std::string(65, 'a')));
  CHECK_FALSE(is_valid_user_name("a:b"));
  CHECK_FALSE(is_valid_user_name("a@b"));
  CHECK_FALSE(is_valid_user_name("dom\\user"));
  CHECK_FALSE(is_valid_user_name(" lead"));
  CHECK_FALSE(is_valid_user_name("tab\tname"));
}

TEST_CASE("lookup_unix_identity", "[userdb]") {
  auto root = lookup_unix_identity("root");
  REQUIRE(root);
  CHECK(root->uid == 0);
  CHECK(root->gid == 0);
  CHECK(std::find(root->groups.begin(), root->groups.end(), 0u) != root->groups.end());
  CHECK_FALSE(lookup_unix_identity("no-such-user-ringsmb-test"));

  // The current user, whoever runs the tests, resolves to its own uid.
  if (struct passwd* pw = getpwuid(getuid())) {
    auto me = lookup_unix_identity(pw->pw_name);
    REQUIRE(me);
    CHECK(me->uid == getuid());
    CHECK_FALSE(me->groups.empty());
  }
}

TEST_CASE("the disabled flag: parsed, saved only when set, kept by upsert of the same record", "[userdb]") {
  TempDir d;
  write_file(d.file("users.db"), "alice:alice:" + kHash + ":disabled\nbob:bob:" + kHash + ":\ncarol:carol:" + kHash +
                                     ": disabled , \n");
  auto db = UserDb::load(d.file("users.db"));
  REQUIRE(db);
  CHECK(db->find("alice")->disabled);
  CHECK_FALSE(db->find("bob")->disabled);  // an empty FLAGS field is no flag
  CHECK(db->find("carol")->disabled);
  auto rec = *db->find("bob");
  rec.disabled = true;
  db->upsert(rec);
  REQUIRE(db->save(d.file("users.db")));
  std::ifstream in(d.file("users.db"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("alice:alice:" + kHash + ":disabled\n") != std::string::npos);
  CHECK(text.find("bob:bob:" + kHash + ":disabled\n") != std::string::npos);
  auto again = UserDb::load(d.file("users.db"));
  REQUIRE(again);
  CHECK(again->find("bob")->disabled);
  auto enabled = *again->find("alice");
  enabled.disabled = false;
  again->upsert(enabled);
  REQUIRE(again->save(d.file("users.db")));
  std::ifstream in2(d.file("users.db"));
  std::string text2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  CHECK(text2.find("alice:alice:" + kHash + "\n") != std::string::npos);  // no flag field once enabled
}
