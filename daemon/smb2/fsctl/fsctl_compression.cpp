// Compression (MS-FSCC 2.3.19, 2.3.67; MS-FSA 2.1.5.10.7, 2.1.5.10.36):
// no file is ever compressed and FILE_FILE_COMPRESSION is not advertised,
// so FSCTL_GET_COMPRESSION answers COMPRESSION_FORMAT_NONE and
// FSCTL_SET_COMPRESSION accepts only NONE (a compressing format is
// STATUS_NOT_SUPPORTED, as on a volume without compression).
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/fsctl/fsctl.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint16_t COMPRESSION_FORMAT_NONE = 0, COMPRESSION_FORMAT_DEFAULT = 1, COMPRESSION_FORMAT_LZNT1 = 2;
constexpr size_t kCompressionStateSize = 2;

}  // namespace

NtStatus fsctl_get_compression(FsctlCall& call) {
  if (call.q.max_output_response < kCompressionStateSize) return NtStatus::InvalidParameter;
  ByteWriter w(call.out);
  w.u16(COMPRESSION_FORMAT_NONE);
  return NtStatus::Success;
}

NtStatus fsctl_set_compression(FsctlCall& call) {
  if (call.q.input.size() < kCompressionStateSize) return NtStatus::InvalidParameter;
  uint16_t format = load_le16(call.q.input.data());
  if (format > COMPRESSION_FORMAT_LZNT1) return NtStatus::InvalidParameter;
  if (NtStatus s = check_change(*call.req.tree, *call.open, Change::Sparse); s != NtStatus::Success) return s;
  if (format == COMPRESSION_FORMAT_DEFAULT || format == COMPRESSION_FORMAT_LZNT1) return NtStatus::NotSupported;
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
