// A data-plane worker: one thread, one reactor (io_uring or epoll), its own
// SO_REUSEPORT listeners, and the connections it accepted. Frames arriving
// in one receive are answered with one send.
//
// Each worker has a bulk worker beside it (no listeners): a connection
// that streams large WRITEs (kMoveToBulkAfter bytes of them in a row)
// moves there with all its state, so that the per-WRITE work (wake-ups,
// the pwrite's hand-off, the response's send: about 100 us per 1 MiB on a
// small VM) no longer delays the small requests of the connections that
// stay. It keeps its address (ConnAddress: the accepting worker); tasks
// posted for it are routed to where it is (transport/conn_routes.hpp).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "io/bulk_receiver.hpp"
#include "io/reactor.hpp"
#include "ipc/ctl_status.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/metrics.hpp"
#include "smb2/engine/server_context.hpp"
#include "transport/conn_reader.hpp"
#include "transport/conn_routes.hpp"
#include "transport/due_tasks.hpp"
#include "transport/frame_assembler.hpp"
#include "transport/send_queue.hpp"
#include "vfs/inotify_source.hpp"

namespace ringsmb::transport {

struct ListenAddress {
  std::string host;  // numeric IPv4 or IPv6 address
  uint16_t port = 445;
};

// Direct TCP transport (MS-SMB2 2.1): 4-byte header, zero byte + 24-bit length.
inline constexpr size_t kMaxFrameSize = 16 * 1024 * 1024;
// A frame that still misses this much is received in place (recv_space):
// below it, the copy out of the reactor's buffer costs less than the extra
// recv() that usually ends in EAGAIN.
inline constexpr size_t kRecvInPlaceMin = 64 * 1024;
// A frame that still misses this much is received by the worker's
// BulkReceiver thread (io/bulk_receiver.hpp), off the worker's thread.
inline constexpr size_t kRecvOffWorkerMin = 256 * 1024;
// Before a session exists a client needs only NEGOTIATE and SESSION_SETUP
// (an NTLMSSP exchange: a few hundred bytes, a few KiB with SPNEGO), so a
// connection that has not logged in may not make us hold a large frame.
inline constexpr size_t kMaxFrameBeforeLogin = 64 * 1024;
// Failed accepts and refused connections are logged at most this often.
inline constexpr int64_t kAcceptLogIntervalS = 10;
// Requests a connection may queue while a login answer is held (throttle).
inline constexpr size_t kMaxHeldRequestBytes = 1024 * 1024;
// Large frames in a row, received off the worker, after which a
// connection moves to the bulk worker: a file copy's stream of WRITEs,
// not a lone large one. Connection ids are unique across workers: each
// worker counts from its index << kConnIdWorkerShift.
inline constexpr uint64_t kMoveToBulkAfter = 4 * 1024 * 1024;
inline constexpr unsigned kConnIdWorkerShift = 40;

class Worker final : public io::ReactorHandler, public smb2::LocalConns {
 public:
  Worker(int index, smb2::ServerContext& ctx);
  ~Worker() override;
  // Creates the reactor and listeners. `force_epoll` skips io_uring.
  bool init(const std::vector<ListenAddress>& addrs, bool force_epoll, std::string& error);
  // Instead of init(): runs on REACTOR (no listeners). The unit tests drive
  // the worker through a fake reactor this way.
  void use_reactor(std::unique_ptr<io::Reactor> reactor) { reactor_ = std::move(reactor); }
  // With use_reactor(): the large frames' rest goes to BULK (a fake in the
  // unit tests, which then call on_off_worker_done).
  void use_bulk_receiver(std::unique_ptr<io::BulkReceiver> bulk) { bulk_ = std::move(bulk); }
  // The receive state of connection CONN_ID (null: gone, or moving).
  const ConnReader* reader(uint64_t conn_id) const {
    auto it = conns_.find(conn_id);
    return it == conns_.end() ? nullptr : &it->second->reader;
  }
  // The SMB state of connection CONN_ID, or null: lets the unit tests put a
  // connection in the state a login would (logged_in), without a login.
  smb2::ConnState* conn_state(uint64_t conn_id) {
    auto it = conns_.find(conn_id);
    return it == conns_.end() ? nullptr : &it->second->state;
  }
  // Before start(): ROUTES says where moved connections live; BULK (a
  // worker without listeners, or null: none) is where this worker's
  // connections that stream large WRITEs move to.
  void set_routes(ConnRoutes* routes, Worker* bulk) {
    routes_ = routes;
    bulk_target_ = bulk;
  }
  // Before start(): every worker by index (the accepting ones first), for
  // the hand-over of a connection that binds to a session of another one.
  void set_peers(const std::vector<std::unique_ptr<Worker>>* peers) { peers_ = peers; }
  // smb2::LocalConns: this worker's connection CONN_ID (null: not here).
  smb2::ConnState* find_conn(uint64_t conn_id) override {
    auto it = conns_.find(conn_id);
    return it == conns_.end() || it->second->closing ? nullptr : &it->second->state;
  }
  void start(std::atomic<bool>& stop);
  void join();
  const char* backend_name() const { return reactor_ ? reactor_->name() : "none"; }
  bool receives_in_place() const { return reactor_ && reactor_->receives_in_place(); }

  void on_accept(int fd) override;
  void on_accept_failed(int listen_fd, int err) override;
  void on_recv(uint64_t conn_id, ByteSpan data) override;
  std::span<uint8_t> recv_space(uint64_t conn_id) override;
  void on_recv_in_place(uint64_t conn_id, size_t n) override;
  void on_recv_stopped(uint64_t conn_id) override;
  void on_recv_end(uint64_t conn_id, int err) override;
  void on_send(uint64_t conn_id, int result) override;
  bool wants_send_report(uint64_t conn_id) override;
  void on_writable(uint64_t conn_id, int result) override;
  void on_wake() override;
  void on_tick() override;  // worker_tick.cpp
  bool wants_tick() override;
  void on_readable(uint64_t token) override;
  void on_looked_again() override;
  int ms_until_due() override;
  void on_due() override;
  // The worker's BulkReceiver finished a job (on this worker's thread: the
  // receiver posts it here).
  void on_off_worker_done(const io::BulkReceiver::Done& d);
  // Thread-safe: runs `task` on this worker's thread for connection
  // `conn_id` (dropped if it is gone), then flushes what it wrote. Oplock
  // and lease breaks and waking CREATEs come this way (smb2/leases/lease.hpp).
  void post(uint64_t conn_id, smb2::ConnTask task);
  // The same at DUE_MS (smb2::monotonic_ms()) unless WANTED is false by
  // then: kept in due_, on this worker's thread (posted there when called
  // from another).
  void post_at(uint64_t conn_id, int64_t due_ms, smb2::ConnTask task, smb2::Wanted wanted = {});

  // Admin requests (transport/admin_endpoint.cpp). post() is thread-safe:
  // TASK runs on this worker's thread at its next wake-up, so reading the
  // connections needs no lock and the request path never takes one.
  void post(std::function<void()> task);
  // On the worker thread: appends this worker's connections, sessions,
  // tree connects and open files (worker_admin.cpp).
  void collect_status(ipc::ServerStatus& out) const;
  // On the worker thread: closes session SESSION_ID if a connection of this
  // worker holds it; false when none does.
  bool close_session(uint64_t session_id);
  // On the worker thread: closes the open whose FileId.Persistent is
  // FILE_ID if a connection of this worker holds it; false when none does.
  bool close_file(uint64_t file_id);
  // The durable opens the server keeps for their clients' reconnect (the
  // whole server's: asked of one worker only), as open files with
  // OPEN_DISCONNECTED.
  void collect_kept_opens(ipc::ServerStatus& out) const;
  // Closes the kept open FILE_ID (any worker may); false when none is kept.
  bool close_kept_file(uint64_t file_id);
  // On the worker thread: disconnects every tree connect to SHARE (any
  // case) of this worker's sessions; how many it ended.
  size_t close_share(const std::string& share);
  // On the worker thread: this worker's counters (smb2/engine/metrics.hpp).
  const smb2::WorkerMetrics& metrics() const { return metrics_; }

 private:
  // Hands the frame buffer to a large WRITE that keeps its payload past the
  // frame (smb2::FrameOwner, smb2/engine/async_write.hpp).
  struct FramerOwner final : smb2::FrameOwner {
    explicit FramerOwner(FrameAssembler& f) : framer(f) {}
    std::shared_ptr<const void> keep(ByteSpan bytes) override {
      if (auto buf = framer.take_buffer(bytes)) return std::move(buf).share();
      return nullptr;
    }
    std::span<uint8_t> writable(ByteSpan bytes) override { return framer.writable(bytes); }
    FrameAssembler& framer;
  };
  struct Conn {
    Conn(size_t max_frame, io::Reactor& reactor, uint64_t conn_id)
        : id(conn_id), framer(max_frame), framer_owner(framer), reader(reactor, conn_id) {
      state.frame_owner = &framer_owner;
    }
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    std::string address;  // counted in ResourceBudget's per-address table
    uint64_t id = 0;
    int fd = -1;
    smb2::ConnState state;
    FrameAssembler framer;
    FramerOwner framer_owner;
    // Who receives its bytes, what waits (transport/conn_reader.hpp).
    ConnReader reader;
    Bytes pending;  // responses the processor appended (with state.out_files), not yet queued
    SendQueue out;  // what the socket has not taken yet, in order
    // The socket was full: the reactor sends the front of `out` (memory)
    // or reports when there is room (file data, for sendfile).
    bool waiting = false;
    // Of those, a queue_send of this many bytes (0: a start_send or a
    // wait for room): the reply the reactor sends with its next wait.
    size_t queued_send = 0;
    iovec iov{};  // of the reactor's send
    msghdr msg{};
    bool closing = false;
    bool recv_ended = false;
    bool moved = false;  // came from another worker (in ConnRoutes)
    // Its held frame (a binding SESSION_SETUP, or a NEGOTIATE) is to run
    // on this worker, where its client's session lives: the connection
    // goes there once it is quiet.
    Worker* moving_to = nullptr;
    int64_t last_activity_s = 0;
    int64_t accepted_s = 0;  // for "login timeout"
    uint64_t bytes_received = 0;
    uint64_t bytes_received_in_place = 0;  // of those, straight into the frame buffer
  };
  // The login throttle's hold: requests wait in held_requests, replies in
  // pending, until release_hold runs (a task of due_).
  static bool held(const Conn& c) { return c.state.hold_replies_until_ms != 0; }
  static int64_t now_s();  // steady clock, seconds (idle and login timeouts)
  void arm_hold(Conn& c);
  void release_hold(uint64_t conn_id);
  FrameAssembler::Next hold_request(Conn& c, ByteSpan frame);
  void run_held_requests(Conn& c);
  Conn* receiving_conn(uint64_t conn_id);
  const char* refusal_reason(const std::string& address);
  void refuse_waiting_clients(int listen_fd);
  void open_spare();
  FrameAssembler::Next process_one(Conn& c, ByteSpan frame);
  void after_framing(Conn& c, FrameAssembler::Result r, ByteSpan fed);
  void count_in_place(Conn& c, size_t n);
  void commit_in_place(Conn& c, size_t n);
  void maybe_receive_off_worker(Conn& c);
  void start_off_worker_receive(Conn& c);
  void receive_next_header_off_worker(Conn& c);
  void end_off_worker_receive(Conn& c);
  using OffWorkerNext = ConnReader::Job;
  void continue_off_worker(Conn& c, OffWorkerNext next);
  bool may_move(const Conn& c) const;
  void move_to_bulk(Conn& c, OffWorkerNext next);
  std::unique_ptr<Conn> leave(Conn& c);
  void arrive(std::unique_ptr<Conn> conn, OffWorkerNext next, bool binding = false);
  void adopt(std::unique_ptr<Conn> conn, OffWorkerNext next);
  Conn* take_in(std::unique_ptr<Conn> conn);
  Worker* serving(const state::ConnAddress& to) const;
  FrameAssembler::Next hand_over(Conn& c, ByteSpan frame);
  bool may_hand_over(const Conn& c) const;
  void maybe_send_over(Conn& c);
  void adopt_channel(std::unique_ptr<Conn> conn);
  void run_off_worker_done(Conn& c, const io::BulkReceiver::Done& d);
  size_t queued_bytes(const Conn& c) const;
  void pause_reading(Conn& c, ByteSpan rest);
  void maybe_resume_reading(Conn& c);
  // worker_tick.cpp
  bool conn_wants_tick(const Conn& c) const;
  void expire_logins(int64_t now);
  bool under_deadtime(const Conn& c) const;
  void expire_idle_connections(int64_t now);
  void flush(Conn& c);
  void send_pending(Conn& c);
  void send_now(Conn& c);
  bool queue_send(Conn& c);
  void wait_for_room(Conn& c);
  void run_conn_task(uint64_t conn_id, const smb2::ConnTask& task);
  void drop(Conn& c, const char* why);
  void maybe_destroy(Conn& c);

  int index_;
  smb2::ServerContext& ctx_;
  std::unique_ptr<io::Reactor> reactor_;
  std::vector<int> listen_fds_;
  // Directory changes for CHANGE_NOTIFY: its inotify descriptor is opened
  // at the first watch and then polled by the reactor. Before conns_: the
  // connections' watches end before it does.
  vfs::InotifySource changes_;
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns_;
  uint64_t next_conn_id_ = 1;
  int64_t last_refusal_log_s_ = 0;  // refused connections, logged once per kAcceptLogIntervalS
  uint64_t refusals_ = 0;            // since then
  int64_t last_accept_log_s_ = 0;    // failed accepts, the same
  uint64_t accept_failures_ = 0;
  // Written only on this worker's thread; read through post() (metrics()).
  smb2::WorkerMetrics metrics_;
  // Closed to accept and refuse waiting clients when accept() fails for
  // want of descriptors (they see the connection closed, not a hang).
  int spare_fd_ = -1;  // open_spare()
  std::thread thread_;
  size_t max_frame_ = kMaxFrameSize;
  std::mutex posted_mu_;
  std::vector<std::function<void()>> posted_;  // guarded by posted_mu_
  // Connections moved here from another worker, not adopted yet.
  struct Arrival {
    std::unique_ptr<Conn> conn;
    OffWorkerNext next;
    bool binding = false;  // a hand-over (hand_over: binding or NEGOTIATE), not a move to the bulk worker
  };
  std::vector<Arrival> arrivals_;  // guarded by posted_mu_
  // The rest of large frames (kRecvOffWorkerMin); null in the unit tests'
  // use_reactor() workers. Stopped first of all in ~Worker: it writes into
  // the connections' frame buffers.
  std::unique_ptr<io::BulkReceiver> bulk_;
  ConnRoutes* routes_ = nullptr;
  unsigned bulk_nice_ = 0;  // added to this worker's threads' nice value (a bulk worker's)
  Worker* bulk_target_ = nullptr;
  const std::vector<std::unique_ptr<Worker>>* peers_ = nullptr;
  DueTasks due_;  // deferred interim responses and held login answers
  // Whether the next tick is needed for the connections (worker_tick.cpp):
  // an event since the last tick may have started something it looks
  // after; the tick itself found a connection that still needs it.
  bool active_since_tick_ = false;
  bool conns_want_tick_ = false;
};

}  // namespace ringsmb::transport
