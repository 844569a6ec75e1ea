// JSON for the --json output of ringsmbctl's lists. The documents are small
// and flat, so a builder that appends text is enough; field names are a
// contract (ringsmbctl(8), "JSON OUTPUT"), kept in snake_case.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ringsmb::ctl::json {

// S as a JSON string: quotes, backslashes and control characters escaped;
// other bytes (UTF-8) as they are.
std::string quote(std::string_view s);

// {"key": value, ...} in the order the fields are added.
class Object {
 public:
  Object& add(std::string_view key, std::string_view value) { return raw(key, quote(value)); }
  Object& add(std::string_view key, const char* value) { return raw(key, quote(value)); }
  Object& add(std::string_view key, const std::string& value) { return raw(key, quote(value)); }
  Object& add(std::string_view key, bool value) { return raw(key, value ? "true" : "false"); }
  Object& add(std::string_view key, uint64_t value) { return raw(key, std::to_string(value)); }
  Object& add(std::string_view key, const std::vector<std::string>& values);
  // VALUE is already JSON (an object or array built here).
  Object& raw(std::string_view key, std::string_view value);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

// {"NAME": [\n  item,\n  item\n]}: one item per line keeps the output
// readable and greppable.
std::string document(std::string_view name, const std::vector<std::string>& items);

}  // namespace ringsmb::ctl::json
