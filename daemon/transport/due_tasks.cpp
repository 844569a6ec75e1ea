#include "transport/due_tasks.hpp"

#include <algorithm>
#include <climits>
#include <utility>

namespace ringsmb::transport {
namespace {

// std::push_heap keeps the greatest first: "later" is greater.
bool later(const DueTasks::Task& a, const DueTasks::Task& b) {
  return a.due_ms != b.due_ms ? a.due_ms > b.due_ms : a.seq > b.seq;
}

bool unwanted(const DueTasks::Task& t) { return t.wanted && !t.wanted->load(std::memory_order_relaxed); }

}  // namespace

void DueTasks::add(int64_t due_ms, uint64_t conn_id, smb2::ConnTask task, smb2::Wanted wanted) {
  heap_.push_back({due_ms, next_seq_++, conn_id, std::move(task), std::move(wanted)});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void DueTasks::pop(Task* out) {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  if (out) *out = std::move(heap_.back());
  heap_.pop_back();
}

int DueTasks::ms_until_due(int64_t now) {
  while (!heap_.empty() && unwanted(heap_.front())) pop(nullptr);
  if (heap_.empty()) return -1;
  return int(std::clamp<int64_t>(heap_.front().due_ms - now, 0, INT_MAX));
}

bool DueTasks::take_due(int64_t now, Task& out) {
  while (!heap_.empty() && heap_.front().due_ms <= now) {
    pop(&out);
    if (!unwanted(out)) return true;
  }
  return false;
}

}  // namespace ringsmb::transport
