#include "smb2/engine/create_context_chain.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint16_t kMinContextNameBytes = 4;

}  // namespace

// Appends a context's header and name; its data follows at the returned
// offset, and end_context() patches DataLength once it is written. Data is
// written in place: no temporary buffer per context.
size_t begin_context(Bytes& out, std::string_view name, size_t& last_start) {
  ByteWriter w(out);
  if (last_start != SIZE_MAX) {
    w.align(8);
    store_le32(out.data() + last_start, uint32_t(out.size() - last_start));
  }
  last_start = out.size();
  w.u32(0);  // Next, patched when another follows
  w.u16(16);
  w.u16(uint16_t(name.size()));
  w.u16(0);
  w.u16(24);
  w.u32(0);  // DataLength, patched by end_context
  w.bytes(name.data(), name.size());
  w.align(8, last_start);
  return out.size();
}

void end_context(Bytes& out, size_t context_start, size_t data_start) {
  constexpr size_t kDataLengthAt = 12;  // Next, NameOffset, NameLength, Reserved, DataOffset come first
  store_le32(out.data() + context_start + kDataLengthAt, uint32_t(out.size() - data_start));
}

bool next_create_context(ByteSpan buffer, size_t& off, CreateContext& out) {
  if (off >= buffer.size()) return false;
  ByteReader r(buffer.subspan(off));
  uint32_t next = r.u32();
  uint16_t name_off = r.u16(), name_len = r.u16();
  r.u16();
  uint16_t data_off = r.u16();
  uint32_t data_len = r.u32();
  if (!r.ok()) return false;
  size_t limit = next ? next : buffer.size() - off;
  // Names are at least 4 bytes (every defined one is); Windows and Samba
  // refuse shorter ones (smb2.create.blob).
  if ((next && (next % 8 || next > buffer.size() - off)) || name_len < kMinContextNameBytes || name_off < 16 ||
      size_t(name_off) + name_len > limit || (data_len && (data_off < 16 || size_t(data_off) + data_len > limit)))
    return false;
  const uint8_t* base = buffer.data() + off;
  out = {std::string_view(reinterpret_cast<const char*>(base + name_off), name_len),
         ByteSpan(base + data_off, data_len)};
  off = next ? off + next : buffer.size();
  return true;
}

void append_create_context(Bytes& out, std::string_view name, ByteSpan data) {
  size_t last = SIZE_MAX;  // the chain's last context: its Next is patched
  for (size_t at = 0; at + 4 <= out.size();) {
    last = at;
    uint32_t next = load_le32(out.data() + at);
    if (!next) break;
    at += next;
  }
  size_t start = begin_context(out, name, last);
  out.insert(out.end(), data.begin(), data.end());
  end_context(out, last, start);
}

bool has_create_context(ByteSpan buffer, std::string_view name) {
  bool found = false;
  for_each_create_context(buffer, [&](const CreateContext& c) { found = found || c.name == name; });
  return found;
}

}  // namespace ringsmb::smb2
