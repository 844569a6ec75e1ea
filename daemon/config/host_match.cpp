#include "config/host_match.hpp"

#include <arpa/inet.h>

#include <array>
#include <cctype>
#include <cstring>
#include <optional>

#include "common/str_cat.hpp"

namespace ringsmb::config {
namespace {

// An address as 16 bytes; IPv4 in the IPv4-mapped IPv6 form so that one
// comparison covers both families.
struct Address {
  std::array<uint8_t, 16> bytes{};
  bool v4 = false;
};

constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

std::optional<Address> parse_address(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  memcpy(buf, text.data(), text.size());
  buf[text.size()] = 0;
  Address a;
  in_addr v4;
  if (inet_pton(AF_INET, buf, &v4) == 1) {
    memcpy(a.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size());
    memcpy(a.bytes.data() + 12, &v4, 4);
    a.v4 = true;
    return a;
  }
  if (inet_pton(AF_INET6, buf, a.bytes.data()) != 1) return std::nullopt;
  a.v4 = memcmp(a.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size()) == 0;
  return a;
}

// The dotted-quad text of a client address, for prefix and wildcard
// entries: "::ffff:10.1.2.3" becomes "10.1.2.3".
std::string address_text(const Address& a, std::string_view original) {
  if (!a.v4) return std::string(original);
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, a.bytes.data() + 12, buf, sizeof buf);
  return buf;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool all_of(std::string_view s, bool (*pred)(char)) {
  for (char c : s)
    if (!pred(c)) return false;
  return true;
}

bool is_ipv4_prefix(std::string_view e) {
  return !e.empty() && e.back() == '.' && all_of(e, [](char c) { return is_digit(c) || c == '.'; });
}

bool has_wildcard(std::string_view e) { return e.find_first_of("*?") != std::string_view::npos; }

bool is_host_name(std::string_view e) {
  return all_of(e, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '@';
  });
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool is_except(std::string_view e) { return iequals(e, "EXCEPT"); }

struct Network {
  Address base;
  unsigned bits = 0;  // leading bits that must be equal, out of 128
  std::array<uint8_t, 16> mask{};
};

std::optional<unsigned> parse_prefix_length(std::string_view s, unsigned max) {
  if (s.empty() || s.size() > 3 || !all_of(s, is_digit)) return std::nullopt;
  unsigned n = 0;
  for (char c : s) n = n * 10 + unsigned(c - '0');
  if (n > max) return std::nullopt;
  return n;
}

// "net/len" or "net/dotted.mask"; nullopt when malformed.
std::optional<Network> parse_network(std::string_view e) {
  size_t slash = e.find('/');
  auto base = parse_address(e.substr(0, slash));
  if (!base) return std::nullopt;
  std::string_view m = e.substr(slash + 1);
  Network n;
  n.base = *base;
  if (auto len = parse_prefix_length(m, base->v4 ? 32 : 128)) {
    unsigned bits = *len + (base->v4 ? 96 : 0);
    for (unsigned i = 0; i < bits; ++i) n.mask[i / 8] |= uint8_t(0x80 >> (i % 8));
    return n;
  }
  auto mask = base->v4 ? parse_address(m) : std::nullopt;
  if (!mask || !mask->v4) return std::nullopt;
  n.mask.fill(0xff);
  memcpy(n.mask.data() + 12, mask->bytes.data() + 12, 4);
  return n;
}

bool in_network(const Network& n, const Address& a) {
  for (size_t i = 0; i < 16; ++i)
    if ((a.bytes[i] & n.mask[i]) != (n.base.bytes[i] & n.mask[i])) return false;
  return true;
}

// '*' and '?' over plain text; the iterative form with one backtrack point
// is linear enough for address-sized strings.
bool glob(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
      ++pi;
      ++si;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::expected<void, std::string> check_entry(std::string_view e) {
  if (iequals(e, "ALL") || is_ipv4_prefix(e)) return {};
  if (e.find('/') != std::string_view::npos) {
    if (!parse_network(e))
      return std::unexpected(cat("'", e, "' is not a valid network (use 10.0.0.0/8 or 10.0.0.0/255.0.0.0)"));
    return {};
  }
  if (parse_address(e)) return {};
  if (has_wildcard(e)) return {};
  // Digits and dots only but no address: a typo such as 300.1.1.1 or 10.1.
  if (all_of(e, [](char c) { return is_digit(c) || c == '.'; }))
    return std::unexpected(cat("'", e, "' is not a valid IPv4 address"));
  if (e.find(':') != std::string_view::npos) return std::unexpected(cat("'", e, "' is not a valid IPv6 address"));
  if (!is_host_name(e)) return std::unexpected(cat("'", e, "' is not an address, network or host name"));
  return {};
}

bool entry_matches(std::string_view e, const Address& a, std::string_view text) {
  if (iequals(e, "ALL")) return true;
  if (is_ipv4_prefix(e)) return a.v4 && text.starts_with(e);
  if (e.find('/') != std::string_view::npos) {
    auto n = parse_network(e);
    return n && in_network(*n, a);
  }
  if (auto want = parse_address(e)) return want->bytes == a.bytes;
  if (has_wildcard(e)) return glob(e, text);
  return false;  // host names and netgroups: never resolved
}

// Samba's list_match: the entries before the first EXCEPT, minus what the
// rest (itself possibly with EXCEPT) matches. Evaluated from the last
// segment backwards, so a hostile list of many EXCEPTs costs no recursion.
bool list_match(std::span<const std::string> entries, const Address& a, std::string_view text) {
  bool result = false;
  size_t end = entries.size();
  while (true) {
    size_t begin = end;
    while (begin > 0 && !is_except(entries[begin - 1])) --begin;
    bool any = false;
    for (size_t i = begin; i < end && !any; ++i) any = entry_matches(entries[i], a, text);
    result = any && (end == entries.size() ? true : !result);
    if (begin == 0) return result;
    end = begin - 1;  // skip the EXCEPT
  }
}

bool is_loopback(const Address& a) {
  static const Address v6 = *parse_address("::1");
  return (a.v4 && a.bytes[12] == 127) || a.bytes == v6.bytes;
}

}  // namespace

std::expected<void, std::string> check_host_list(std::span<const std::string> entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (is_except(entries[i])) {
      if (i == 0 || i + 1 == entries.size() || is_except(entries[i + 1]))
        return std::unexpected("EXCEPT needs entries on both sides");
      continue;
    }
    if (auto r = check_entry(entries[i]); !r) return r;
  }
  return {};
}

bool host_list_matches(std::span<const std::string> entries, std::string_view client_address) {
  auto a = parse_address(client_address);
  if (!a) return false;
  return list_match(entries, *a, address_text(*a, client_address));
}

bool host_allowed(std::span<const std::string> allow, std::span<const std::string> deny,
                  std::string_view client_address) {
  if (allow.empty() && deny.empty()) return true;
  auto a = parse_address(client_address);
  if (!a) return false;  // not an address we can judge: refuse rather than guess
  std::string text = address_text(*a, client_address);
  bool allowed = !allow.empty() && list_match(allow, *a, text);
  bool denied = !deny.empty() && list_match(deny, *a, text);
  if (is_loopback(*a)) return allowed || !denied;
  if (deny.empty()) return allowed;
  if (allow.empty()) return !denied;
  return allowed || !denied;
}

}  // namespace ringsmb::config
