#include "control/reloading_control_plane.hpp"

#include <mutex>
#include <unordered_map>

#include "common/log.hpp"
#include "control/local_control_plane.hpp"

namespace ringsmb::control {

using namespace ipc;  // the contract types (ipc/control_plane.hpp)

namespace {

// Every call takes a reference to the current engine under a mutex and runs
// outside it: a reload never waits for a login in progress, and an engine
// stays alive until its last caller is done with it.
class LocalReloading final : public ReloadingControlPlane {
 public:
  LocalReloading(const config::Config& cfg, std::string path)
      : path_(std::move(path)), current_(make_local_control_plane(cfg)) {}

  LoginReply login(const LoginRequest& req) override { return engine()->login(req); }
  KerberosLoginReply kerberos_login(const KerberosLoginRequest& req) override { return engine()->kerberos_login(req); }
  TreeConnectReply tree_connect(const TreeConnectRequest& req) override { return engine()->tree_connect(req); }
  void tree_disconnect(const std::string& share, const std::string& user) override {
    engine()->tree_disconnect(share, user);
  }
  void logout(const std::string& user) override { engine()->logout(user); }
  void reload() override { (void)reload_config(); }
  std::string home_share_of(const std::string& user, bool is_guest) override {
    return engine()->home_share_of(user, is_guest);
  }

  // A pipe stays with the engine that opened it, so a reload in the middle
  // of an RPC conversation does not cut it off: the old engine lives on
  // until its last pipe closes.
  PipeReply pipe_open(const PipeOpenRequest& req) override {
    auto e = engine();
    PipeReply r = e->pipe_open(req);
    if (r.status == NtStatus::Success) {
      std::lock_guard lock(mu_);
      pipe_engines_[req.handle] = std::move(e);
    }
    return r;
  }
  PipeReply pipe_write(uint32_t handle, ByteSpan data) override { return pipe_engine(handle)->pipe_write(handle, data); }
  PipeReply pipe_read(uint32_t handle, uint32_t max) override { return pipe_engine(handle)->pipe_read(handle, max); }
  PipeReply pipe_transceive(uint32_t handle, ByteSpan in, uint32_t max) override {
    return pipe_engine(handle)->pipe_transceive(handle, in, max);
  }
  void pipe_close(uint32_t handle) override {
    std::shared_ptr<ControlPlane> e;
    {
      std::lock_guard lock(mu_);
      auto it = pipe_engines_.find(handle);
      if (it == pipe_engines_.end()) return;
      e = std::move(it->second);
      pipe_engines_.erase(it);
    }
    e->pipe_close(handle);
  }
  std::string workgroup() const override { return engine()->workgroup(); }
  std::string netbios_name() const override { return engine()->netbios_name(); }

  std::expected<void, std::string> reload_config() override {
    auto parsed = config::parse_config_file(path_);
    if (!parsed) {
      LOG_ERROR("reload: %s (keeping the previous configuration)", parsed.error().c_str());
      return std::unexpected(parsed.error());
    }
    for (const auto& w : parsed->warnings) LOG_WARN("reload: %s", w.c_str());
    std::shared_ptr<ControlPlane> fresh = make_local_control_plane(parsed->config);
    {
      std::lock_guard lock(mu_);
      current_.swap(fresh);
    }
    LOG_INFO("reloaded %s: %zu shares", path_.c_str(), parsed->config.shares.size());
    return {};
  }

 private:
  std::shared_ptr<ControlPlane> engine() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  // The engine that opened HANDLE; the current one for a handle it never
  // opened, which answers InvalidHandle like any unknown handle.
  std::shared_ptr<ControlPlane> pipe_engine(uint32_t handle) const {
    std::lock_guard lock(mu_);
    auto it = pipe_engines_.find(handle);
    return it != pipe_engines_.end() ? it->second : current_;
  }

  std::string path_;
  mutable std::mutex mu_;
  std::shared_ptr<ControlPlane> current_;
  std::unordered_map<uint32_t, std::shared_ptr<ControlPlane>> pipe_engines_;
};

}  // namespace

std::unique_ptr<ReloadingControlPlane> make_reloading_local_control_plane(const config::Config& cfg,
                                                                          std::string config_path) {
  return std::make_unique<LocalReloading>(cfg, std::move(config_path));
}

}  // namespace ringsmb::control
