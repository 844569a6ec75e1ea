#include "transport/send_queue.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ringsmb::transport {
namespace {

// What a segment whose file shrank sends instead of the missing data.
constexpr size_t kZeroBytes = 64 * 1024;
const uint8_t kZeros[kZeroBytes] = {};

// sendfile() moves at most this much per call (Linux's MAX_RW_COUNT).
constexpr size_t kMaxSendfile = 0x7ffff000;

}  // namespace

void SendQueue::append(Bytes& bytes, std::vector<smb2::FileSegment>& files) {
  Chunk c;
  c.bytes.swap(bytes);
  for (auto& f : files)
    if (f.length) c.files.push_back(std::move(f));
  files.clear();
  if (!spares_.empty()) {
    bytes.swap(spares_.back());
    spares_.pop_back();
  }
  queued_ += c.bytes.size();
  for (const auto& f : c.files) {
    queued_ += f.length;
    if (!f.data) ++file_segments_;
  }
  if (c.done()) return;
  if (head_ > 0 && head_ * 2 >= chunks_.size()) {  // the front's buffer moves with it: its data does not
    chunks_.erase(chunks_.begin(), chunks_.begin() + ptrdiff_t(head_));
    head_ = 0;
  }
  chunks_.push_back(std::move(c));
}

SendQueue::Piece SendQueue::front() const {
  const Chunk& c = chunks_[head_];
  Piece p;
  if (c.at_file()) {
    const smb2::FileSegment& f = c.files[c.next_file];
    uint64_t left = f.length - c.file_sent;
    if (f.data) {
      p.data = f.bytes().data() + c.file_sent;
      p.size = size_t(left);
    } else if (c.file_short) {
      p.data = kZeros;
      p.size = size_t(std::min<uint64_t>(left, kZeroBytes));
    } else {
      p.kind = Piece::Kind::File;
      p.fd = f.fd.get();
      p.file_offset = f.offset + c.file_sent;
      p.size = size_t(left);
    }
    return p;
  }
  bool file_next = c.next_file < c.files.size();
  size_t end = file_next ? c.files[c.next_file].at : c.bytes.size();
  p.data = c.bytes.data() + c.pos;
  p.size = end - c.pos;
  p.file_follows = file_next;
  return p;
}

void SendQueue::advance(size_t n) {
  queued_ -= n;
  Chunk& c = chunks_[head_];
  if (c.at_file()) {
    smb2::FileSegment& f = c.files[c.next_file];
    c.file_sent += n;
    if (c.file_sent >= f.length) {
      if (!f.data) --file_segments_;
      f.fd.reset();  // sent: the file need not stay open until the whole chunk is
      f.data = LargeBuffer();
      ++c.next_file;
      c.file_sent = 0;
      c.file_short = false;
    }
  } else {
    c.pos += n;
  }
  pop_done();
}

void SendQueue::file_ended() { chunks_[head_].file_short = true; }

namespace {

// The whole segment (the part already sent is read again: simpler, and
// only the front segment has one). Zeros past the end of a file that
// shrank, and after an error (sendfile would have met it too).
void read_segment(smb2::FileSegment& f, bool file_short) {
  uint8_t* to = f.allocate_data();
  size_t got = 0;
  while (got < f.length && !file_short) {
    ssize_t n = pread(f.fd.get(), to + got, f.length - got, off_t(f.offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  std::memset(to + got, 0, f.length - got);
  f.fd.reset();
  f.charge = {};
}

}  // namespace

void SendQueue::copy_file_data() {
  for (size_t k = head_; k < chunks_.size(); ++k) {
    Chunk& c = chunks_[k];
    for (size_t i = c.next_file; i < c.files.size(); ++i) {
      if (c.files[i].data) continue;
      // Once a shrunken file's segment sent zeros, the rest stays zeros.
      read_segment(c.files[i], i == c.next_file && c.file_short);
      --file_segments_;
    }
  }
}

void copy_file_data(std::vector<smb2::FileSegment>& files) {
  for (smb2::FileSegment& f : files)
    if (!f.data && f.length) read_segment(f, false);
}

void SendQueue::pop_done() {
  while (head_ < chunks_.size() && chunks_[head_].done()) {
    Chunk& c = chunks_[head_++];
    if (spares_.size() < kMaxSpares) {
      spares_.push_back(std::move(c.bytes));
      spares_.back().clear();
    } else {
      Bytes().swap(c.bytes);  // its buffer goes now (its files went as they were sent)
    }
  }
  if (head_ < chunks_.size()) return;
  chunks_.clear();
  head_ = 0;
  if (chunks_.capacity() > kKeptChunks) chunks_.shrink_to_fit();  // a burst's worth is not kept by an idle connection
}

SendResult send_queued(SendQueue& q, int sock) {
  while (!q.empty()) {
    SendQueue::Piece p = q.front();
    ssize_t n;
    if (p.kind == SendQueue::Piece::Kind::File) {
      off_t off = off_t(p.file_offset);
      n = sendfile(sock, p.fd, &off, std::min(p.size, kMaxSendfile));
      if (n == 0) {  // end of file before the segment's end: it shrank
        q.file_ended();
        continue;
      }
    } else {
      // MSG_MORE before file data: the reply header waits for the data
      // instead of leaving in a packet of its own (TCP_NODELAY is on).
      int flags = MSG_DONTWAIT | MSG_NOSIGNAL | (p.file_follows ? MSG_MORE : 0);
      n = ::send(sock, p.data, p.size, flags);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return SendResult::WouldBlock;
      return SendResult::Failed;
    }
    q.advance(size_t(n));
  }
  return SendResult::Done;
}

}  // namespace ringsmb::transport
