#include "json_out.hpp"

#include <cstdio>

namespace ringsmb::ctl::json {

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

Object& Object::add(std::string_view key, const std::vector<std::string>& values) {
  std::string array = "[";
  for (size_t i = 0; i < values.size(); ++i) array += (i ? ", " : "") + quote(values[i]);
  return raw(key, array + "]");
}

Object& Object::raw(std::string_view key, std::string_view value) {
  if (!body_.empty()) body_ += ", ";
  body_ += quote(key);
  body_ += ": ";
  body_ += value;
  return *this;
}

std::string document(std::string_view name, const std::vector<std::string>& items) {
  std::string out = "{" + quote(name) + ": [";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\n  " : "\n  ") + items[i];
  return out + (items.empty() ? "]}\n" : "\n]}\n");
}

}  // namespace ringsmb::ctl::json
