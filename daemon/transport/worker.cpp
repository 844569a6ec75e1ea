#include "transport/worker.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "common/log.hpp"
#include "common/log_event.hpp"
#include "common/thread_priority.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "smb2/commands/teardown.hpp"
#include "smb2/engine/processor.hpp"
#include "transport/direct_tcp.hpp"

namespace ringsmb::transport {
int64_t Worker::now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

int make_listener(const ListenAddress& a, std::string& error) {
  sockaddr_storage ss{};
  socklen_t len;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, a.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(a.port);
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, a.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(a.port);
    len = sizeof *v6;
  } else {
    error = "not a numeric address: " + a.host;
    return -1;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 1024) != 0) {
    error = "listen on " + a.host + ":" + std::to_string(a.port) + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

struct Peer {
  std::string host;
  uint16_t port = 0;
};

Peer peer_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
      inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host);
      port = ntohs(sin->sin_port);
    } else if (ss.ss_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
      inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host);
      port = ntohs(sin6->sin6_port);
    }
  }
  return {host, port};
}

}  // namespace

// The reactor's token for the inotify descriptor (the only one watched).
constexpr uint64_t kChangesToken = 1;
constexpr size_t kMaxUnreadChanges = 4 * 1024 * 1024;  // changes kept while the reactor looks again

Worker::Worker(int index, smb2::ServerContext& ctx)
    : index_(index), ctx_(ctx),
      changes_([this](int fd) { return reactor_ && reactor_->watch_readable(fd, kChangesToken); }),
      next_conn_id_((uint64_t(index) << kConnIdWorkerShift) + 1) {}

Worker::~Worker() {
  bulk_.reset();  // before the frame buffers and sockets it fills go
  if (spare_fd_ >= 0) close(spare_fd_);
  for (int fd : listen_fds_) close(fd);
  for (auto& [id, c] : conns_) {
    smb2::teardown_connection(c->state, ctx_);
    close(c->fd);
  }
  for (auto& a : arrivals_) {  // moved here as the server stopped
    smb2::teardown_connection(a.conn->state, ctx_);
    close(a.conn->fd);
  }
}

bool Worker::init(const std::vector<ListenAddress>& addrs, bool force_epoll, std::string& error) {
  // The largest request a client may send: the biggest negotiated payload
  // plus room for headers and a compound's small requests.
  size_t largest = std::max({ctx_.max_read, ctx_.max_write, ctx_.max_trans});
  max_frame_ = std::min(kMaxFrameSize, largest + 64 * 1024);
  io::ReactorOptions opts;
  opts.busy_poll_us = ctx_.config.global.worker_busy_poll_us;
  std::string why;
  if (!force_epoll) reactor_ = io::make_uring_reactor(*this, opts, why);
  if (!reactor_) {
    if (!force_epoll) LOG_WARN("worker %d: io_uring unavailable (%s); using epoll", index_, why.c_str());
    reactor_ = io::make_epoll_reactor(*this, opts);
  }
  if (!reactor_) {
    error = "cannot create an epoll reactor";
    return false;
  }
  auto bulk = std::make_unique<io::ThreadBulkReceiver>(
      [this](const io::BulkReceiver::Done& d) { post([this, d] { on_off_worker_done(d); }); });
  // A bulk worker (no listeners) and its receiver run at a higher nice
  // value ("bulk worker nice"): woken by a small request, a listening
  // worker gets the CPU before them.
  bulk_nice_ = addrs.empty() ? ctx_.config.global.bulk_worker_nice : 0;
  if (bulk->start(bulk_nice_))
    bulk_ = std::move(bulk);
  else
    LOG_WARN("worker %d: no thread for large frames (%s); the worker receives them", index_, strerror(errno));
  open_spare();
  for (const auto& a : addrs) {
    int fd = make_listener(a, error);
    if (fd < 0) return false;
    listen_fds_.push_back(fd);
    reactor_->add_listener(fd);
  }
  return true;
}

void Worker::start(std::atomic<bool>& stop) {
  thread_ = std::thread([this, &stop] {
    // "ringsmbd-w0", or "ringsmbd-bulk0" for a bulk worker (top, perf).
    std::string name = listen_fds_.empty() ? "ringsmbd-bulk" : "ringsmbd-w";
    pthread_setname_np(pthread_self(), (name + std::to_string(index_)).substr(0, 15).c_str());
    lower_this_thread_priority(bulk_nice_);
    reactor_->run(stop);
  });
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

// Why a new connection from ADDRESS cannot be served, or nullptr (then it
// is counted). "max connections" and the descriptor budget count every
// worker's connections; "max connections per address" one address's.
const char* Worker::refusal_reason(const std::string& address) {
  const config::GlobalConfig& g = ctx_.config.global;
  uint32_t before = ctx_.connections.fetch_add(1, std::memory_order_relaxed);
  const char* why = nullptr;
  if (g.max_connections && before >= g.max_connections) {
    why = "max connections reached";
    ++metrics_.refused_max_connections;
  } else if (!ctx_.budget.connection_fits(before)) {
    why = "out of descriptors for clients";
    ++metrics_.refused_descriptors;
  } else if (!ctx_.budget.add_connection_from(address, g.max_connections_per_address)) {
    why = "max connections per address reached";
    ++metrics_.refused_per_address;
  }
  if (why) ctx_.connections.fetch_sub(1, std::memory_order_relaxed);
  return why;
}

void Worker::on_accept(int fd) {
  Peer peer = peer_of(fd);
  std::string address = std::move(peer.host);
  if (const char* why = refusal_reason(address)) {
    // The socket is closed at once, before a byte is read: the client sees
    // the connection closed, as ksmbd does. Logged once per interval: a
    // client retrying in a loop must not flood the log.
    ++refusals_;
    int64_t now = now_s();
    if (now - last_refusal_log_s_ >= kAcceptLogIntervalS) {
      log_event(LogLevel::Warn, "connection_refused", {{"client", address}, {"limit", why}},
                "refusing connections (%s): %llu refused, last from %s", why, (unsigned long long)refusals_,
                address.c_str());
      last_refusal_log_s_ = now;
      refusals_ = 0;
    }
    close(fd);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto c = std::make_unique<Conn>(std::min(max_frame_, kMaxFrameBeforeLogin), *reactor_, next_conn_id_++);
  c->fd = fd;
  c->address = address;
  c->state.client_address = std::move(address);
  c->state.client_port = peer.port;
  c->state.address = {uint32_t(index_), c->id};
  c->state.transport_sends_files = true;  // send_queued() sends smb2::FileSegments
  c->state.framing = &direct_tcp_framing();
  c->state.changes = &changes_;
  c->state.metrics = &metrics_;
  c->state.local_conns = this;
  ++metrics_.connections_accepted;
  active_since_tick_ = true;  // its login timeout
  c->last_activity_s = c->accepted_s = now_s();
  uint64_t id = c->id;
  conns_.emplace(id, std::move(c));
  reactor_->start_recv(id, fd);
}

// The reactor rests the listener (kAcceptRetryMs) before it accepts again.
void Worker::on_accept_failed(int listen_fd, int err) {
  ++accept_failures_;
  int64_t now = now_s();
  if (now - last_accept_log_s_ >= kAcceptLogIntervalS) {
    LOG_WARN("accept: %s (%llu failures in %lld s); new clients are refused until descriptors are free",
             strerror(err), (unsigned long long)accept_failures_, (long long)kAcceptLogIntervalS);
    last_accept_log_s_ = now;
    accept_failures_ = 0;
  }
  if (err == EMFILE || err == ENFILE) refuse_waiting_clients(listen_fd);
}

void Worker::open_spare() { spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC); }

// Out of descriptors, the clients in the listen backlog would wait until
// they time out: the spare descriptor lets each be accepted and closed.
// Another thread (a worker's armed accept, in the kernel) may take the
// descriptor freed meanwhile: then the spare is opened again at the next
// failure, once one is free.
void Worker::refuse_waiting_clients(int listen_fd) {
  if (spare_fd_ < 0) open_spare();
  if (spare_fd_ < 0) return;
  close(spare_fd_);
  for (int i = 0; i < 256; ++i) {  // what is waiting now, not forever
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) break;
    close(fd);
    ++metrics_.refused_descriptors;
  }
  open_spare();
}

Worker::Conn* Worker::receiving_conn(uint64_t conn_id) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end() || it->second->closing) return nullptr;
  return it->second.get();
}

void Worker::on_recv(uint64_t conn_id, ByteSpan data) {
  Conn* c = receiving_conn(conn_id);
  if (!c) return;
  active_since_tick_ = true;
  c->last_activity_s = now_s();
  c->bytes_received += data.size();
  metrics_.bytes_received += data.size();
  if (c->reader.paused()) {  // received before the reactor's pause took effect
    c->reader.backlog.insert(c->reader.backlog.end(), data.begin(), data.end());
    return;
  }
  after_framing(*c, c->framer.feed(data, [&](ByteSpan frame) { return process_one(*c, frame); }), data);
  if (!c->closing) flush(*c);
  if (!c->closing) maybe_receive_off_worker(*c);
  if (c->moving_to) maybe_send_over(*c);
}

std::span<uint8_t> Worker::recv_space(uint64_t conn_id) {
  Conn* c = receiving_conn(conn_id);
  if (!c || !c->reader.reading()) return {};
  std::span<uint8_t> space = c->framer.recv_space(kRecvInPlaceMin);
  // Large WRITEs come in a stream: reading the next header ourselves (a
  // 4-byte recv, usually answered from what is queued) lets its payload go
  // in place too, instead of into the reactor's buffers.
  if (space.empty() && c->reader.last_frame_large) space = c->framer.header_space();
  return space;
}

void Worker::on_recv_in_place(uint64_t conn_id, size_t n) {
  Conn* c = receiving_conn(conn_id);
  if (!c) return;
  active_since_tick_ = true;
  count_in_place(*c, n);
  commit_in_place(*c, n);
  if (!c->closing) flush(*c);
  if (!c->closing) maybe_receive_off_worker(*c);
  if (c->moving_to) maybe_send_over(*c);
}

FrameAssembler::Next Worker::process_one(Conn& c, ByteSpan frame) {
  LogClientScope about(c.state.client_address);  // the request path adds user and share
  c.reader.last_frame_large = frame.size() >= kRecvInPlaceMin;
  if (held(c) || c.reader.waits_for_writes) return hold_request(c, frame);
  // READ data still to go out by sendfile is the file as it is when it is
  // sent: a request after the READ that may change it waits until the
  // data is read into memory (rare: pipelined large READs and a WRITE).
  if ((c.out.has_file_data() || !c.state.out_files.empty()) && smb2::may_change_file_data(frame)) {
    c.out.copy_file_data();
    copy_file_data(c.state.out_files);
  }
  smb2::FrameResult fr;
  try {
    fr = smb2::process_frame(c.state, ctx_, frame, c.pending);
  } catch (const std::exception& e) {
    LOG_ERROR("%s: internal error: %s", c.state.client_address.c_str(), e.what());
    fr = smb2::FrameResult::Drop;
  }
  if (held(c)) arm_hold(c);
  if (fr == smb2::FrameResult::Move) return hand_over(c, frame);
  if (fr == smb2::FrameResult::Hold) {
    c.reader.waits_for_writes = true;
    return hold_request(c, frame);
  }
  if (fr != smb2::FrameResult::Ok) return FrameAssembler::Next::Stop;
  if (c.state.logged_in && c.framer.max_frame() < max_frame_) c.framer.set_max_frame(max_frame_);
  // Bounded per connection: what its client has not read of our replies.
  // Past half the bound its credits stop growing; past the bound its
  // requests stay unread (in the socket, then in the client) until half
  // has gone out.
  size_t queued = queued_bytes(c);
  size_t limit = ctx_.config.global.max_send_queue_bytes;
  c.state.credits_throttled = queued > limit / 2;
  return queued > limit ? FrameAssembler::Next::Pause : FrameAssembler::Next::Continue;
}

size_t Worker::queued_bytes(const Conn& c) const {
  size_t n = c.out.queued_bytes() + c.pending.size();
  for (const auto& f : c.state.out_files) n += f.length;
  return n;
}

// FED is what the framer was given; when it paused, the part it did not
// take is kept for later.
void Worker::after_framing(Conn& c, FrameAssembler::Result r, ByteSpan fed) {
  switch (r) {
    case FrameAssembler::Result::Ok: break;
    case FrameAssembler::Result::Paused: pause_reading(c, fed.subspan(c.framer.consumed())); break;
    case FrameAssembler::Result::BadMessageType: drop(c, "not a session message"); break;
    case FrameAssembler::Result::TooLarge:
      drop(c, c.state.logged_in ? "frame too large" : "frame too large before login");
      break;
    case FrameAssembler::Result::Stop: drop(c, "protocol error"); break;
  }
}

// While the socket is full, replies gather in `pending` (one buffer that
// keeps its capacity, so pipelined 1 MiB replies cost no fresh memory each)
// and are queued once what was queued has gone out.
void Worker::flush(Conn& c) {
  send_pending(c);
  maybe_resume_reading(c);  // the socket may have taken it all
}

void Worker::send_pending(Conn& c) {
  if (c.waiting || c.pending.empty() || held(c) || c.state.breaks_unsent) return;  // breaks: on their way elsewhere
  metrics_.bytes_sent += c.pending.size();
  for (const auto& f : c.state.out_files) metrics_.bytes_sent += f.length;
  c.out.append(c.pending, c.state.out_files);
  send_now(c);
}

// Replies almost always fit the socket buffer. With io_uring they go out
// in the io_uring_enter that waits for the next requests (queue_send): no
// system call of their own, and no completion to reap when all was sent.
// Otherwise (epoll, READ data sent from the file, and a break another
// connection's reply waits for: send_at_once) they go to the kernel inline:
// send, or sendfile. Only when the socket is full does the reactor wait for room.
void Worker::send_now(Conn& c) {
  if (!std::exchange(c.state.send_at_once, false) && queue_send(c)) return;
  switch (send_queued(c.out, c.fd)) {
    case SendResult::Done: break;
    case SendResult::WouldBlock: wait_for_room(c); break;
    case SendResult::Failed: drop(c, "send failed"); break;
  }
}

// Bytes in memory with nothing of a file behind them (sendfile's reply
// headers go with MSG_MORE, inline).
bool Worker::queue_send(Conn& c) {
  if (c.out.empty()) return false;
  SendQueue::Piece p = c.out.front();
  if (p.kind != SendQueue::Piece::Kind::Memory || p.file_follows) return false;
  if (!reactor_->queue_send(c.id, c.fd, p.data, p.size)) return false;
  c.waiting = true;
  c.queued_send = p.size;
  return true;
}

// Bytes in memory go to the reactor's send: io_uring retries it in the
// kernel as room appears, with no wake-up of this thread per retry (waiting
// for POLLOUT and sending again cost about a quarter more CPU per GiB on
// signed reads). File data waits for room and goes out with sendfile again.
void Worker::wait_for_room(Conn& c) {
  SendQueue::Piece p = c.out.front();
  c.waiting = true;
  if (p.kind == SendQueue::Piece::Kind::File) return reactor_->wait_writable(c.id, c.fd);
  c.iov = {const_cast<uint8_t*>(p.data), p.size};  // stays valid: the queue's front is not touched meanwhile
  c.msg = {};
  c.msg.msg_iov = &c.iov;
  c.msg.msg_iovlen = 1;
  reactor_->start_send(c.id, c.fd, &c.msg);
}

void Worker::on_send(uint64_t conn_id, int result) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) return;
  Conn& c = *it->second;
  c.waiting = false;
  const size_t queued = std::exchange(c.queued_send, 0);
  if (result > 0) c.out.advance(size_t(result));
  if (c.closing) return maybe_destroy(c);
  // A queued send never waits for room: -EAGAIN says the socket was full.
  if (queued && result == -EAGAIN) result = 0;
  if (result < 0) return drop(c, "send failed");
  // The socket was full a moment ago: more bytes in memory go straight to
  // the reactor again (an inline send would take only a sliver, and the
  // reply would leave in more, smaller pieces); file data tries sendfile.
  // After a queued send that took everything, what follows goes as usual.
  const bool socket_full = !queued || size_t(result) < queued;
  if (socket_full && !c.out.empty() && c.out.front().kind == SendQueue::Piece::Kind::Memory) {
    wait_for_room(c);
    return maybe_resume_reading(c);
  }
  send_now(c);
  flush(c);
  if (c.moving_to) maybe_send_over(c);
}

// A queued send that took everything need not be reported before the
// reactor waits when it is all the connection has to do: nothing more to
// send after it, reading as usual, no hand-over waiting for it to be out.
bool Worker::wants_send_report(uint64_t conn_id) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) return true;
  const Conn& c = *it->second;
  const bool only_this = c.pending.empty() && c.state.out_files.empty() && c.out.queued_bytes() == c.queued_send;
  return !only_this || c.closing || !c.reader.reading() || c.reader.waits_for_writes || c.moving_to;
}

void Worker::on_writable(uint64_t conn_id, int) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) return;
  Conn& c = *it->second;
  c.waiting = false;
  if (c.closing) return maybe_destroy(c);
  send_now(c);  // an error the wait reported shows up here as a failed send
  flush(c);
}

void Worker::on_recv_end(uint64_t conn_id, int) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) return;
  Conn& c = *it->second;
  LogClientScope about(c.state.client_address);
  LOG_DEBUG("%s: %llu of %llu bytes received in place", c.state.client_address.c_str(),
            (unsigned long long)c.bytes_received_in_place, (unsigned long long)c.bytes_received);
  c.recv_ended = true;
  c.closing = true;
  // A peer that stopped sending may never read either: end the wait for
  // room, so the connection is freed.
  if (c.waiting) shutdown(c.fd, SHUT_RDWR);
  maybe_destroy(c);
}

void Worker::drop(Conn& c, const char* why) {
  if (c.closing) return;
  LogClientScope about(c.state.client_address);
  LOG_INFO("%s: closing connection (%s)", c.state.client_address.c_str(), why);
  c.closing = true;
  shutdown(c.fd, SHUT_RDWR);  // ends the pending recv; the connection is freed after it
  // ...which must be armed to see that end. Receiving off the worker: the
  // receiver sees the end and the reactor resumes after it
  // (end_off_worker_receive).
  c.reader.unpause_to_close();
}

void Worker::maybe_destroy(Conn& c) {
  if (!c.recv_ended || c.waiting || c.reader.receiving_off_worker()) return;
  if (c.moved) routes_->erase(c.id);
  smb2::teardown_connection(c.state, ctx_);
  close(c.fd);
  ctx_.budget.remove_connection_from(c.address);
  conns_.erase(c.id);
  ctx_.connections.fetch_sub(1, std::memory_order_relaxed);
}

void Worker::post(std::function<void()> task) {
  {
    std::lock_guard lock(posted_mu_);
    posted_.push_back(std::move(task));
  }
  reactor_->wake();
}

void Worker::post(uint64_t conn_id, smb2::ConnTask task) {
  post([this, conn_id, task = std::move(task)] { run_conn_task(conn_id, task); });
}

void Worker::run_conn_task(uint64_t conn_id, const smb2::ConnTask& task) {
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) {
    // Moved to a bulk worker after the task was routed here: passed on.
    Worker* now = routes_ ? routes_->moved_to(conn_id) : nullptr;
    if (now && now != this) now->post(conn_id, task);
    return;
  }
  if (it->second->closing) return;
  Conn& c = *it->second;
  LogClientScope about(c.state.client_address);
  try {
    task(c.state, c.pending);
  } catch (const std::exception& e) {
    LOG_ERROR("%s: internal error: %s", c.state.client_address.c_str(), e.what());
    drop(c, "internal error");
    return;
  }
  // A task may end a hold early (smb2::end_previous_session).
  if (held(c) && smb2::monotonic_ms() >= c.state.hold_replies_until_ms) return release_hold(conn_id);
  // The last of the connection's large WRITEs is done: what waited runs.
  if (c.reader.waits_for_writes && !c.state.writes_in_flight && !held(c)) return run_held_requests(c);
  flush(c);
  if (c.moving_to) maybe_send_over(c);  // its replies held for breaks (breaks_unsent) are out now
}

void Worker::on_wake() {
  active_since_tick_ = true;
  std::vector<std::function<void()>> tasks;
  std::vector<Arrival> arrivals;
  {
    std::lock_guard lock(posted_mu_);
    tasks.swap(posted_);
    arrivals.swap(arrivals_);
  }
  for (auto& a : arrivals) a.binding ? adopt_channel(std::move(a.conn)) : adopt(std::move(a.conn), a.next);
  for (auto& t : tasks) t();
}

// Changes to watched directories: the watches complete their waiting
// CHANGE_NOTIFYs through posted tasks (smb2/notify/notify_watch.cpp), handed
// out once the requests that arrived before the read are in (look_again):
// a CHANGE_NOTIFY sent before a change gets it (smb2.notify.mask-change).
void Worker::on_readable(uint64_t token) {
  if (token != kChangesToken) return;
  active_since_tick_ = true;
  try {
    changes_.read_ready();
    if (changes_.read_bytes() < kMaxUnreadChanges) return reactor_->look_again();
    changes_.deliver_read();
  } catch (const std::exception& e) {  // out of memory: the watchers miss changes, the worker keeps serving
    LOG_ERROR("worker %d: directory changes: %s", index_, e.what());
  }
}

void Worker::on_looked_again() {
  try {
    changes_.deliver_read();
  } catch (const std::exception& e) {
    LOG_ERROR("worker %d: directory changes: %s", index_, e.what());
  }
}

}  // namespace ringsmb::transport
