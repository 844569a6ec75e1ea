// Samba's `interfaces` syntax with per-interface options
// ("eth0;capability=RSS,speed=10000000000", source3/lib/interface.c's
// extended form): the entries ringsmbd listens on, and what
// FSCTL_QUERY_NETWORK_INTERFACE_INFO reports for them.
#include <cctype>

#include "config/config_internal.hpp"

namespace ringsmb::config::detail {
namespace {

// Bits per second: digits, then an optional decimal multiple (a link
// speed is counted in powers of ten: 10G is 10,000,000,000 bit/s).
std::expected<uint64_t, Err> parse_link_speed(std::string_view v) {
  constexpr uint64_t kMaxBps = 1'000'000'000'000'000ull;  // 1 Pbit/s: past any NIC
  uint64_t n = 0;
  size_t i = 0;
  for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i) {
    n = n * 10 + uint64_t(v[i] - '0');
    if (n > kMaxBps) return std::unexpected(cat("speed '", v, "' is too large"));
  }
  std::string suffix = to_lower(v.substr(i));
  uint64_t mult = 0;
  if (suffix.empty()) mult = 1;
  else if (suffix == "k") mult = 1'000;
  else if (suffix == "m") mult = 1'000'000;
  else if (suffix == "g") mult = 1'000'000'000;
  else if (suffix == "t") mult = 1'000'000'000'000;
  if (i == 0 || mult == 0) return std::unexpected(cat("speed '", v, "' is not a number of bit/s (10G, 1000000000)"));
  if (n > kMaxBps / mult) return std::unexpected(cat("speed '", v, "' is too large"));
  if (n == 0) return std::unexpected("speed must not be 0");
  return n * mult;
}

// One "key=value" of an entry's options.
std::expected<void, Err> apply_option(InterfaceOverride& o, std::string_view option) {
  size_t eq = option.find('=');
  if (eq == std::string_view::npos) return std::unexpected(cat("interface option '", option, "' is not key=value"));
  std::string key = to_lower(trim(option.substr(0, eq)));
  std::string_view value = trim(option.substr(eq + 1));
  if (key == "speed") {
    auto bps = parse_link_speed(value);
    if (!bps) return std::unexpected(bps.error());
    o.speed_bps = *bps;
  } else if (key == "capability") {
    if (iequals(value, "RSS")) o.rss = true;
    else if (iequals(value, "RDMA")) o.rdma = true;
    else return std::unexpected(cat("interface capability '", value, "' is neither RSS nor RDMA"));
  } else if (key == "if_index") {
    auto n = parse_ranged(value, 1, UINT32_MAX);
    if (!n) return std::unexpected(n.error());
    o.if_index = *n;
  } else if (key == "options") {
    // Samba's dynamic-address tracking: ringsmbd reads the addresses at each request anyway.
    if (!iequals(value, "dynamic") && !iequals(value, "nodynamic"))
      return std::unexpected(cat("interface options '", value, "' is neither dynamic nor nodynamic"));
  } else {
    return std::unexpected(cat("unknown interface option '", key, "' (speed, capability, if_index, options)"));
  }
  return {};
}

// Options separated by commas.
std::expected<void, Err> apply_options(InterfaceOverride& o, std::string_view options) {
  while (!options.empty()) {
    size_t comma = options.find(',');
    std::string_view one = trim(options.substr(0, comma));
    if (!one.empty())
      if (auto r = apply_option(o, one); !r) return r;
    if (comma == std::string_view::npos) break;
    options.remove_prefix(comma + 1);
  }
  return {};
}

bool is_option_word(std::string_view tok) {
  size_t eq = tok.find('=');
  if (eq == std::string_view::npos) return false;
  std::string key = to_lower(tok.substr(0, eq));
  return key == "speed" || key == "capability" || key == "if_index" || key == "options";
}

}  // namespace

std::expected<InterfaceList, Err> parse_interfaces(std::string_view v) {
  auto tokens = split_list(v, true);
  if (!tokens) return std::unexpected(tokens.error());
  InterfaceList out;
  bool last_had_options = false;
  for (const std::string& tok : *tokens) {
    // Unquoted, Samba's form splits at its commas: a bare option word
    // continues the previous entry's options.
    if (last_had_options && is_option_word(tok)) {
      if (auto r = apply_option(out.overrides.back(), tok); !r) return std::unexpected(r.error());
      continue;
    }
    size_t semi = tok.find(';');
    std::string entry(trim(std::string_view(tok).substr(0, semi)));
    if (entry.empty()) return std::unexpected(cat("interface entry '", tok, "' names no interface"));
    out.entries.push_back(entry);
    last_had_options = semi != std::string::npos;
    if (!last_had_options) continue;
    InterfaceOverride o;
    o.entry = entry;
    if (auto r = apply_options(o, std::string_view(tok).substr(semi + 1)); !r) return std::unexpected(r.error());
    out.overrides.push_back(std::move(o));
  }
  return out;
}

}  // namespace ringsmb::config::detail
