// The credit / message-id window of one connection (MS-SMB2 3.3.1.1,
// 3.3.5.2.3): which message ids the client may use now, each exactly once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringsmb::smb2 {

class CreditWindow {
 public:
  // A fresh connection may send message id 0 with one credit.
  CreditWindow() : low_(0), high_(1) {}

  // Consumes ids [mid, mid+charge); false if any is outside the window or
  // already used.
  bool consume(uint64_t mid, uint16_t charge);
  // Grants up to `requested` more credits, keeping the outstanding total at
  // most `max_credits`, and at least one when the client would otherwise be
  // left with none. Returns the number granted. Grants take effect at
  // commit(): the client learns of them only from the response, so a
  // compound chain cannot use credits granted to its own earlier elements.
  uint16_t grant(uint16_t requested, uint32_t max_credits);
  void commit() {
    high_ += pending_;
    pending_ = 0;
  }
  uint64_t outstanding() const { return high_ + pending_ - low_ - used_in_window_; }

 private:
  bool used(uint64_t id) const { return (used_bits_[slot(id) / 64] >> (slot(id) % 64)) & 1; }
  void set_used(uint64_t id, bool v);
  size_t slot(uint64_t id) const { return size_t(id) & (capacity() - 1); }
  size_t capacity() const { return used_bits_.size() * 64; }
  // Makes the ring hold every id in [low_, high_); rare (the window only
  // grows up to the credit limit), so steady state allocates nothing.
  void fit_window();

  uint64_t low_;   // lowest id not yet used
  uint64_t high_;  // first id beyond the window
  // A ring of bits, indexed by id modulo its (power-of-two) capacity: whether
  // each id in [low_, high_) was used. Bits outside the window are zero.
  std::vector<uint64_t> used_bits_ = std::vector<uint64_t>(1, 0);
  uint64_t used_in_window_ = 0;
  uint64_t pending_ = 0;  // granted in responses not yet sent
};

}  // namespace ringsmb::smb2
