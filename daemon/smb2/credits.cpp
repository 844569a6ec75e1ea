#include "smb2/credits.hpp"

#include <algorithm>

namespace ringsmb::smb2 {

bool CreditWindow::consume(uint64_t mid, uint16_t charge) {
  if (charge == 0) charge = 1;
  if (mid < low_ || mid + charge > high_ || mid + charge < mid) return false;
  uint64_t first = mid - low_;
  if (used_.size() < first + charge) used_.resize(first + charge, false);
  for (uint64_t i = first; i < first + charge; ++i)
    if (used_[i]) return false;
  for (uint64_t i = first; i < first + charge; ++i) used_[i] = true;
  used_in_window_ += charge;
  // Slide the window past ids used in order.
  while (!used_.empty() && used_.front()) {
    used_.pop_front();
    ++low_;
    --used_in_window_;
  }
  return true;
}

uint16_t CreditWindow::grant(uint16_t requested, uint32_t max_credits) {
  uint64_t available = outstanding();
  uint64_t room = max_credits > available ? max_credits - available : 0;
  uint64_t n = std::min<uint64_t>(std::max<uint16_t>(requested, 1), room);
  if (n == 0 && available == 0) n = 1;
  pending_ += n;
  return uint16_t(n);
}

}  // namespace ringsmb::smb2
