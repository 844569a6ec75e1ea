#include "ipc/ctl_status.hpp"

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>

#include "common/ntstatus.hpp"

namespace ringsmb::ipc {
namespace {

using namespace abi;

// A new datagram is started when the current one passes this size; the
// largest entry (a 4 KiB path plus names) fits in what is left.
constexpr size_t kFlushAt = kMaxMessage - 12 * 1024;

std::string cut(const std::string& s, size_t max_with_nul) {
  return s.size() < max_with_nul ? s : s.substr(0, max_with_nul - 1);
}

void put_entry(MsgBuilder& b, const ConnectionStatus& c) {
  b.u64(ATTR_CONNECTION_ID, c.connection_id).str(ATTR_CLIENT_ADDRESS, cut(c.client_address, 128));
  b.u32(ATTR_DIALECT, c.dialect);
}

Bytes channel_records(const std::vector<ChannelStatus>& channels) {
  Bytes out;
  size_t n = std::min(channels.size(), kMaxChannelsPerEntry);
  out.resize(n * kChannelRecordSize);  // zeroed: the reserved fields and the address's NUL
  for (size_t i = 0; i < n; ++i) {
    uint8_t* rec = out.data() + i * kChannelRecordSize;
    const ChannelStatus& c = channels[i];
    memcpy(rec, &c.connection_id, 8);
    memcpy(rec + 8, &c.client_port, 2);
    std::string address = cut(c.client_address, kChannelAddressSize);
    memcpy(rec + 16, address.data(), address.size());
  }
  return out;
}

void put_entry(MsgBuilder& b, const SessionStatus& s) {
  b.u64(ATTR_SESSION_ID, s.session_id).u64(ATTR_CONNECTION_ID, s.connection_id);
  b.str(ATTR_ACCOUNT, cut(s.user, 257)).str(ATTR_CLIENT_ADDRESS, cut(s.client_address, 128));
  b.u32(ATTR_DIALECT, s.dialect).u32(ATTR_SESSION_FLAGS, s.flags);
  if (!s.channels.empty()) b.bytes(ATTR_CHANNELS, channel_records(s.channels));
}

void put_entry(MsgBuilder& b, const TreeConnectStatus& t) {
  b.u64(ATTR_SESSION_ID, t.session_id).u32(ATTR_TREE_ID, t.tree_id).str(ATTR_SHARE_NAME, cut(t.share, 257));
  b.str(ATTR_ACCOUNT, cut(t.user, 257)).str(ATTR_CLIENT_ADDRESS, cut(t.client_address, 128));
}

Bytes lock_records(const std::vector<LockStatus>& locks) {
  Bytes out;
  size_t n = std::min(locks.size(), kMaxLocksPerEntry);
  out.resize(n * kLockRecordSize);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* rec = out.data() + i * kLockRecordSize;
    uint32_t flags = locks[i].exclusive ? LOCK_EXCLUSIVE : 0;
    memcpy(rec, &locks[i].offset, 8);
    memcpy(rec + 8, &locks[i].length, 8);
    memcpy(rec + 16, &flags, 4);
  }
  return out;
}

void put_entry(MsgBuilder& b, const OpenFileStatus& o) {
  b.u64(ATTR_SESSION_ID, o.session_id).u32(ATTR_TREE_ID, o.tree_id).str(ATTR_SHARE_NAME, cut(o.share, 257));
  b.str(ATTR_PATH, cut(o.path, 4096)).str(ATTR_ACCOUNT, cut(o.user, 257));
  b.str(ATTR_CLIENT_ADDRESS, cut(o.client_address, 128));
  b.u64(ATTR_FILE_ID, o.file_id).u32(ATTR_OPEN_FLAGS, o.flags);
  b.u32(ATTR_OPLOCK_LEVEL, o.oplock_level).u32(ATTR_LEASE_STATE, o.lease_state);
  if (o.lease_key) b.bytes(ATTR_LEASE_KEY, ByteSpan(o.lease_key->data(), o.lease_key->size()));
  b.u32(ATTR_LOCK_COUNT, std::max<uint32_t>(o.lock_count, uint32_t(o.locks.size())));
  if (!o.locks.empty()) b.bytes(ATTR_LOCKS, lock_records(o.locks));
  if (o.flags & OPEN_DISCONNECTED) b.u32(ATTR_KEPT_FOR_MS, o.kept_for_ms);
}

Bytes finish(MsgBuilder& b) {
  ByteSpan w = b.wire();
  return Bytes(w.begin(), w.end());
}

template <typename T>
std::vector<Bytes> encode_entries(Cmd cmd, uint32_t seq, const std::vector<T>& entries) {
  std::vector<Bytes> out;
  auto fresh = [&] {
    auto b = std::make_unique<MsgBuilder>(cmd, seq, false);
    b->u32(ATTR_STATUS, uint32_t(NtStatus::Success));
    return b;
  };
  auto b = fresh();
  for (const auto& e : entries) {
    if (b->wire().size() > kFlushAt) {
      b->u32(ATTR_MORE_ENTRIES, 1);
      out.push_back(finish(*b));
      b = fresh();
    }
    b->begin_nest(ATTR_ENTRY);
    put_entry(*b, e);
    b->end_nest();
  }
  out.push_back(finish(*b));
  return out;
}

using Table = std::array<nlattr*, ATTR_COUNT>;

std::string str_of(const Table& tb, Attr a) {
  if (!tb[a]) return {};
  const char* p = static_cast<const char*>(nla_data(tb[a]));
  return std::string(p, strnlen(p, size_t(nla_len(tb[a]))));
}

bool has_all(const Table& tb, std::initializer_list<Attr> attrs) {
  for (Attr a : attrs)
    if (!tb[a]) return false;
  return true;
}

uint32_t u32_of(const Table& tb, Attr a) { return tb[a] ? nla_get_u32(tb[a]) : 0; }

// The attributes a LIST_OPEN_FILES entry may lack (an older ringsmbd).
bool decode_open_details(const Table& tb, OpenFileStatus& o) {
  o.file_id = tb[ATTR_FILE_ID] ? nla_get_u64(tb[ATTR_FILE_ID]) : 0;
  o.flags = u32_of(tb, ATTR_OPEN_FLAGS);
  o.oplock_level = uint8_t(u32_of(tb, ATTR_OPLOCK_LEVEL));
  o.lease_state = u32_of(tb, ATTR_LEASE_STATE);
  o.lock_count = u32_of(tb, ATTR_LOCK_COUNT);
  o.kept_for_ms = u32_of(tb, ATTR_KEPT_FOR_MS);
  if (tb[ATTR_LEASE_KEY]) {
    std::array<uint8_t, 16> key{};
    memcpy(key.data(), nla_data(tb[ATTR_LEASE_KEY]), key.size());  // the policy fixes its size
    o.lease_key = key;
  }
  if (tb[ATTR_LOCKS]) {
    size_t len = size_t(nla_len(tb[ATTR_LOCKS]));
    if (len % kLockRecordSize != 0) return false;
    const auto* p = static_cast<const uint8_t*>(nla_data(tb[ATTR_LOCKS]));
    for (size_t at = 0; at < len; at += kLockRecordSize) {
      LockStatus l;
      uint32_t flags = 0;
      memcpy(&l.offset, p + at, 8);
      memcpy(&l.length, p + at + 8, 8);
      memcpy(&flags, p + at + 16, 4);
      l.exclusive = (flags & LOCK_EXCLUSIVE) != 0;
      o.locks.push_back(l);
    }
  }
  return true;
}

// ATTR_CHANNELS of a LIST_SESSIONS entry; false when a record is cut short
// or its address is not NUL-terminated (the policy bounds the count).
bool decode_channels(const Table& tb, SessionStatus& s) {
  if (!tb[ATTR_CHANNELS]) return true;
  size_t len = size_t(nla_len(tb[ATTR_CHANNELS]));
  if (len % kChannelRecordSize != 0 || len / kChannelRecordSize > kMaxChannelsPerEntry) return false;
  const auto* p = static_cast<const uint8_t*>(nla_data(tb[ATTR_CHANNELS]));
  for (size_t at = 0; at < len; at += kChannelRecordSize) {
    const char* address = reinterpret_cast<const char*>(p + at + 16);
    size_t address_len = strnlen(address, kChannelAddressSize);
    if (address_len == kChannelAddressSize) return false;
    ChannelStatus c;
    memcpy(&c.connection_id, p + at, 8);
    memcpy(&c.client_port, p + at + 8, 2);
    c.client_address.assign(address, address_len);
    s.channels.push_back(std::move(c));
  }
  return true;
}

bool decode_entry(Cmd cmd, const Table& tb, ServerStatus& out) {
  switch (cmd) {
    case CMD_LIST_CONNECTIONS:
      if (!has_all(tb, {ATTR_CONNECTION_ID, ATTR_CLIENT_ADDRESS, ATTR_DIALECT})) return false;
      out.connections.push_back(
          {nla_get_u64(tb[ATTR_CONNECTION_ID]), str_of(tb, ATTR_CLIENT_ADDRESS), uint16_t(nla_get_u32(tb[ATTR_DIALECT]))});
      return true;
    case CMD_LIST_SESSIONS:
      if (!has_all(tb, {ATTR_SESSION_ID, ATTR_CONNECTION_ID, ATTR_ACCOUNT, ATTR_CLIENT_ADDRESS, ATTR_DIALECT,
                        ATTR_SESSION_FLAGS}))
        return false;
      out.sessions.push_back({nla_get_u64(tb[ATTR_SESSION_ID]), nla_get_u64(tb[ATTR_CONNECTION_ID]),
                              str_of(tb, ATTR_ACCOUNT), str_of(tb, ATTR_CLIENT_ADDRESS),
                              uint16_t(nla_get_u32(tb[ATTR_DIALECT])), nla_get_u32(tb[ATTR_SESSION_FLAGS]), {}});
      return decode_channels(tb, out.sessions.back());
    case CMD_LIST_TREE_CONNECTS:
      if (!has_all(tb, {ATTR_SESSION_ID, ATTR_TREE_ID, ATTR_SHARE_NAME, ATTR_ACCOUNT, ATTR_CLIENT_ADDRESS}))
        return false;
      out.trees.push_back({nla_get_u64(tb[ATTR_SESSION_ID]), nla_get_u32(tb[ATTR_TREE_ID]),
                           str_of(tb, ATTR_SHARE_NAME), str_of(tb, ATTR_ACCOUNT), str_of(tb, ATTR_CLIENT_ADDRESS)});
      return true;
    case CMD_LIST_OPEN_FILES:
      if (!has_all(tb, {ATTR_SESSION_ID, ATTR_TREE_ID, ATTR_SHARE_NAME, ATTR_PATH, ATTR_ACCOUNT,
                        ATTR_CLIENT_ADDRESS}))
        return false;
      out.open_files.push_back({nla_get_u64(tb[ATTR_SESSION_ID]), nla_get_u32(tb[ATTR_TREE_ID]),
                                str_of(tb, ATTR_SHARE_NAME), str_of(tb, ATTR_PATH), str_of(tb, ATTR_ACCOUNT),
                                str_of(tb, ATTR_CLIENT_ADDRESS)});
      return decode_open_details(tb, out.open_files.back());
    default: return false;
  }
}

}  // namespace

std::vector<Bytes> encode_list_replies(Cmd cmd, uint32_t seq, const ServerStatus& s) {
  switch (cmd) {
    case CMD_LIST_CONNECTIONS: return encode_entries(cmd, seq, s.connections);
    case CMD_LIST_SESSIONS: return encode_entries(cmd, seq, s.sessions);
    case CMD_LIST_TREE_CONNECTS: return encode_entries(cmd, seq, s.trees);
    case CMD_LIST_OPEN_FILES: return encode_entries(cmd, seq, s.open_files);
    default: return {};
  }
}

bool decode_list_reply(const uint8_t* data, size_t len, const Message& m, ServerStatus& out) {
  // parse_message() validated the outer attributes; walk them again for
  // every ENTRY (the table keeps only the last one of a type).
  if (len < NLMSG_HDRLEN + GENL_HDRLEN) return false;
  auto* nlh = reinterpret_cast<nlmsghdr*>(const_cast<uint8_t*>(data));
  auto* gh = static_cast<genlmsghdr*>(nlmsg_data(nlh));
  nlattr* head = genlmsg_attrdata(gh, 0);
  int attrs_len = genlmsg_attrlen(gh, 0);
  nlattr* pos = nullptr;
  int rem = 0;
  nla_for_each_attr(pos, head, attrs_len, rem) {
    if (nla_type(pos) != ATTR_ENTRY) continue;
    Table tb{};
    if (nla_parse_nested(tb.data(), kAttrMax, pos, const_cast<nla_policy*>(kPolicy.data())) < 0) return false;
    if (!decode_entry(Cmd(m.cmd), tb, out)) return false;
  }
  return true;
}

std::string lease_state_name(uint32_t state) {
  // SMB2_LEASE_READ_CACHING 0x1, HANDLE_CACHING 0x2, WRITE_CACHING 0x4
  std::string s;
  if (state & 0x1) s += 'R';
  if (state & 0x4) s += 'W';
  if (state & 0x2) s += 'H';
  return s.empty() ? "-" : s;
}

std::string oplock_level_name(uint8_t level) {
  switch (level) {
    case 0x00: return "none";
    case 0x01: return "II";
    case 0x08: return "exclusive";
    case 0x09: return "batch";
    case kOplockLevelLease: return "lease";
    default: return "?";
  }
}

std::string address_with_port(const std::string& address, uint16_t port) {
  bool ipv6 = address.find(':') != std::string::npos;
  return (ipv6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

std::string dialect_name(uint16_t dialect) {
  switch (dialect) {
    case 0: return "-";
    case 0x0202: return "2.0.2";
    case 0x0210: return "2.1";
    case 0x0300: return "3.0";
    case 0x0302: return "3.0.2";
    case 0x0311: return "3.1.1";
    case 0x02FF: return "2.x";
    default: {
      char buf[16];
      snprintf(buf, sizeof buf, "0x%04x", dialect);
      return buf;
    }
  }
}

std::vector<Bytes> encode_text_replies(Cmd cmd, uint32_t seq, const std::string& text) {
  std::vector<Bytes> out;
  size_t at = 0;
  do {
    size_t len = std::min(kMaxTextPiece, text.size() - at);
    if (at + len < text.size()) {  // end the piece after its last whole line, if it has one
      size_t nl = text.rfind('\n', at + len - 1);
      if (nl != std::string::npos && nl >= at) len = nl + 1 - at;
    }
    MsgBuilder b(cmd, seq, false);
    b.u32(ATTR_STATUS, uint32_t(NtStatus::Success));
    b.str(ATTR_TEXT, text.substr(at, len));
    at += len;
    if (at < text.size()) b.u32(ATTR_MORE_ENTRIES, 1);
    out.push_back(finish(b));
  } while (at < text.size());
  return out;
}

}  // namespace ringsmb::ipc
