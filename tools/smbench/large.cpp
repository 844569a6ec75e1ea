// --large: one file written then read sequentially in chunks of up to 1 MiB
// with `depth` requests in flight; --idle-connections: sessions held open
// for memory measurements.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <unordered_set>

#include "common/ntstatus.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace ringsmb::smbench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kOpen = 1, kOverwriteIf = 5;
constexpr uint32_t kReadWrite = 0x0012019F;
constexpr uint64_t kChunk = 1 << 20;

FileId open_file(Connection& conn, const std::string& name, uint32_t disposition) {
  Response r = conn.call(create_request(name, false, disposition, kReadWrite));
  FileId id{};
  if (r.status() != 0 || !parse_create_response(r, id))
    throw std::runtime_error("CREATE " + name + ": " + status_text(r.status()));
  return id;
}

// Keeps `depth` READs or WRITEs in flight until `total` bytes are done.
// Returns the seconds it took.
double sequential(Connection& conn, const FileId& id, uint64_t total, int depth, bool write) {
  uint64_t chunk = std::min<uint64_t>(kChunk, write ? conn.max_write() : conn.max_read());
  Bytes data(write ? chunk : 0, 0x5A);
  std::unordered_set<uint64_t> pending;
  uint64_t offset = 0;
  auto t0 = Clock::now();
  while (offset < total || !pending.empty()) {
    while (offset < total && pending.size() < size_t(depth) &&
           (pending.empty() || conn.credits() >= (chunk + 65535) / 65536)) {
      uint64_t n = std::min(chunk, total - offset);
      Request req = write ? write_request(id, offset, ByteSpan(data).first(n)) : read_request(id, offset, uint32_t(n));
      pending.insert(conn.send(std::move(req)));
      offset += n;
    }
    for (auto& r : conn.receive()) {
      if (r.status() == uint32_t(NtStatus::Pending) || !pending.erase(r.hdr.message_id)) continue;
      if (r.status() != 0) throw std::runtime_error(std::string(write ? "WRITE" : "READ") + ": " + status_text(r.status()));
      if (!write && parse_read_length(r) == 0) throw std::runtime_error("READ returned no data");
    }
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int run_large(const Options& opt) {
  Connection conn;
  conn.open(opt.client);
  std::string name = opt.prefix + "_large.bin";
  std::vector<std::pair<std::string, double>> kv;
  for (uint64_t rep = 0; rep < opt.large_repeat; ++rep) {
    kv.clear();
    for (const char* op : {"write", "read"}) {
      if (opt.large_op != "both" && opt.large_op != op) continue;
      bool write = op[0] == 'w';
      FileId id = open_file(conn, name, write ? kOverwriteIf : kOpen);
      double secs = sequential(conn, id, opt.large, opt.depth, write);
      if (write && opt.large_flush) {
        auto t0 = Clock::now();
        Response r = conn.call(flush_request(id));
        if (r.status() != 0) throw std::runtime_error("FLUSH: " + status_text(r.status()));
        double flush_s = std::chrono::duration<double>(Clock::now() - t0).count();
        secs += flush_s;
        kv.emplace_back("flush_s", flush_s);
      }
      conn.call(close_request(id));
      double mbs = double(opt.large) / secs / 1e6;
      std::printf("%s %llu bytes: %.2f s, %.1f MB/s\n", op, (unsigned long long)opt.large, secs, mbs);
      kv.emplace_back(std::string(op) + "_s", secs);
      kv.emplace_back(std::string(op) + "_mb_s", mbs);
    }
  }
  report_result(kv);
  return 0;
}

int run_idle(const Options& opt) {
  std::vector<std::unique_ptr<Connection>> conns;
  for (int i = 0; i < opt.idle; ++i) {
    conns.push_back(std::make_unique<Connection>());
    conns.back()->open(opt.client);
  }
  std::printf("READY %d\n", opt.idle);
  std::fflush(stdout);
  // Held until stdin closes (bench/run closes it) or a signal ends us.
  char buf[256];
  while (std::fread(buf, 1, sizeof buf, stdin) > 0) {
  }
  return 0;
}

}  // namespace ringsmb::smbench
