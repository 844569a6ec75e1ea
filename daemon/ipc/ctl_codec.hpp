// Building and parsing ctl_abi.hpp messages with libnl, and converting the
// control-plane structs (control_plane.hpp) to and from attributes. Parsing
// never trusts the peer: every length is checked against the datagram and
// against abi::kPolicy before an attribute is read.
#pragma once

#include <array>
#include <expected>
#include <string>

#include "common/bytes.hpp"
#include "ipc/control_plane.hpp"
#include "ipc/ctl_abi.hpp"

struct nl_msg;

namespace ringsmb::ipc {

enum class ParseError {
  Short,             // shorter than the headers, or nlmsg_len beyond the datagram
  WrongFamily,       // nlmsg_type is not abi::kFamilyId
  WrongVersion,      // genlmsghdr.version is not abi::kGenlVersion
  UnknownCommand,    // genlmsghdr.cmd out of range
  BadAttribute,      // an attribute violates abi::kPolicy (type, length, NUL)
  MissingAttribute,  // a required attribute is absent
};
const char* to_string(ParseError e);

// A parsed message. Attribute pointers point into the datagram it was
// parsed from, which must outlive it.
struct Message {
  uint8_t cmd = 0;
  bool is_request = false;
  uint32_t seq = 0;  // the handle
  std::array<struct nlattr*, abi::ATTR_COUNT> tb{};

  bool has(abi::Attr a) const { return tb[a] != nullptr; }
  uint32_t u32(abi::Attr a, uint32_t fallback = 0) const;
  uint64_t u64(abi::Attr a, uint64_t fallback = 0) const;
  std::string str(abi::Attr a) const;  // "" when absent
  ByteSpan bytes(abi::Attr a) const;   // empty when absent
};

// Parses the first message of a datagram and checks it against the policy
// and the required attributes of its command and direction.
std::expected<Message, ParseError> parse_message(const uint8_t* data, size_t len);

// An outgoing message. Owns the nl_msg; a failed put (message too large)
// makes ok() false instead of throwing.
class MsgBuilder {
 public:
  MsgBuilder(abi::Cmd cmd, uint32_t seq, bool is_request);
  ~MsgBuilder();
  MsgBuilder(const MsgBuilder&) = delete;
  MsgBuilder& operator=(const MsgBuilder&) = delete;

  MsgBuilder& u32(abi::Attr a, uint32_t v);
  MsgBuilder& u64(abi::Attr a, uint64_t v);
  MsgBuilder& str(abi::Attr a, const std::string& v);
  MsgBuilder& bytes(abi::Attr a, ByteSpan v);
  // A nested attribute (a LIST_* ENTRY): what is put between the two calls
  // goes inside it. One level only.
  MsgBuilder& begin_nest(abi::Attr a);
  MsgBuilder& end_nest();
  bool ok() const { return ok_; }
  ByteSpan wire() const;  // the whole nlmsghdr..end

 private:
  struct nl_msg* msg_ = nullptr;
  struct nlattr* nest_ = nullptr;
  bool ok_ = true;
};

// TEXT fitted to ATTR_TEXT's policy (4 KiB with its NUL): a longer text
// (the warnings of a reload) is cut at a line end, with a last line that
// says so.
std::string fit_text_attr(const std::string& text);

// Struct <-> attribute conversions. Encoders fill a builder made by the
// caller (who picks command and handle); decoders read a parsed Message.
void encode_login_request(MsgBuilder& b, const LoginRequest& r);
LoginRequest decode_login_request(const Message& m);  // spans point into m's datagram
void encode_login_reply(MsgBuilder& b, const LoginReply& r, bool with_groups);
LoginReply decode_login_reply(const Message& m);
// SPNEGO_AUTHEN: the Kerberos token out, a LOGIN_EXT-style reply plus the AP-REP back.
void encode_kerberos_login_request(MsgBuilder& b, const KerberosLoginRequest& r);
KerberosLoginRequest decode_kerberos_login_request(const Message& m);  // the span points into m's datagram
void encode_kerberos_login_reply(MsgBuilder& b, const KerberosLoginReply& r);
KerberosLoginReply decode_kerberos_login_reply(const Message& m);
void encode_tree_connect_request(MsgBuilder& b, const TreeConnectRequest& r);
TreeConnectRequest decode_tree_connect_request(const Message& m);
void encode_share(MsgBuilder& b, const ShareInfo& s, uint32_t extra_flags);
void encode_tree_connect_reply(MsgBuilder& b, const TreeConnectReply& r);
TreeConnectReply decode_tree_connect_reply(const Message& m);

}  // namespace ringsmb::ipc
