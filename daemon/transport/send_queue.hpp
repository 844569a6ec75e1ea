// What a connection still has to send, in order: reply buffers and, inside
// them, file data that goes out from the page cache with sendfile()
// (smb2::FileSegment, the data of large unsigned READ replies) or from a
// buffer of their own (the data of large signed or encrypted ones). The queue
// only keeps the books; send_queued() does the syscalls.
#pragma once

#include <cstdint>
#include <vector>

#include "common/bytes.hpp"
#include "smb2/engine/conn_state.hpp"

namespace ringsmb::transport {

class SendQueue {
 public:
  // The next thing to send: bytes in memory, or bytes of a file.
  struct Piece {
    enum class Kind { Memory, File } kind = Kind::Memory;
    const uint8_t* data = nullptr;  // Memory
    size_t size = 0;
    int fd = -1;                    // File
    uint64_t file_offset = 0;
    bool file_follows = false;  // Memory right before a File: worth MSG_MORE
  };

  // Queues `bytes` with the file segments positioned in it (each `at` is a
  // position in `bytes`, in order). Takes both; `bytes` gets back an empty
  // buffer with the capacity of one already sent, so replies reuse memory
  // (a fresh 1 MiB reply buffer is a fresh mmap: page faults on every page).
  void append(Bytes& bytes, std::vector<smb2::FileSegment>& files);
  bool empty() const { return head_ == chunks_.size(); }
  // Bytes still to go out, file data included (what the client has not
  // taken yet: the bound of "max send queue size").
  size_t queued_bytes() const { return queued_; }
  // Never empty-sized; only valid while !empty().
  Piece front() const;
  // `n` bytes of front() went out (0 < n <= front().size).
  void advance(size_t n);
  // The file of front() ended before the segment did (it shrank after its
  // DataLength was sent): the rest of the segment goes out as zeros, so the
  // framing stays right.
  void file_ended();
  // Reads into memory the file data not yet sent (copy_file_data), so a
  // request that may change the files runs after the READs before it have
  // their data. The front's memory is not moved: the reactor may be
  // sending it.
  void copy_file_data();
  bool has_file_data() const { return file_segments_ != 0; }

 private:
  struct Chunk {
    Bytes bytes;
    std::vector<smb2::FileSegment> files;
    size_t pos = 0;            // bytes sent of `bytes`
    size_t next_file = 0;      // first segment not fully sent
    uint64_t file_sent = 0;    // of files[next_file]
    bool file_short = false;   // files[next_file] ended early: zeros from here
    bool at_file() const { return next_file < files.size() && files[next_file].at == pos; }
    bool done() const { return pos == bytes.size() && next_file == files.size(); }
  };
  void pop_done();

  // The queue is chunks_[head_, size()); the sent chunks before head_ are
  // emptied and dropped once all are sent (or, while the queue never
  // empties, once they are the larger part). Not a deque: sending and
  // queueing one reply at a time, a deque frees and allocates a block
  // every few replies.
  std::vector<Chunk> chunks_;
  size_t head_ = 0;
  static constexpr size_t kKeptChunks = 16;  // the capacity an emptied queue keeps
  size_t queued_ = 0;
  size_t file_segments_ = 0;  // not fully sent and not copied
  // Sent chunks' buffers, handed back by append(): with the worker's
  // pending buffer, two buffers take turns, as pending and in-flight did.
  static constexpr size_t kMaxSpares = 1;
  std::vector<Bytes> spares_;
};

// Reads the data of each segment of FILES into its `data` (the rest of the
// segment beyond the file's end stays zeros, as a sendfile of a file that
// shrank would send) and releases its descriptor. Unsigned READ data goes
// out by sendfile after the whole batch of requests it came in (and later,
// when the socket is full); a WRITE or truncation behind it in the same
// connection must not change what the READ returns.
void copy_file_data(std::vector<smb2::FileSegment>& files);

enum class SendResult { Done, WouldBlock, Failed };

// Sends from the front of `q` on non-blocking socket `sock` until the queue
// is empty (Done), the socket is full (WouldBlock: wait until writable and
// call again) or a send fails (Failed, errno set).
SendResult send_queued(SendQueue& q, int sock);

}  // namespace ringsmb::transport
