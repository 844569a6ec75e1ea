// --large: one file written then read sequentially in chunks of up to 1 MiB
// with `depth` requests in flight (on each channel with --channels);
// --idle-connections: sessions held open for memory measurements.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_set>

#include "common/ntstatus.hpp"
#include "crypto/primitives.hpp"
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

// The file's chunks, handed out in order to the channels that move them.
struct Cursor {
  std::atomic<uint64_t> next{0};
  uint64_t total = 0;
  uint64_t chunk = 0;
  // The next chunk's offset, or nullopt when all are taken.
  std::optional<uint64_t> take() {
    uint64_t at = next.fetch_add(chunk);
    return at < total ? std::optional<uint64_t>(at) : std::nullopt;
  }
};

// Keeps `depth` READs or WRITEs in flight on CONN while CURSOR has chunks.
void move_chunks(Connection& conn, const FileId& id, Cursor& cursor, int depth, bool write) {
  Bytes data(write ? cursor.chunk : 0, 0x5A);
  std::unordered_set<uint64_t> pending;
  bool more = true;
  while (more || !pending.empty()) {
    while (more && pending.size() < size_t(depth) &&
           (pending.empty() || conn.credits() >= (cursor.chunk + 65535) / 65536)) {
      std::optional<uint64_t> offset = cursor.take();
      if (!(more = offset.has_value())) break;
      uint64_t n = std::min(cursor.chunk, cursor.total - *offset);
      Request req = write ? write_request(id, *offset, ByteSpan(data).first(n)) : read_request(id, *offset, uint32_t(n));
      pending.insert(conn.send(std::move(req)));
    }
    if (pending.empty()) break;
    for (auto& r : conn.receive()) {
      if (r.status() == uint32_t(NtStatus::Pending) || !pending.erase(r.hdr.message_id)) continue;
      if (r.status() != 0) throw std::runtime_error(std::string(write ? "WRITE" : "READ") + ": " + status_text(r.status()));
      if (!write && parse_read_length(r) == 0) throw std::runtime_error("READ returned no data");
    }
  }
}

// `total` bytes READ or WRITTEN in order over every channel, `depth`
// requests in flight on each (one thread per channel after the first).
// Returns the seconds it took.
double sequential(std::vector<std::unique_ptr<Connection>>& channels, const FileId& id, uint64_t total, int depth,
                  bool write) {
  Cursor cursor;
  cursor.total = total;
  cursor.chunk = kChunk;
  for (const auto& c : channels) cursor.chunk = std::min<uint64_t>(cursor.chunk, write ? c->max_write() : c->max_read());
  std::vector<std::exception_ptr> errors(channels.size());
  auto run = [&](size_t i) {
    try {
      move_chunks(*channels[i], id, cursor, depth, write);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  auto t0 = Clock::now();
  std::vector<std::thread> others;
  for (size_t i = 1; i < channels.size(); ++i) others.emplace_back(run, i);
  run(0);
  for (auto& t : others) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return secs;
}

// The run's connections: the first logs in; with --channels N the N-1
// others bind to its session (one client: one ClientGuid).
std::vector<std::unique_ptr<Connection>> open_channels(const Options& opt) {
  ClientOptions client = opt.client;
  if (opt.channels > 1) {
    client.multichannel = true;
    client.force_signing = true;  // the bound channels sign; the first one too, alike
    crypto::random_bytes(client.client_guid);
  }
  std::vector<std::unique_ptr<Connection>> out;
  out.push_back(std::make_unique<Connection>());
  out.back()->open(client);
  for (int i = 1; i < opt.channels; ++i) {
    out.push_back(std::make_unique<Connection>());
    out.back()->bind(*out.front(), client);
  }
  return out;
}

}  // namespace

int run_large(const Options& opt) {
  std::vector<std::unique_ptr<Connection>> channels = open_channels(opt);
  Connection& conn = *channels.front();
  std::string name = opt.prefix + "_large.bin";
  std::vector<std::pair<std::string, double>> kv;
  for (uint64_t rep = 0; rep < opt.large_repeat; ++rep) {
    kv.clear();
    for (const char* op : {"write", "read"}) {
      if (opt.large_op != "both" && opt.large_op != op) continue;
      bool write = op[0] == 'w';
      FileId id = open_file(conn, name, write ? kOverwriteIf : kOpen);
      double secs = sequential(channels, id, opt.large, opt.depth, write);
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
      std::printf("%s %llu bytes over %d channel(s): %.2f s, %.1f MB/s\n", op, (unsigned long long)opt.large,
                  opt.channels, secs, mbs);
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
