// libFuzzer target for the line-preserving config editor behind
// `ringsmbctl share ...`: any text reads back byte for byte, and edits of
// any section never crash, never touch other sections' lines and leave the
// edited setting readable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/config_editor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ringsmb::config::ConfigEditor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ConfigEditor editor(text);
  if (editor.text() != text) std::abort();  // unedited: byte for byte
  for (const auto& name : editor.section_names()) {
    ConfigEditor e(text);
    if (!e.set(name, "comment", "fuzzed value")) continue;  // e.g. a name the editor refuses
    bool found = false;
    for (const auto& entry : e.entries(name))
      found = found || (ringsmb::config::normalize_key(entry.key) == "comment" && entry.value == "fuzzed value");
    if (!found) std::abort();
    (void)e.unset(name, "read only");
    (void)e.remove_section(name);
  }
  ConfigEditor e(text);
  if (e.add_section("fuzzshare", {{"path", "/srv/fuzz"}}) && e.text().find("[fuzzshare]") == std::string::npos)
    std::abort();
  return 0;
}
