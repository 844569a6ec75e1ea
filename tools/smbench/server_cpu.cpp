#include "server_cpu.hpp"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ringsmb::smbench {
namespace {

// The fields after "(comm)" of /proc/PID/stat; comm may hold spaces.
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), {});
  auto close = s.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos) return out;
  std::istringstream in(s.substr(close + 2));
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

double tree_cpu_seconds(pid_t root) {
  if (root <= 0) return 0;
  std::multimap<pid_t, pid_t> children;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      pid_t pid = pid_t(std::atoi(e->d_name));
      if (pid <= 0) continue;
      auto f = stat_fields(pid);
      if (f.size() > 1) children.emplace(pid_t(std::atoi(f[1].c_str())), pid);
    }
    closedir(d);
  }
  double ticks = 0;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto f = stat_fields(p);
    // utime, stime, cutime, cstime: fields 14-17 of stat, 11-14 after comm.
    for (size_t i = 11; i < 15 && i < f.size(); ++i) ticks += std::atof(f[i].c_str());
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) todo.push_back(it->second);
  }
  return ticks / double(sysconf(_SC_CLK_TCK));
}

}  // namespace ringsmb::smbench
