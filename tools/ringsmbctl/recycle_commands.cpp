// `recycle list|empty SHARE`: what a share's recycle bin holds
// (smb2/files/recycle.hpp), and emptying it, wholly or of what was deleted
// more than N days ago. SHARE is a share of the configuration or, with
// [homes], a user's name (that user's home share). Runs as root: every
// directory below the share root is opened without following a symlink, so a
// link planted in a bin never leads the walk elsewhere.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>

#include "auth/user_db.hpp"
#include "control/home_shares.hpp"
#include "ctl.hpp"
#include "vfs/paths.hpp"

namespace ringsmb::ctl {
namespace {

struct RecycleOptions {
  std::string share;
  std::string user;  // expands %U (and the home's owner for [homes])
  std::optional<double> older_than_days;
};

struct Bin {
  std::string share_path;
  std::string relative;  // the bin (or the part of it shared by every user) below the share root
};

// The part of REPOSITORY before the first component that holds a
// %-token: with %U and no --user, every user's bin lies below it.
std::string fixed_prefix(const std::string& repository) {
  size_t pct = repository.find('%');
  if (pct == std::string::npos) return repository;
  size_t slash = repository.rfind('/', pct);
  return slash == std::string::npos ? "" : repository.substr(0, slash);
}

std::expected<Bin, Failure> find_bin(const config::Config& cfg, const RecycleOptions& o) {
  auto db = auth::UserDb::load(cfg.global.users_db);
  control::AccountLookup lookup{[&](const std::string& account) -> std::optional<std::string> {
                                  if (!db) return std::nullopt;
                                  const auth::UserRecord* rec = db->find(account);
                                  return rec ? std::optional(rec->unix_user) : std::nullopt;
                                },
                                control::passwd_home_directory};
  std::string account = o.user;
  if (account.empty() && !cfg.find_share(o.share)) account = o.share;  // a home share: its owner
  control::Caller caller{account, "", false};
  if (!account.empty()) caller.unix_user = lookup.unix_user_of(account).value_or(account);
  if (account.empty()) caller.account = "%U";  // keeps the token, so fixed_prefix stops there
  auto resolved = control::resolve_share(cfg, o.share, caller, lookup);
  if (!resolved) return std::unexpected(Failure{kExitNotFound, "no share or home share '" + o.share + "'"});
  const config::RecycleConfig& r = resolved->share.recycle;
  if (!r.enabled)
    return std::unexpected(Failure{kExitError, "share [" + o.share + "] has no recycle bin (vfs objects = recycle)"});
  return Bin{resolved->share.path, fixed_prefix(r.repository)};
}

struct Walk {
  time_t cutoff = 0;  // entries changed before it go (empty); 0: all
  bool remove = false;
  uint64_t files = 0, bytes = 0;
};

std::string iso_time(time_t t) {
  char buf[32];
  struct tm tm{};
  localtime_r(&t, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// Lists (or removes) what lies below DIR (named PREFIX); true when DIR
// ends up empty.
bool walk(int dir, const std::string& prefix, Walk& w) {
  DIR* d = fdopendir(dup(dir));
  if (!d) return false;
  bool empty = true;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string path = prefix.empty() ? name : prefix + "/" + name;
    if (S_ISDIR(st.st_mode)) {
      int sub = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      bool sub_empty = sub >= 0 && walk(sub, path, w);
      if (sub >= 0) close(sub);
      if (w.remove && sub_empty && unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0) continue;
      empty = false;
      continue;
    }
    bool old_enough = w.cutoff == 0 || st.st_ctime < w.cutoff;
    if (w.remove && old_enough && unlinkat(dir, name.c_str(), 0) == 0) {
      ++w.files;
      w.bytes += uint64_t(st.st_size);
      continue;
    }
    empty = false;
    if (!w.remove) {
      ++w.files;
      w.bytes += uint64_t(st.st_size);
      std::cout << st.st_size << "\t" << iso_time(st.st_ctime) << "\t" << path << "\n";
    }
  }
  closedir(d);
  return empty;
}

int run(Context& ctx, const RecycleOptions& o, bool remove) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  auto bin = find_bin(*cfg, o);
  if (!bin) return fail(bin.error());
  int root = open(bin->share_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return fail(bin->share_path + ": " + std::strerror(errno));
  int dir = vfs::open_beneath(root, bin->relative.empty() ? "." : bin->relative.c_str(), O_RDONLY | O_DIRECTORY, 0);
  close(root);
  std::string shown = bin->share_path + "/" + bin->relative;
  if (dir == -ENOENT) {
    if (!remove) std::cerr << "ringsmbctl: " << shown << ": empty (nothing deleted yet)\n";
    return kExitOk;
  }
  if (dir < 0) return fail(shown + ": " + std::strerror(-dir));
  Walk w;
  w.remove = remove;
  if (o.older_than_days) w.cutoff = time(nullptr) - time_t(*o.older_than_days * 86400);
  walk(dir, bin->relative, w);
  close(dir);
  if (remove) std::cout << "removed " << w.files << " files (" << w.bytes << " bytes) from " << shown << "\n";
  return kExitOk;
}

}  // namespace

void add_recycle_commands(CLI::App& app, Context& ctx) {
  auto* recycle = app.add_subcommand("recycle", "Show or empty a share's recycle bin (vfs objects = recycle)");
  recycle->require_subcommand(1);
  auto list_o = std::make_shared<RecycleOptions>();
  auto* list = recycle->add_subcommand("list", "List the files in SHARE's recycle bin: size, time deleted, path");
  list->add_option("share", list_o->share, "Share name, or a user's name for their [homes] share")->required();
  list->add_option("--user", list_o->user, "The user whose bin (%U in recycle:repository); default: every user's");
  list->callback([&ctx, o = list_o] { ctx.exit_code = run(ctx, *o, false); });
  auto empty_o = std::make_shared<RecycleOptions>();
  auto* empty = recycle->add_subcommand("empty", "Delete the files in SHARE's recycle bin");
  empty->add_option("share", empty_o->share, "Share name, or a user's name for their [homes] share")->required();
  empty->add_option("--user", empty_o->user, "The user whose bin (%U in recycle:repository); default: every user's");
  empty->add_option("--older-than", empty_o->older_than_days, "Only files deleted more than DAYS days ago")
      ->check(CLI::NonNegativeNumber);
  empty->callback([&ctx, o = empty_o] { ctx.exit_code = run(ctx, *o, true); });
}

}  // namespace ringsmb::ctl
