// The small-file workload over SMB: per connection, `depth` files in
// flight, each CREATE (lease RWH) -> WRITE -> SET_INFO -> CLOSE, either as
// four round trips or as one related compound.
//
// --profile windows sends what Windows 10/11 Explorer sends to copy a small
// file (docs/PERFORMANCE.md gives the sources): CREATE with a v2 lease
// request, a durable-v2 request and the MxAc and QFid queries; SET_INFO
// FileEndOfFileInformation (the final size, before the data); WRITE;
// SET_INFO FileBasicInformation (the source's times and attributes); CLOSE.
// Each is its own round trip, or with --compound one related chain.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "common/ntstatus.hpp"
#include "ntlm_client.hpp"
#include "report.hpp"
#include "server_cpu.hpp"
#include "workload.hpp"

namespace ringsmb::smbench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kOverwriteIf = 5;
constexpr uint32_t kDesiredAccess = 0x0012019F;  // what Explorer asks for when it copies a file
constexpr uint32_t kAttrArchive = 0x20;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "smbench: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

// The first few failures are shown; all are counted (RESULT errors=N).
constexpr uint64_t kErrorsShown = 5;

struct Slot {
  uint64_t file = 0;
  FileId id{};
  Op op = kCreate;
  Clock::time_point t0;
};

// One connection's share of the run.
class FileWriter {
 public:
  FileWriter(Connection& conn, const Options& opt, std::atomic<uint64_t>& next, const Bytes& data)
      : conn_(conn), opt_(opt), next_(next), data_(data), slots_(size_t(opt.depth)) {}

  Stats run() {
    for (size_t s = 0; s < slots_.size(); ++s) start_file(s);
    while (!pending_.empty() || !deferred_.empty()) {
      for (auto& r : conn_.receive()) on_response(r);
      flush_deferred();
    }
    return std::move(stats_);
  }

 private:
  std::string name(uint64_t n) const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s_%08llu.dat", opt_.prefix.c_str(), (unsigned long long)n);
    return buf;
  }

  void start_file(size_t s) {
    uint64_t n = next_.fetch_add(1);
    if (n >= opt_.files) return;
    Slot& slot = slots_[s];
    slot.file = n;
    if (opt_.compound) {
      std::vector<Request> chain;
      chain.push_back(create(n));
      if (opt_.windows_profile) chain.push_back(set_end_of_file_request(kRelatedFileId, data_.size()));
      chain.push_back(write_request(kRelatedFileId, 0, data_));
      chain.push_back(set_basic_info_request(kRelatedFileId, filetime_now(), kAttrArchive));
      chain.push_back(close_request(kRelatedFileId));
      slot.op = kChain;
      issue(s, std::move(chain));
    } else {
      slot.op = kCreate;
      issue(s, {create(n)});
    }
  }

  Request create(uint64_t n) const {
    if (opt_.windows_profile) return create_request_windows(name(n), kOverwriteIf, kDesiredAccess);
    return create_request(name(n), opt_.lease, kOverwriteIf, kDesiredAccess);
  }

  void count_error(const Response& r) {
    if (++stats_.errors <= kErrorsShown)
      std::fprintf(stderr, "smbench: %s (command %u) failed: %s\n", kOpNames[op_of(r)], unsigned(r.hdr.command),
                   status_text(r.status()).c_str());
  }

  static Op op_of(const Response& r) {
    switch (r.hdr.command) {
      case wire::Command::Create: return kCreate;
      case wire::Command::Write: return kWrite;
      case wire::Command::SetInfo: return kSetInfo;
      case wire::Command::Close: return kClose;
      default: return kChain;
    }
  }

  void issue(size_t s, std::vector<Request> reqs) {
    uint32_t need = 0;
    for (auto& r : reqs) need += r.credit_charge;
    // Without credits a request would be refused; wait for the grants that
    // the responses in flight carry.
    if (conn_.credits() < need && !pending_.empty()) {
      deferred_.emplace_back(s, std::move(reqs));
      return;
    }
    slots_[s].t0 = Clock::now();
    auto ids = conn_.send(reqs);
    // Only the last response of a chain (CLOSE) moves the slot on.
    for (size_t i = 0; i + 1 < ids.size(); ++i) pending_[ids[i]] = kNoSlot;
    pending_[ids.back()] = s;
  }

  void flush_deferred() {
    while (!deferred_.empty()) {
      uint32_t need = 0;
      for (auto& r : deferred_.front().second) need += r.credit_charge;
      if (conn_.credits() < need && !pending_.empty()) return;
      auto [s, reqs] = std::move(deferred_.front());
      deferred_.pop_front();
      issue(s, std::move(reqs));
    }
  }

  void on_response(const Response& r) {
    if (r.status() == uint32_t(NtStatus::Pending)) return;  // interim; the final one follows
    auto it = pending_.find(r.hdr.message_id);
    if (it == pending_.end()) return;  // a lease break or other notification
    size_t s = it->second;
    pending_.erase(it);
    if (r.status() != 0) count_error(r);
    if (s == kNoSlot) return;
    Slot& slot = slots_[s];
    stats_.lat[slot.op].push_back(uint32_t(std::min<int64_t>(
        UINT32_MAX, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - slot.t0).count())));
    // A file whose CREATE failed has no handle: go on with the next file.
    // After any other failure the file's remaining requests still go out
    // (its CLOSE above all), as a client's would.
    if (slot.op == kCreate && r.status() != 0) {
      start_file(s);
      return;
    }
    advance(s, r);
  }

  void advance(size_t s, const Response& r) {
    Slot& slot = slots_[s];
    switch (slot.op) {
      case kCreate:
        if (!parse_create_response(r, slot.id)) die("short CREATE response");
        if (opt_.windows_profile) {
          slot.op = kSetEof;
          issue(s, {set_end_of_file_request(slot.id, data_.size())});
        } else {
          slot.op = kWrite;
          issue(s, {write_request(slot.id, 0, data_)});
        }
        return;
      case kSetEof:
        slot.op = kWrite;
        issue(s, {write_request(slot.id, 0, data_)});
        return;
      case kWrite:
        slot.op = kSetInfo;
        issue(s, {set_basic_info_request(slot.id, filetime_now(), kAttrArchive)});
        return;
      case kSetInfo:
        slot.op = kClose;
        issue(s, {close_request(slot.id)});
        return;
      case kClose:
      case kChain:
        if (r.status() == 0) ++stats_.files;
        start_file(s);
        return;
      default:
        return;
    }
  }

  static constexpr size_t kNoSlot = SIZE_MAX;
  Connection& conn_;
  const Options& opt_;
  std::atomic<uint64_t>& next_;
  const Bytes& data_;
  std::vector<Slot> slots_;
  std::unordered_map<uint64_t, size_t> pending_;
  std::deque<std::pair<size_t, std::vector<Request>>> deferred_;
  Stats stats_;
};

}  // namespace

int run_small_files(const Options& opt) {
  Bytes data(opt.size, 0);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 131 + 7);
  std::atomic<uint64_t> next{0};
  StartingLine line(opt.connections);
  std::mutex mu;
  Stats total;
  std::vector<std::thread> threads;
  for (int c = 0; c < opt.connections; ++c) {
    threads.emplace_back([&, c] {
      Connection conn;
      try {
        conn.open(opt.client);
      } catch (const std::exception& e) {
        die(e.what());
      }
      if (c == 0) {
        std::lock_guard lock(mu);
        total.dialect = conn.dialect();
        total.signing_alg = conn.signing() ? int(conn.signing_algorithm()) : -1;
        total.encrypted = conn.encrypting();
      }
      line.wait_for_start();
      try {
        Stats st = FileWriter(conn, opt, next, data).run();
        std::lock_guard lock(mu);
        total.merge(std::move(st));
      } catch (const std::exception& e) {
        die(e.what());
      }
    });
  }
  line.wait_until_ready();
  double cpu0 = tree_cpu_seconds(opt.server_pid);
  auto t0 = Clock::now();
  line.start();
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (opt.server_pid) total.server_cpu_s = tree_cpu_seconds(opt.server_pid) - cpu0;
  report_files(opt, total, secs);
  return total.files == opt.files && total.errors == 0 ? 0 : 1;
}

}  // namespace ringsmb::smbench
