// libnl-based codec for ctl_abi.hpp. The policy table and the required
// attribute lists are the whole validation contract: a message that passes
// parse_message() can be read without further length checks.
#include "ipc/ctl_codec.hpp"

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cstring>

namespace ringsmb::ipc {
namespace abi {
namespace {

constexpr nla_policy u32p{NLA_U32, 0, 4};
constexpr nla_policy u64p{NLA_U64, 0, 8};
constexpr nla_policy strp(uint16_t max) { return {NLA_STRING, 0, max}; }
constexpr nla_policy binp(uint16_t max) { return {NLA_BINARY, 0, max}; }
constexpr nla_policy exactp(uint16_t n) { return {NLA_UNSPEC, n, n}; }

constexpr std::array<nla_policy, ATTR_COUNT> build_policy() {
  std::array<nla_policy, ATTR_COUNT> p{};
  p[ATTR_STATUS] = p[ATTR_ABI_VERSION] = p[ATTR_PID] = p[ATTR_ROLE] = u32p;
  p[ATTR_LOGIN_FLAGS] = p[ATTR_UID] = p[ATTR_GID] = p[ATTR_SHARE_FLAGS] = u32p;
  p[ATTR_ENCRYPTION] = p[ATTR_RPC_HANDLE] = p[ATTR_RPC_MAX] = p[ATTR_RPC_MORE] = u32p;
  p[ATTR_SESSION_ID] = u64p;
  p[ATTR_CHANNEL_PORT] = p[ATTR_DELAY_MS] = p[ATTR_LOG_LEVEL] = p[ATTR_LOG_LEVEL_SOURCE] = u32p;
  p[ATTR_CREATE_MASK] = p[ATTR_DIRECTORY_MASK] = p[ATTR_FORCE_UID] = p[ATTR_FORCE_GID] = u32p;
  p[ATTR_VETO_FILES] = strp(8192);
  p[ATTR_RECYCLE_REPOSITORY] = strp(4096);
  p[ATTR_RECYCLE_FLAGS] = p[ATTR_RECYCLE_DIR_MODES] = u32p;
  p[ATTR_RECYCLE_MINSIZE] = p[ATTR_RECYCLE_MAXSIZE] = u64p;
  p[ATTR_RECYCLE_EXCLUDE] = p[ATTR_RECYCLE_EXCLUDE_DIR] = p[ATTR_RECYCLE_NOVERSIONS] = strp(4096);
  p[ATTR_SHADOW_COPY] = strp(8192);
  p[ATTR_FRUIT_FLAGS] = u32p;
  p[ATTR_FRUIT_TM_MAX_SIZE] = u64p;
  p[ATTR_FRUIT_MODEL] = strp(128);
  p[ATTR_SIDS] = strp(kMaxSidsText + 1);
  p[ATTR_CLIENT_ADDRESS] = strp(128);
  p[ATTR_ACCOUNT] = strp(257);  // 256 bytes of name + NUL
  p[ATTR_SHARE_NAME] = strp(257);
  p[ATTR_SHARE_PATH] = p[ATTR_PATH] = strp(4096);
  p[ATTR_SHARE_COMMENT] = strp(1024);
  p[ATTR_RPC_PIPE] = strp(64);
  p[ATTR_TEXT] = strp(4096);
  p[ATTR_SERVER_CHALLENGE] = exactp(8);
  p[ATTR_SESSION_KEY] = exactp(16);
  p[ATTR_NTLM_NEGOTIATE] = p[ATTR_NTLM_CHALLENGE] = binp(4096);
  p[ATTR_NTLM_AUTHENTICATE] = binp(16384);
  p[ATTR_GROUPS] = binp(4 * 1024);
  p[ATTR_RPC_DATA] = binp(kMaxRpcData);
  p[ATTR_SPNEGO_BLOB] = binp(48 * 1024);  // a ticket with a large PAC; kMaxMessage holds it
  p[ATTR_ENTRY] = {NLA_NESTED, 0, 0};
  p[ATTR_DIALECT] = p[ATTR_SESSION_FLAGS] = p[ATTR_TREE_ID] = p[ATTR_MORE_ENTRIES] = u32p;
  p[ATTR_CONNECTION_ID] = p[ATTR_FILE_ID] = u64p;
  p[ATTR_OPEN_FLAGS] = p[ATTR_OPLOCK_LEVEL] = p[ATTR_LEASE_STATE] = p[ATTR_LOCK_COUNT] = p[ATTR_CLOSED_COUNT] = u32p;
  p[ATTR_KEPT_FOR_MS] = u32p;
  p[ATTR_LEASE_KEY] = exactp(16);
  p[ATTR_LOCKS] = binp(kLockRecordSize * kMaxLocksPerEntry);
  p[ATTR_CHANNELS] = binp(kChannelRecordSize * kMaxChannelsPerEntry);
  return p;
}

}  // namespace

const std::array<nla_policy, ATTR_COUNT> kPolicy = build_policy();

std::span<const Attr> required_attrs(Cmd cmd, bool is_request) {
  static constexpr Attr kStatus[] = {ATTR_STATUS};
  static constexpr Attr kStart[] = {ATTR_ABI_VERSION, ATTR_PID, ATTR_ROLE};
  static constexpr Attr kStartReply[] = {ATTR_STATUS, ATTR_ABI_VERSION};
  static constexpr Attr kLogin[] = {ATTR_SERVER_CHALLENGE, ATTR_NTLM_CHALLENGE, ATTR_NTLM_AUTHENTICATE};
  static constexpr Attr kShare[] = {ATTR_SHARE_NAME};
  static constexpr Attr kSpnego[] = {ATTR_SPNEGO_BLOB};
  static constexpr Attr kTree[] = {ATTR_SHARE_NAME, ATTR_ACCOUNT, ATTR_LOGIN_FLAGS};
  static constexpr Attr kTreeDisc[] = {ATTR_SHARE_NAME, ATTR_ACCOUNT};
  static constexpr Attr kAccount[] = {ATTR_ACCOUNT};
  static constexpr Attr kPid[] = {ATTR_PID};
  static constexpr Attr kRpcOpen[] = {ATTR_RPC_HANDLE, ATTR_RPC_PIPE, ATTR_ACCOUNT};
  static constexpr Attr kRpcWrite[] = {ATTR_RPC_HANDLE, ATTR_RPC_DATA};
  static constexpr Attr kRpcRead[] = {ATTR_RPC_HANDLE, ATTR_RPC_MAX};
  static constexpr Attr kRpcIoctl[] = {ATTR_RPC_HANDLE, ATTR_RPC_DATA, ATTR_RPC_MAX};
  static constexpr Attr kRpcHandle[] = {ATTR_RPC_HANDLE};
  static constexpr Attr kSession[] = {ATTR_SESSION_ID};
  static constexpr Attr kFile[] = {ATTR_FILE_ID};
  if (!is_request) return cmd == CMD_STARTING_UP ? std::span<const Attr>(kStartReply) : kStatus;
  switch (cmd) {
    case CMD_STARTING_UP: return kStart;
    case CMD_SHUTTING_DOWN: return kPid;
    case CMD_LOGIN:
    case CMD_LOGIN_EXT: return kLogin;
    case CMD_SHARE_CONFIG: return kShare;
    case CMD_SPNEGO_AUTHEN: return kSpnego;
    case CMD_TREE_CONNECT: return kTree;
    case CMD_TREE_DISCONNECT: return kTreeDisc;
    case CMD_LOGOUT: return kAccount;
    case CMD_RPC_OPEN: return kRpcOpen;
    case CMD_RPC_WRITE: return kRpcWrite;
    case CMD_RPC_READ: return kRpcRead;
    case CMD_RPC_IOCTL: return kRpcIoctl;
    case CMD_RPC_CLOSE: return kRpcHandle;
    case CMD_CLOSE_SESSION: return kSession;
    case CMD_CLOSE_FILE: return kFile;
    case CMD_CLOSE_SHARE: return kShare;
    default: return {};
  }
}

bool is_one_way(Cmd cmd) {
  return cmd == CMD_SHUTTING_DOWN || cmd == CMD_TREE_DISCONNECT || cmd == CMD_LOGOUT;
}

const char* cmd_name(uint8_t cmd) {
  static constexpr const char* kNames[CMD_COUNT] = {
      "UNSPEC",         "HEARTBEAT",        "STARTING_UP",   "SHUTTING_DOWN",   "LOGIN",
      "LOGIN_EXT",      "SHARE_CONFIG",     "TREE_CONNECT",  "TREE_DISCONNECT", "LOGOUT",
      "RPC_OPEN",       "RPC_READ",         "RPC_WRITE",     "RPC_CLOSE",       "RPC_IOCTL",
      "SPNEGO_AUTHEN",  "LIST_CONNECTIONS", "LIST_SESSIONS", "LIST_OPEN_FILES", "RELOAD",
      "SHUTDOWN",       "CLOSE_SESSION",    "LIST_TREE_CONNECTS",
      "GET_METRICS", "DEBUG",          "CLOSE_FILE",    "CLOSE_SHARE"};
  return cmd < CMD_COUNT ? kNames[cmd] : "?";
}

}  // namespace abi

const char* to_string(ParseError e) {
  switch (e) {
    case ParseError::Short: return "short or truncated message";
    case ParseError::WrongFamily: return "wrong message family";
    case ParseError::WrongVersion: return "wrong protocol version";
    case ParseError::UnknownCommand: return "unknown command";
    case ParseError::BadAttribute: return "attribute violates the policy";
    case ParseError::MissingAttribute: return "required attribute missing";
  }
  return "?";
}

uint32_t Message::u32(abi::Attr a, uint32_t fallback) const { return tb[a] ? nla_get_u32(tb[a]) : fallback; }
uint64_t Message::u64(abi::Attr a, uint64_t fallback) const { return tb[a] ? nla_get_u64(tb[a]) : fallback; }

std::string Message::str(abi::Attr a) const {
  if (!tb[a]) return {};
  const char* p = static_cast<const char*>(nla_data(tb[a]));
  return std::string(p, strnlen(p, size_t(nla_len(tb[a]))));
}

ByteSpan Message::bytes(abi::Attr a) const {
  if (!tb[a]) return {};
  return {static_cast<const uint8_t*>(nla_data(tb[a])), size_t(nla_len(tb[a]))};
}

std::expected<Message, ParseError> parse_message(const uint8_t* data, size_t len) {
  // libnl reads the headers in place, so they must be aligned; every
  // receive buffer here is, and a misaligned one is treated as garbage.
  if (len < NLMSG_HDRLEN + GENL_HDRLEN || reinterpret_cast<uintptr_t>(data) % alignof(nlmsghdr) != 0)
    return std::unexpected(ParseError::Short);
  nlmsghdr hdr;
  memcpy(&hdr, data, sizeof hdr);
  if (hdr.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || hdr.nlmsg_len > len) return std::unexpected(ParseError::Short);
  if (hdr.nlmsg_type != abi::kFamilyId) return std::unexpected(ParseError::WrongFamily);
  genlmsghdr g;
  memcpy(&g, data + NLMSG_HDRLEN, sizeof g);
  if (g.version != abi::kGenlVersion) return std::unexpected(ParseError::WrongVersion);
  if (g.cmd == abi::CMD_UNSPEC || g.cmd >= abi::CMD_COUNT) return std::unexpected(ParseError::UnknownCommand);
  Message m;
  m.cmd = g.cmd;
  m.is_request = (hdr.nlmsg_flags & NLM_F_REQUEST) != 0;
  m.seq = hdr.nlmsg_seq;
  auto* nlh = reinterpret_cast<nlmsghdr*>(const_cast<uint8_t*>(data));
  if (genlmsg_parse(nlh, 0, m.tb.data(), abi::kAttrMax, abi::kPolicy.data()) < 0)
    return std::unexpected(ParseError::BadAttribute);
  for (abi::Attr a : abi::required_attrs(abi::Cmd(m.cmd), m.is_request))
    if (!m.tb[a]) return std::unexpected(ParseError::MissingAttribute);
  if (m.has(abi::ATTR_GROUPS) && m.bytes(abi::ATTR_GROUPS).size() % 4 != 0)
    return std::unexpected(ParseError::BadAttribute);
  if (m.has(abi::ATTR_LOCKS) && m.bytes(abi::ATTR_LOCKS).size() % abi::kLockRecordSize != 0)
    return std::unexpected(ParseError::BadAttribute);
  if (m.has(abi::ATTR_CHANNELS) && m.bytes(abi::ATTR_CHANNELS).size() % abi::kChannelRecordSize != 0)
    return std::unexpected(ParseError::BadAttribute);
  return m;
}

MsgBuilder::MsgBuilder(abi::Cmd cmd, uint32_t seq, bool is_request) {
  msg_ = nlmsg_alloc_size(abi::kMaxMessage);
  int flags = is_request ? NLM_F_REQUEST : 0;
  ok_ = msg_ && genlmsg_put(msg_, 0, seq, abi::kFamilyId, 0, flags, cmd, abi::kGenlVersion) != nullptr;
}

MsgBuilder::~MsgBuilder() {
  if (msg_) nlmsg_free(msg_);
}

MsgBuilder& MsgBuilder::u32(abi::Attr a, uint32_t v) {
  ok_ = ok_ && nla_put_u32(msg_, a, v) == 0;
  return *this;
}

MsgBuilder& MsgBuilder::u64(abi::Attr a, uint64_t v) {
  ok_ = ok_ && nla_put_u64(msg_, a, v) == 0;
  return *this;
}

std::string fit_text_attr(const std::string& text) {
  constexpr size_t kMax = 4095;  // ATTR_TEXT: strp(4096), the NUL included
  if (text.size() <= kMax) return text;
  const std::string more = "\n... (cut; ringsmbctl config check lists everything)";
  size_t cut = text.rfind('\n', kMax - more.size());
  if (cut == std::string::npos) cut = kMax - more.size();
  return text.substr(0, cut) + more;
}

MsgBuilder& MsgBuilder::str(abi::Attr a, const std::string& v) {
  ok_ = ok_ && nla_put_string(msg_, a, v.c_str()) == 0;
  return *this;
}

MsgBuilder& MsgBuilder::bytes(abi::Attr a, ByteSpan v) {
  ok_ = ok_ && nla_put(msg_, a, int(v.size()), v.data()) == 0;
  return *this;
}

MsgBuilder& MsgBuilder::begin_nest(abi::Attr a) {
  if (ok_ && !nest_) nest_ = nla_nest_start(msg_, a);
  ok_ = ok_ && nest_ != nullptr;
  return *this;
}

MsgBuilder& MsgBuilder::end_nest() {
  if (ok_ && nest_) nla_nest_end(msg_, nest_);
  nest_ = nullptr;
  return *this;
}

ByteSpan MsgBuilder::wire() const {
  if (!msg_) return {};
  nlmsghdr* h = nlmsg_hdr(msg_);
  return {reinterpret_cast<const uint8_t*>(h), h->nlmsg_len};
}

}  // namespace ringsmb::ipc
