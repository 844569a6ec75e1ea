#include "state/resource_budget.hpp"

#include <algorithm>

namespace ringsmb::state {

OpenCharge::OpenCharge(std::atomic<uint32_t>* total, std::atomic<uint32_t>* user) : total_(total), user_(user) {
  if (total_) total_->fetch_add(1, std::memory_order_relaxed);
  if (user_) user_->fetch_add(1, std::memory_order_relaxed);
}

OpenCharge& OpenCharge::operator=(OpenCharge&& o) noexcept {
  if (this != &o) {
    release();
    total_ = o.total_;
    user_ = o.user_;
    o.total_ = o.user_ = nullptr;
  }
  return *this;
}

void OpenCharge::release() {
  if (total_) total_->fetch_sub(1, std::memory_order_relaxed);
  if (user_) user_->fetch_sub(1, std::memory_order_relaxed);
  total_ = user_ = nullptr;
}

void ResourceBudget::set_descriptor_limit(uint64_t nofile, uint64_t own) {
  uint64_t reserve = std::clamp<uint64_t>(nofile / 16, 32, 1024);
  reserve_ = uint32_t(reserve);
  // A limit too small for both reserves still leaves clients half of what
  // the daemon does not hold.
  uint64_t free = nofile > own ? nofile - own : 0;
  uint64_t usable = free > 2 * reserve ? free - reserve : free / 2;
  usable_ = uint32_t(std::min<uint64_t>(usable, UINT32_MAX));
}

std::atomic<uint32_t>* ResourceBudget::user_open_count(const std::string& user) {
  std::lock_guard lock(mu_);
  auto& slot = user_opens_[user];
  if (!slot) slot = std::make_unique<std::atomic<uint32_t>>(0);
  return slot.get();
}

bool ResourceBudget::add_connection_from(const std::string& address, uint32_t limit) {
  std::lock_guard lock(mu_);
  uint32_t& n = per_address_[address];
  if (limit && n >= limit) {
    if (n == 0) per_address_.erase(address);
    return false;
  }
  ++n;
  return true;
}

void ResourceBudget::remove_connection_from(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = per_address_.find(address);
  if (it == per_address_.end()) return;
  if (--it->second == 0) per_address_.erase(it);
}

}  // namespace ringsmb::state
