#include "smb2/engine/credits.hpp"

#include <algorithm>

namespace ringsmb::smb2 {

void CreditWindow::set_used(uint64_t id, bool v) {
  uint64_t bit = uint64_t(1) << (slot(id) % 64);
  uint64_t& word = used_bits_[slot(id) / 64];
  word = v ? (word | bit) : (word & ~bit);
}

void CreditWindow::fit_window() {
  uint64_t span = high_ - low_;
  if (span <= capacity()) return;
  size_t words = used_bits_.size();
  while (words * 64 < span) words *= 2;
  std::vector<uint64_t> old = std::move(used_bits_);
  size_t old_mask = old.size() * 64 - 1;
  used_bits_.assign(words, 0);
  // Only ids below low_ + the old capacity can be marked: the ring was big
  // enough for the window at every earlier consume. Higher ids alias them.
  for (uint64_t id = low_; id < std::min<uint64_t>(high_, low_ + old_mask + 1); ++id) {
    size_t s = size_t(id) & old_mask;
    if ((old[s / 64] >> (s % 64)) & 1) set_used(id, true);
  }
}

bool CreditWindow::consume(uint64_t mid, uint16_t charge) {
  if (charge == 0) charge = 1;
  if (mid < low_ || mid + charge > high_ || mid + charge < mid) return false;
  fit_window();
  for (uint64_t id = mid; id < mid + charge; ++id)
    if (used(id)) return false;
  for (uint64_t id = mid; id < mid + charge; ++id) set_used(id, true);
  used_in_window_ += charge;
  // Slide the window past ids used in order.
  while (low_ < high_ && used(low_)) {
    set_used(low_, false);
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
