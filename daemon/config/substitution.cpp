#include "config/substitution.hpp"

#include <cctype>

namespace ringsmb::config {

namespace {

const std::string* value_of(char token, const Substitutions& v) {
  switch (token) {
    case 'U': return &v.user;
    case 'S': return &v.share;
    case 'H': return &v.home;
    default: return nullptr;
  }
}

bool is_expanded(char token) { return token == 'U' || token == 'S' || token == 'H'; }

}  // namespace

std::string substitute(std::string_view text, const Substitutions& values) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string* v = text[i] == '%' && i + 1 < text.size() ? value_of(text[i + 1], values) : nullptr;
    if (!v) {
      out.push_back(text[i]);
      continue;
    }
    out.append(*v);
    ++i;
  }
  return out;
}

bool has_substitution(std::string_view text) {
  for (size_t i = 0; i + 1 < text.size(); ++i)
    if (text[i] == '%' && is_expanded(text[i + 1])) return true;
  return false;
}

std::optional<std::string> unexpanded_token(std::string_view text) {
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '%') continue;
    char c = text[i + 1];
    if (std::isalpha(static_cast<unsigned char>(c)) && !is_expanded(c)) return std::string(text.substr(i, 2));
    // "%$(NAME)", Samba's environment variable, is not expanded either.
    if (c == '$' && i + 2 < text.size() && text[i + 2] == '(') return std::string(text.substr(i, 3));
  }
  return std::nullopt;
}

bool is_substituted_key(std::string_view key) {
  for (std::string_view k : {"path", "comment", "validusers", "invalidusers", "readlist", "writelist",
                             "recycle:repository"})
    if (k == key) return true;
  return false;
}

}  // namespace ringsmb::config
