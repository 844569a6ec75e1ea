// Domain accounts from a PAC (see domain_account.hpp).
#include "control/domain_account.hpp"

#include <algorithm>
#include <cctype>

#include "ipc/ctl_abi.hpp"
#include "rpc/domain_names.hpp"

namespace ringsmb::control {

std::vector<std::string> domain_account_names(const kerberos::LogonInfo& info, std::string_view realm) {
  std::vector<std::string> names;
  const std::string& user = info.account_name;
  if (!info.domain_name.empty()) names.push_back(info.domain_name + "\\" + user);
  if (!realm.empty()) {
    std::string lower(realm);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    names.push_back(user + "@" + lower);
  }
  names.push_back(user);
  return names;
}

std::string_view principal_realm(std::string_view principal) {
  size_t at = principal.rfind('@');
  return at == std::string_view::npos ? std::string_view() : principal.substr(at + 1);
}

void remember_domain_names(const kerberos::LogonInfo& info) {
  rpc::Sid domain{1, info.domain_sid.authority, info.domain_sid.sub};
  rpc::known_domain_names().learn_user(domain, info.domain_name, info.user_rid, info.account_name);
}

std::expected<std::vector<std::string>, std::string> session_sids(const kerberos::LogonInfo& info) {
  std::vector<std::string> out;
  out.push_back(info.user_sid().to_string());
  size_t text = out.back().size();
  for (const kerberos::PacSid& g : info.group_sids()) {
    out.push_back(g.to_string());
    text += 1 + out.back().size();
  }
  if (text > ipc::abi::kMaxSidsText)
    return std::unexpected("the PAC lists " + std::to_string(out.size()) + " SIDs, more than a session carries");
  return out;
}

}  // namespace ringsmb::control
