// The credit / message-id window of one connection (MS-SMB2 3.3.1.1,
// 3.3.5.2.3): which message ids the client may use now, each exactly once.
#pragma once

#include <cstdint>
#include <deque>

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
  uint64_t low_;   // lowest id not yet used
  uint64_t high_;  // first id beyond the window
  std::deque<bool> used_;  // used_[i] says whether id low_+i was used
  uint64_t used_in_window_ = 0;
  uint64_t pending_ = 0;  // granted in responses not yet sent
};

}  // namespace ringsmb::smb2
