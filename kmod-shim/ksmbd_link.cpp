// Generic netlink to ksmbd.ko through libnl-genl (kmod-shim/ksmbd_abi.hpp).
#include "kmod-shim/ksmbd_link.hpp"

#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "common/log.hpp"
#include "kmod-shim/ksmbd_abi.hpp"

namespace ringsmb::kmod {

namespace {

// Large enough for the biggest request the kernel sends (an RPC write
// carries at most one SMB2 WRITE to a pipe, which clients keep small).
constexpr size_t kReceiveBuffer = 1 << 20;

std::string family_missing_reason() {
  struct stat st{};
  if (stat("/sys/module/ksmbd", &st) == 0)
    return "ksmbd.ko is loaded but registered no SMBD_GENL family (check dmesg)";
  if (stat("/sys/module", &st) != 0) return "this kernel has no module support and no built-in ksmbd";
  return "the kernel has no SMBD_GENL family: ksmbd.ko is not loaded (modprobe ksmbd) or this kernel "
         "was built without it (CONFIG_SMB_SERVER)";
}

std::string startup_refusal(int nl_error) {
  switch (nl_error) {
    case NLE_INVAL:
      return "ksmbd refused STARTING_UP (EINVAL): another daemon (ksmbd.mountd or a second ringsmb-ctld) "
             "already drives it, or the server is resetting after the previous daemon stopped "
             "(ksmbd.control --shutdown, or rmmod ksmbd, then try again); see dmesg";
    case NLE_PERM:
      return "ksmbd refused STARTING_UP (EPERM): the daemon needs CAP_NET_ADMIN";
    default:
      return std::string("ksmbd refused STARTING_UP: ") + nl_geterror(nl_error);
  }
}

}  // namespace

std::expected<void, std::string> check_family(uint32_t version, uint32_t max_event) {
  if (version != abi::kFamilyVersion)
    return std::unexpected("ksmbd's netlink family has version " + std::to_string(version) +
                           "; this ringsmb-ctld speaks version " + std::to_string(abi::kFamilyVersion) +
                           " only (a module with another kernel/daemon interface)");
  if (max_event < abi::kMinMaxAttr)
    return std::unexpected("ksmbd's netlink family has only " + std::to_string(max_event) +
                           " events; this ringsmb-ctld needs " + std::to_string(abi::kMinMaxAttr) +
                           " (the module is too old)");
  return {};
}

std::expected<KsmbdLink, std::string> KsmbdLink::open() {
  KsmbdLink link;
  link.sock_ = nl_socket_alloc();
  if (!link.sock_) return std::unexpected("cannot allocate a netlink socket");
  if (int e = genl_connect(link.sock_); e < 0)
    return std::unexpected(std::string("generic netlink: ") + nl_geterror(e));
  // The kernel's requests carry sequence number 0; replies need no ack.
  nl_socket_disable_seq_check(link.sock_);
  nl_socket_disable_auto_ack(link.sock_);
  nl_socket_set_buffer_size(link.sock_, 4 << 20, 1 << 20);
  nl_cache* cache = nullptr;
  if (int e = genl_ctrl_alloc_cache(link.sock_, &cache); e < 0)
    return std::unexpected(std::string("generic netlink controller: ") + nl_geterror(e));
  genl_family* fam = genl_ctrl_search_by_name(cache, abi::kFamilyName);
  if (fam) {
    link.family_ = genl_family_get_id(fam);
    link.version_ = genl_family_get_version(fam);
    link.max_attr_ = genl_family_get_maxattr(fam);
    genl_family_put(fam);
  }
  nl_cache_free(cache);
  if (!fam) return std::unexpected(family_missing_reason());
  if (auto ok = check_family(link.version_, link.max_attr_); !ok) return std::unexpected(ok.error());
  link.buffer_.resize(kReceiveBuffer);
  return link;
}

KsmbdLink::KsmbdLink(KsmbdLink&& o) noexcept
    : sock_(o.sock_), family_(o.family_), version_(o.version_), max_attr_(o.max_attr_), buffer_(std::move(o.buffer_)) {
  o.sock_ = nullptr;
}

KsmbdLink::~KsmbdLink() {
  if (sock_) nl_socket_free(sock_);
}

int KsmbdLink::fd() const { return nl_socket_get_fd(sock_); }

namespace {

nl_msg* build(int family, uint8_t event, ByteSpan payload, int flags) {
  nl_msg* msg = nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN + nla_total_size(int(payload.size())) + 64);
  if (!msg) return nullptr;
  if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, event, abi::kFamilyVersion) ||
      nla_put(msg, event, int(payload.size()), payload.data()) < 0) {
    nlmsg_free(msg);
    return nullptr;
  }
  return msg;
}

}  // namespace

std::expected<void, std::string> KsmbdLink::start(const Bytes& payload) {
  nl_msg* msg = build(family_, abi::kStartingUp, payload, NLM_F_ACK);
  if (!msg) return std::unexpected("cannot build STARTING_UP");
  int sent = nl_send_auto(sock_, msg);
  nlmsg_free(msg);
  if (sent < 0) return std::unexpected(std::string("sending STARTING_UP: ") + nl_geterror(sent));
  if (int e = nl_wait_for_ack(sock_); e < 0) return std::unexpected(startup_refusal(-e));
  return {};
}

int KsmbdLink::send(uint8_t event, ByteSpan payload) {
  nl_msg* msg = build(family_, event, payload, 0);
  if (!msg) return ENOMEM;
  int sent = nl_send_auto(sock_, msg);
  nlmsg_free(msg);
  return sent < 0 ? EIO : 0;
}

bool KsmbdLink::receive(std::vector<KernelEvent>& out) {
  for (;;) {
    ssize_t n = recv(fd(), buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) return errno == EAGAIN || errno == EINTR || errno == ENOBUFS;
    if (size_t(n) > buffer_.size()) continue;  // larger than any request the kernel sends: dropped
    parse_datagram(ByteSpan(buffer_.data(), size_t(n)), family_, out);
  }
}

namespace {

// A copy of the header at OFF (the datagram's bytes need no alignment).
template <typename T>
T header_at(ByteSpan d, size_t off) {
  T t;
  std::memcpy(&t, d.data() + off, sizeof t);
  return t;
}

// The payload of the attribute numbered CMD in a genl message's attributes.
std::optional<ByteSpan> command_attribute(ByteSpan attrs, uint8_t cmd) {
  size_t off = 0;
  while (off + NLA_HDRLEN <= attrs.size()) {
    auto nla = header_at<nlattr>(attrs, off);
    if (nla.nla_len < NLA_HDRLEN || nla.nla_len > attrs.size() - off) return std::nullopt;
    if ((nla.nla_type & NLA_TYPE_MASK) == cmd) return attrs.subspan(off + NLA_HDRLEN, nla.nla_len - NLA_HDRLEN);
    off += NLA_ALIGN(nla.nla_len);
  }
  return std::nullopt;
}

}  // namespace

void parse_datagram(ByteSpan d, int family, std::vector<KernelEvent>& out) {
  size_t off = 0;
  while (off + NLMSG_HDRLEN <= d.size()) {
    auto nlh = header_at<nlmsghdr>(d, off);
    if (nlh.nlmsg_len < NLMSG_HDRLEN || nlh.nlmsg_len > d.size() - off) return;
    ByteSpan body = d.subspan(off + NLMSG_HDRLEN, nlh.nlmsg_len - NLMSG_HDRLEN);
    off += NLMSG_ALIGN(nlh.nlmsg_len);
    if (nlh.nlmsg_type == NLMSG_ERROR && body.size() >= sizeof(nlmsgerr)) {
      // The kernel refused one of our answers (its length or version).
      long err = -long(header_at<nlmsgerr>(body, 0).error);
      if (err != 0) LOG_WARN("ksmbd rejected an answer: %s", err > 0 && err < 4096 ? strerror(int(err)) : "?");
      continue;
    }
    if (nlh.nlmsg_type != family || body.size() < GENL_HDRLEN) continue;
    uint8_t cmd = header_at<genlmsghdr>(body, 0).cmd;
    if (auto p = command_attribute(body.subspan(GENL_HDRLEN), cmd)) out.push_back({cmd, Bytes(p->begin(), p->end())});
  }
}

}  // namespace ringsmb::kmod
