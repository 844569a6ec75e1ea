// Test helpers for the vfs unit tests: a scratch directory tree.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ringsmb::vfs::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ringsmb-vfs-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    if (fd_ >= 0) ::close(fd_);
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // An O_RDONLY|O_DIRECTORY fd of the root, owned by the TempDir.
  int fd() {
    if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd_;
  }
  void write_file(const std::string& rel, const std::string& content = "") const {
    std::ofstream(path_ / rel) << content;
  }
  void mkdir(const std::string& rel) const { std::filesystem::create_directories(path_ / rel); }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace ringsmb::vfs::test
