// A Prometheus text-format label value: backslash, double quote and
// newline escaped (the format's rule). Shared by ringsmbd's /metrics
// (smb2/engine/metrics.cpp) and `ringsmbctl status --prometheus`
// (ipc/status_prometheus.cpp).
#pragma once

#include <string>

namespace ringsmb {

inline std::string prometheus_label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace ringsmb
