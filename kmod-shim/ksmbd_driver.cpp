#include "kmod-shim/ksmbd_driver.hpp"

#include <cstring>

#include "common/log.hpp"
#include "kmod-shim/ksmbd_abi.hpp"
#include "kmod-shim/ksmbd_structs.hpp"

namespace ringsmb::kmod {

std::expected<std::unique_ptr<KsmbdDriver>, std::string> KsmbdDriver::start(const config::Config& cfg) {
  auto link = KsmbdLink::open();
  if (!link) return std::unexpected(link.error());
  std::vector<std::string> warnings;
  Bytes startup = make_startup_request(cfg, warnings);
  for (const auto& w : warnings) LOG_WARN("data plane = ksmbd: %s", w.c_str());
  if (auto req = read_struct<abi::StartupRequest>(startup))
    LOG_INFO("data plane = ksmbd: smb2 max read %u, max write %u, max trans %u, max credits %u (0: the module's own), "
             "max connections %u, max open files %u, leases %s",
             req->smb2_max_read, req->smb2_max_write, req->smb2_max_trans, req->smb2_max_credits,
             req->max_connections, req->file_max, (req->flags & abi::kGlobalLeases) ? "on" : "off");
  uint32_t max_event = link->max_event();
  if (auto r = link->start(startup); !r) return std::unexpected(r.error());
  LOG_INFO("driving ksmbd.ko (netlink family version %u, %u events); listening on port %u", link->family_version(),
           max_event, unsigned(cfg.global.tcp_ports.empty() ? 445 : cfg.global.tcp_ports[0]));
  return std::unique_ptr<KsmbdDriver>(new KsmbdDriver(std::move(*link), cfg));
}

void KsmbdDriver::on_readable() {
  std::vector<KernelEvent> events;
  if (!link_.receive(events)) LOG_ERROR("ksmbd netlink socket: %m");
  for (const auto& ev : events) {
    auto reply = shim_.handle(ev.event, ev.payload);
    LOG_DEBUG("ksmbd event %u (%zu bytes): answer %u (%zu bytes)", unsigned(ev.event), ev.payload.size(),
              reply ? unsigned(reply->event) : 0u, reply ? reply->payload.size() : size_t(0));
    if (!reply) continue;
    if (int err = link_.send(reply->event, reply->payload); err != 0)
      LOG_WARN("ksmbd: answer to event %u not sent: %s", unsigned(ev.event), strerror(err));
  }
}

void stop_ksmbd_server() {
  const char* path = "/sys/class/ksmbd-control/kill_server";
  FILE* f = fopen(path, "w");
  bool ok = f && fputs("hard", f) >= 0;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) {
    LOG_WARN("cannot stop ksmbd through %s: %m", path);
    return;
  }
  LOG_INFO("ksmbd's server stopped");
}

}  // namespace ringsmb::kmod
