// SMB2 CLOSE (MS-SMB2 2.2.15, 2.2.16, 3.3.5.10) and the release of an open:
// share modes, delete-on-close / delete-pending.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "common/log.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/leases/directory_lease.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/notify/notify_watch.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/locks/lock_grants.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/files/recycle.hpp"
#include "smb2/files/share_options.hpp"
#include "smb2/streams/stream_io.hpp"
#include "state/lock_table.hpp"
#include "smb2/files/delayed_write_time.hpp"
#include "vfs/file_info.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "vfs/stream_sidecar.hpp"
#include "vfs/stream_store.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint16_t { SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB = 0x1 };

}  // namespace

void close_open(Request& req, state::Open* open) { close_open(req.conn, req.server, open->volatile_id); }

NtStatus handle_close(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint16_t flags = r.u16();
  r.skip(4);
  r.skip(16);  // FileId: Request::open
  state::Open* open = req.open;
  vfs::FileStat st{};
  bool have_stat = false;
  uint32_t attrs = 0;
  write_time_at_close(*open);
  if (flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB) {
    auto s = vfs::stat_fd(open->fd.get());
    if (s) {
      st = *s;
      have_stat = true;
      std::string_view parent, leaf;
      vfs::split_parent(open->path, parent, leaf);
      st.attributes = reported_attributes(req.tree->share, st, leaf, open->fd.get());
      apply_stored_metadata(st, *open);
      attrs = st.attributes;
      if (open->stream) {
        apply_stream_size(*open, st);
        attrs = stream_attributes(attrs);
      }
    }
  }
  close_open(req, open);
  w.u16(60);
  w.u16(have_stat ? SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB : 0);
  w.u32(0);
  if (have_stat) {
    vfs::put_network_open_times(w, st);
    w.u32(attrs);
  } else {
    w.zeros(52);
  }
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
