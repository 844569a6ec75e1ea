// SMB2 CREATE (MS-SMB2 3.3.5.9) in parts: finding the target and opening
// or making it on disk (smb2/commands/create_open.cpp), the overwrite of a large
// file whose truncation runs on the blocking pool (smb2/commands/create_overwrite.cpp),
// and what handle_create decides once the file is open (smb2/commands/create.cpp:
// security, attributes, oplocks and leases, durability, the response).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "smb2/security/access_check.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "smb2/security/security_info.hpp"
#include "vfs/file_info.hpp"
#include "vfs/name_index.hpp"
#include "vfs/paths.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2::create {

using namespace wire::create;  // CreateDisposition, CreateOptions, CreateAction

struct CreateRequest {
  uint8_t oplock_level = 0;
  uint32_t impersonation = 0;
  uint32_t desired_access = 0;
  uint32_t file_attributes = 0;
  uint32_t share_access = 0;
  uint32_t disposition = 0;
  uint32_t options = 0;
  ByteSpan name;
  ByteSpan contexts;
  bool data_stream = false;  // the name asked for the data stream explicitly ("dir::$DATA")
  // What names are relative to: the share root, or a snapshot's copy of it
  // (smb2/snapshots/), where every descriptor is opened read-only.
  int root_fd = -1;
  bool in_snapshot = false;
};

// Where the file lives: its parent directory fd and leaf name.
struct Target {
  std::string path;  // relative, resolved for case
  std::string_view parent, leaf;
  state::UniqueFd parent_fd;
  ParentSecurity parent_security;  // for a new name: the parent's stored descriptor
  // The client's leaf is the 8.3 name of a vetoed name (veto files): it
  // names nothing, and nothing is created under it. Any client can work
  // out a name's short name, so it must not reach what the name cannot.
  bool vetoed = false;
  // The one-open fast path's openat2 of the whole name met ENOENT: with the
  // parent found under the name as given, the leaf has no entry of that
  // exact name, or one openat2 could not follow (a dangling symlink).
  bool exact_name_missing = false;
  // The create of the leaf, begun with the name index's lookup that found
  // no entry (NameIndexCache::find_or_begin: one fstat of the parent for
  // both); open_or_create finishes it. Last: it ends before parent_fd closes.
  std::optional<vfs::NameIndexCache::Change> create_change;
};

struct Opened {
  state::UniqueFd fd;
  vfs::FileStat st;
  uint32_t action = FILE_OPENED;
  bool created = false;
  // Overwrite/supersede: truncated only once the share modes allow this
  // open, so a request that ends in a sharing violation destroys nothing.
  bool truncate = false;
  // Opened O_PATH: the user may not open it for reading (attributes only).
  bool path_only = false;
  // Rights MAXIMUM_ALLOWED added that the open was not made for (the mode
  // does not give them, or the kernel refused them): never granted.
  uint32_t unopened = 0;
  bool stream_created = false;  // a named stream this request made
  std::string stream_name;      // an existing stream's name as created
  // The attributes a new file was given in the server-private metadata
  // (apply_new_attributes), reported without reading them back.
  std::optional<uint32_t> new_attributes;
  // STATUS_STOPPED_ON_SYMLINK: the target of the symlink met (its error
  // response), and the bytes of the client's name after the link's component.
  std::string symlink_target;
  uint16_t symlink_unparsed_bytes = 0;
};

// A stream open's registration on its file (state::kStreamHolder), dropped
// again unless the open is kept.
class StreamHold {
 public:
  StreamHold(state::FileTable& files, const void* owner) : files_(files), owner_(owner) {}
  ~StreamHold() {
    if (node_) files_.close(node_, owner_);
  }
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  NtStatus take(uint64_t dev, uint64_t ino, uint32_t share_access) {
    auto node = files_.open(dev, ino, owner_, state::kStreamHolder, share_access);
    if (!node) return node.error();
    node_ = std::move(*node);
    return NtStatus::Success;
  }
  std::shared_ptr<state::FileNode> keep() { return std::move(node_); }

 private:
  state::FileTable& files_;
  const void* owner_;
  std::shared_ptr<state::FileNode> node_;
};

// A data file with FILE_ATTRIBUTE_READONLY (MS-FSA 2.1.5.1.2.1).
bool is_readonly_file(const vfs::FileStat& st);
// Overwrite or supersede: the data is replaced.
bool overwrites(const CreateRequest& c);
// Opens or creates the target (the file, not a named stream).
NtStatus open_target(Request& req, const CreateRequest& c, uint32_t access, const vfs::SmbPath& p, Target& t,
                     Opened& o);
// Opens or creates a named stream of the target (`key`: its xattr name).
NtStatus open_stream_target(Request& req, const CreateRequest& c, uint32_t access, const vfs::SmbPath& p,
                            const std::string& key, Target& t, Opened& o);
// Empties an overwritten file or stream once its open is granted.
Result<void> truncate_opened(Opened& o, bool streams);
Result<void> truncate_stream(Opened& o, const std::string& key);
// Takes back what a refused CREATE made.
void undo_create(Request& req, const Target& t, const Opened& o, const std::string& stream_key);

// The overwrite of a large file on the pool (smb2/commands/create_overwrite.cpp).
bool overwrite_goes_async(const Request& req, const CreateRequest& c, const Opened& o);
Result<void> prepare_pool_truncate(Opened& o, bool streams);
NtStatus overwrite_on_pool(Request& req, ByteWriter& w, std::unique_ptr<state::Open> open, Bytes body);

// The CREATE response body (MS-SMB2 2.2.14) for OPEN, with the response
// contexts CONTEXTS (create_response.cpp).
void write_response(ByteWriter& w, const state::Open& open, const Opened& o, uint32_t attrs, ByteSpan contexts,
                    uint8_t oplock_level);
// The durable contexts, read only when there are contexts (nothing for the
// common open); a reconnect is answered here, before the request's other
// fields are judged (ANSWERED).
NtStatus read_durable(Request& req, const CreateRequest& c, DurableRequest& d, ByteWriter& w, bool& answered);
// DH2Q: a replay of a CREATE whose open lives gets that open again (ANSWERED).
NtStatus check_replay(Request& req, const CreateRequest& c, const DurableRequest& d, ByteWriter& w, bool& answered);

}  // namespace ringsmb::smb2::create
