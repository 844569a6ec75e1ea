// MS-FSA 2.1.4.4 name matching (FsRtlIsNameInExpression semantics).
//
// The pattern is run as an NFA over the name: the state is the set of
// pattern positions still alive, so matching is O(|pattern| * |name|) with
// no backtracking blow-up on patterns like "*a*a*a*b" (the fuzzer likes those).
#include <vector>

#include "vfs/dir_entries.hpp"
#include "vfs/codepoints.hpp"

namespace ringsmb::vfs {
namespace {

constexpr char32_t kStar = '*';
constexpr char32_t kQm = '?';
constexpr char32_t kDosStar = '<';
constexpr char32_t kDosQm = '>';
constexpr char32_t kDosDot = '"';
constexpr char32_t kDot = '.';

std::u32string decode(std::string_view s, bool fold) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = unicode::next_code_point(s, i);
    out.push_back(fold ? unicode::fold_code_point(cp) : cp);
  }
  return out;
}

class Matcher {
 public:
  Matcher(std::u32string p, std::u32string n) : p_(std::move(p)), n_(std::move(n)) {
    last_dot_ = n_.rfind(kDot);
  }

  bool run() {
    std::vector<uint8_t> cur(p_.size() + 1, 0), next(p_.size() + 1, 0);
    cur[0] = 1;
    close(cur, 0);
    for (size_t ni = 0; ni < n_.size(); ++ni) {
      std::fill(next.begin(), next.end(), 0);
      bool any = false;
      for (size_t pi = 0; pi < p_.size(); ++pi) {
        if (!cur[pi]) continue;
        if (consumes_self(pi, ni)) next[pi] = any = true;
        if (consumes_advance(pi, ni)) next[pi + 1] = any = true;
      }
      if (!any) return false;
      close(next, ni + 1);
      cur.swap(next);
    }
    return cur[p_.size()] != 0;
  }

 private:
  // Transitions that match zero name characters at name position ni.
  bool epsilon(size_t pi, size_t ni) const {
    switch (p_[pi]) {
      case kStar:
      case kDosStar: return true;
      // DOS_QM stops matching at a '.' or the end of the name.
      case kDosQm: return ni == n_.size() || n_[ni] == kDot;
      // DOS_DOT matches nothing only beyond the end of the name.
      case kDosDot: return ni == n_.size();
      default: return false;
    }
  }

  // Epsilon moves only go forward, so one ascending pass is a full closure.
  void close(std::vector<uint8_t>& set, size_t ni) const {
    for (size_t pi = 0; pi < p_.size(); ++pi) {
      if (set[pi] && epsilon(pi, ni)) set[pi + 1] = 1;
    }
  }

  // Consume name[ni] and stay on the same pattern position.
  bool consumes_self(size_t pi, size_t ni) const {
    if (p_[pi] == kStar) return true;
    // DOS_STAR eats everything except the name's final '.'; past that dot
    // (or in a name without dots) nothing stops it, so it acts like '*'.
    if (p_[pi] == kDosStar) return ni != last_dot_;
    return false;
  }

  // Consume name[ni] and move to the next pattern position.
  bool consumes_advance(size_t pi, size_t ni) const {
    const char32_t c = n_[ni];
    switch (p_[pi]) {
      case kStar:
      case kDosStar: return false;
      case kQm: return true;
      case kDosQm: return c != kDot;
      case kDosDot: return c == kDot;
      default: return p_[pi] == c;
    }
  }

  std::u32string p_, n_;
  size_t last_dot_;
};

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view name, bool case_sensitive) {
  // Both spellings of "everything"; "*.*" must also match names without a dot.
  if (pattern == "*" || pattern == "*.*") return true;
  return Matcher(decode(pattern, !case_sensitive), decode(name, !case_sensitive)).run();
}

}  // namespace ringsmb::vfs
