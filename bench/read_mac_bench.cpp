// read_mac_bench: whether a signed READ's MAC costs less over data still in
// the cache. A signed READ reads up to 1 MiB from the page cache into a
// buffer (pread's copy) and then passes AES-128-GMAC over the header and
// the whole buffer (smb2/commands/read.cpp, ChainProcessor::seal_previous).
// The other way would read in pieces and MAC each piece right after its
// pread, while it is in the L1/L2 cache. Both run over the same file in one
// process, alternating round by round (the order flips each round); each
// row is the median CPU time per GiB of the rounds with their range.
//
//   build/bench/read_mac_bench FILE [--rounds N] [--pieces 32,64,128,256]
//
// FILE should be in the page cache (`cat FILE >/dev/null` first) and at
// least 64 MiB; its size is read in whole MiB per pass, four passes a round.
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kMessage = 1 << 20;  // one READ's data
constexpr size_t kHeader = 80;        // SMB2 header and READ response body
constexpr int kPassesPerRound = 4;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "read_mac_bench: %s\n", what);
  std::exit(1);
}

double cpu_seconds() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return double(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + double(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

struct Gmac {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_CIPHER* gcm = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
  unsigned char key[16] = {1, 2, 3};
  unsigned char nonce[12] = {4, 5, 6};
  Gmac() {
    if (!ctx || !gcm || EVP_EncryptInit_ex2(ctx, gcm, key, nonce, nullptr) != 1) fail("OpenSSL has no AES-128-GCM");
  }
  ~Gmac() {
    EVP_CIPHER_free(gcm);
    EVP_CIPHER_CTX_free(ctx);
  }
  void start() {
    if (EVP_EncryptInit_ex2(ctx, nullptr, nullptr, nonce, nullptr) != 1) fail("GCM init");
  }
  void add(const unsigned char* p, size_t n) {
    int len;
    if (EVP_EncryptUpdate(ctx, nullptr, &len, p, int(n)) != 1) fail("GCM update");
  }
  void finish() {
    int len;
    unsigned char tag[16];
    if (EVP_EncryptFinal_ex(ctx, nullptr, &len) != 1 || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) != 1)
      fail("GCM final");
  }
};

void read_at(int fd, unsigned char* to, size_t n, off_t at) {
  if (pread(fd, to, n, at) != ssize_t(n)) fail("short pread");
}

// CPU seconds per GiB of one round: PIECE 0 is the server's way (one pread
// of 1 MiB, then one MAC pass), else pread and MAC piece by piece.
double round_cost(int fd, size_t messages, size_t piece, std::vector<unsigned char>& buf, Gmac& mac) {
  double start = cpu_seconds();
  for (int pass = 0; pass < kPassesPerRound; ++pass)
    for (size_t m = 0; m < messages; ++m) {
      off_t at = off_t(m * kMessage);
      unsigned char* data = buf.data() + kHeader;
      mac.start();
      mac.add(buf.data(), kHeader);
      if (piece == 0) {
        read_at(fd, data, kMessage, at);
        mac.add(data, kMessage);
      } else {
        for (size_t p = 0; p < kMessage; p += piece) {
          read_at(fd, data + p, piece, at + off_t(p));
          mac.add(data + p, piece);
        }
      }
      mac.finish();
    }
  double gib = double(messages * kMessage * kPassesPerRound) / double(1 << 30);
  return (cpu_seconds() - start) / gib;
}

std::vector<size_t> parse_pieces(const char* list) {
  std::vector<size_t> out{0};
  for (const char* p = list; *p;) {
    char* end;
    unsigned long kib = std::strtoul(p, &end, 10);
    if (end == p || kib == 0 || kMessage % (kib * 1024) != 0) fail("--pieces: KiB that divide 1024");
    out.push_back(kib * 1024);
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') fail("--pieces: a comma-separated list");
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) fail("usage: read_mac_bench FILE [--rounds N] [--pieces 32,64,128,256]");
  int rounds = 7;
  std::vector<size_t> pieces = parse_pieces("32,64,128,256");
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--pieces")) pieces = parse_pieces(argv[i + 1]);
    else fail("unknown option");
  }
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open FILE");
  size_t messages = size_t(lseek(fd, 0, SEEK_END)) / kMessage;
  if (messages < 64) fail("FILE must hold at least 64 MiB");
  std::vector<unsigned char> buf(kHeader + kMessage);
  Gmac mac;
  std::vector<std::vector<double>> costs(pieces.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < pieces.size(); ++k) {
      size_t i = r % 2 ? pieces.size() - 1 - k : k;
      costs[i].push_back(round_cost(fd, messages, pieces[i], buf, mac));
    }
  std::printf("| pread, then AES-128-GMAC | CPU s/GiB, median (min-max) of %d rounds |\n|---|---:|\n", rounds);
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::vector<double>& c = costs[i];
    std::sort(c.begin(), c.end());
    std::string what = pieces[i] ? "in " + std::to_string(pieces[i] / 1024) + " KiB pieces" : "1 MiB, then one pass";
    std::printf("| %s | %.3f (%.3f-%.3f) |\n", what.c_str(), c[c.size() / 2], c.front(), c.back());
  }
  close(fd);
  return 0;
}
