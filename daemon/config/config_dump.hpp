// The effective settings of a parsed configuration as ringsmb.conf text,
// every key with its value whether the file set it or not (Samba's
// `testparm -sv`): what `ringsmbctl config show` prints. The text parses
// back to the same configuration.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"

namespace ringsmb::config {

using Setting = std::pair<std::string, std::string>;  // key as documented, value

std::vector<Setting> global_settings(const GlobalConfig& g);
// GLOBAL supplies the values a share inherits (smb3 encryption).
std::vector<Setting> share_settings(const ShareConfig& s, const GlobalConfig& global);

// "[NAME]\n\tkey = value\n..." for the sections.
std::string render_section(const std::string& name, const std::vector<Setting>& settings);

// Names as the config file spells them.
const char* encryption_name(EncryptionPolicy p);
std::string dialect_name(uint16_t dialect);
// A user list written back: entries with blanks or commas in quotes.
std::string user_list_text(const std::vector<std::string>& list);

}  // namespace ringsmb::config
