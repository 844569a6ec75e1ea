// ringsmb.conf: the smb.conf / ksmbd.conf dialect. [global] plus one section
// per share. Keys are case- and space-insensitive ("Read Only" == "readonly");
// ';' and '#' start comments; a trailing '\' continues a line; booleans are
// yes/no/true/false/1/0/on/off.
//
// Only whole lines are comments: "key = value # text" keeps "# text" in the
// value, as Samba does.
//
// Unknown keys produce a warning naming file:line; bad values an error naming
// file:line and the key, and the whole file is rejected. The parser does not
// stop at the first error: check_config_text reports every one.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ringsmb::config {

enum class SigningPolicy { Auto, Mandatory, Disabled };
// "smb3 encryption" (and Samba's "server smb encrypt"): off/no/disabled/if_required
// -> Off; desired/yes/auto -> Desired; required/mandatory/forced -> Required.
enum class EncryptionPolicy { Off, Desired, Required };
enum class MapToGuest { Never, BadUser, BadPassword };
// "kerberos method" (Samba's values): where the service keys that accept
// Kerberos tickets come from. Only the keytab methods let ringsmb accept
// Kerberos; "secrets only" (Samba's default) names Samba's secrets.tdb,
// which ringsmb does not read, so Kerberos stays off with it.
enum class KerberosMethod { SecretsOnly, DedicatedKeytab, SystemKeytab, SecretsAndKeytab };
// "security": user (and auto) or ads, a member of an Active Directory domain.
enum class SecurityMode { User, Ads };
// "data plane": who serves SMB. Ringsmbd (the default): ringsmbd, with
// ringsmb-ctld verifying logins (the NT hash never leaves ctld). Ksmbd: the
// kernel's ksmbd.ko, driven by ringsmb-ctld (kmod-shim/, docs/kmod-shim.md);
// the kernel verifies NTLMv2, so ctld hands it the NT hash.
enum class DataPlane { Ringsmbd, Ksmbd };

// Dialects as their MS-SMB2 revision numbers.
inline constexpr uint16_t kDialect202 = 0x0202;
inline constexpr uint16_t kDialect210 = 0x0210;
inline constexpr uint16_t kDialect300 = 0x0300;
inline constexpr uint16_t kDialect302 = 0x0302;
inline constexpr uint16_t kDialect311 = 0x0311;

// Samba's vfs_recycle options ("recycle:KEY"), with its meanings and
// defaults (docs/home-shares-and-recycle.md). On while "vfs objects" names
// recycle; a delete then moves the file into REPOSITORY by a rename.
struct RecycleConfig {
  bool enabled = false;
  // Relative to the share root (an absolute path in the file must lie inside
  // the share and is made relative); may hold %U, %S and %H until the
  // control plane expands them at tree connect.
  std::string repository = ".recycle";
  uint32_t directory_mode = 0700;
  std::optional<uint32_t> subdir_mode;  // unset: directory_mode
  bool keeptree = false;     // the deleted file's directories are kept below the repository
  bool versions = false;     // a name taken in the bin gives "Copy #N of NAME" instead of replacing it
  bool touch = false;        // the access time becomes the time of the delete
  bool touch_mtime = false;  // ... and the modification time too
  uint64_t minsize_bytes = 0;  // smaller files are deleted; 0: no bound
  uint64_t maxsize_bytes = 0;  // larger files are deleted; 0: no bound
  // Patterns ('*', '?', without case): file names deleted outright;
  // directory names any of whose components excludes; names never versioned.
  std::vector<std::string> exclude;
  std::vector<std::string> exclude_dir;
  std::vector<std::string> noversions;
  bool operator==(const RecycleConfig&) const = default;
};

// Samba's vfs_shadow_copy2 options ("shadow:KEY", vfs/snapshots.hpp): the
// share's snapshots as Previous Versions. On while "vfs objects" names
// shadow_copy2.
struct ShadowCopyConfig {
  bool enabled = false;
  std::string snapdir;  // relative to the mount point, or absolute beneath it; "": found (vfs/snapshots.hpp)
  std::string format = "@GMT-%Y.%m.%d-%H.%M.%S";
  bool localtime = false;
  bool sort_descending = true;  // "desc" (the default); "asc" and anything else: oldest first
  std::string mountpoint;       // "": the mount point of the share's path
  std::string basedir;
  std::string snapsharepath;
  bool operator==(const ShadowCopyConfig&) const = default;
};

// Apple's SMB extensions for macOS clients, with the names and meanings of
// Samba's vfs_fruit options (docs/macos-clients.md). Off unless "vfs objects"
// names fruit. Samba reads fruit:aapl, fruit:model, fruit:copyfile and
// fruit:nfs_aces from [global] only; here every key may also be set per
// share, and written in [global] it is every share's default.
struct FruitOptions {
  enum class Metadata : uint8_t { Stream, Netatalk };
  enum class Resource : uint8_t { File, Stream, Xattr };
  bool enabled = false;  // "vfs objects" names fruit
  bool aapl = true;      // answer the AAPL create context
  bool copyfile = false;  // offer macOS copyfile (a server-side copy of every stream)
  bool nfs_aces = true;   // the UNIX mode in directory listings and ACLs
  bool time_machine = false;
  uint64_t time_machine_max_size = 0;  // bytes; 0: the volume's own size
  bool posix_rename = true;
  bool veto_appledouble = true;  // hide and refuse "._" AppleDouble files
  bool wipe_intentionally_left_blank_rfork = false;
  bool delete_empty_adfiles = false;
  bool zero_file_id = true;  // file ids read as 0 once AAPL is negotiated
  bool netatalk_locking = false;  // fruit:locking = netatalk: Netatalk's open/deny locks refuse opens
  Metadata metadata = Metadata::Netatalk;
  Resource resource = Resource::File;
  std::string model = "MacSamba";  // the model string in the AAPL answer
};

struct ShareConfig {
  std::string name;  // as written in the section header
  std::string path;
  std::string comment;
  bool read_only = true;  // Samba's default; "writeable = yes" clears it
  bool guest_ok = false;
  bool browseable = true;
  std::vector<std::string> valid_users;  // empty: everyone; "@group" entries allowed
  std::optional<EncryptionPolicy> smb3_encryption;  // unset: the global one
  bool case_sensitive = false;
  // Access lists, decided by the control plane at tree connect. Each entry is
  // a user name or "@group" / "+group" (a Unix group; "&group", an NIS
  // netgroup, never matches).
  std::vector<std::string> read_list;      // read-only for these users, even on a writable share
  std::vector<std::string> write_list;     // writable for these users, even on a read-only share (wins over read list)
  std::vector<std::string> invalid_users;  // refused, whatever valid users says
  // Client addresses (host_match.hpp): Samba's "hosts allow" / "hosts deny".
  std::vector<std::string> hosts_allow;
  std::vector<std::string> hosts_deny;
  // Permission bits a new file / directory may get (Samba: the mode derived
  // from the DOS attributes, 0666 / 0777, AND-ed with the mask).
  uint32_t create_mask = 0744;
  uint32_t directory_mask = 0755;
  std::string force_user;   // file operations run as this Unix user
  std::string force_group;  // ... with this primary group; "+group": only for members
  bool hide_dot_files = true;               // FILE_ATTRIBUTE_HIDDEN on names starting with '.'
  std::vector<std::string> veto_files;      // name patterns ('*', '?') hidden and not openable
  bool oplocks = true;
  bool smb2_leases = true;
  bool streams = true;  // named streams (vfs/stream_store.hpp) where the server can store them
  bool store_dos_attributes = false;  // HIDDEN/SYSTEM/ARCHIVE in user.DOSATTRIB; Samba defaults to yes (see docs)
  bool nt_acl_support = true;  // NT security descriptors stored (trusted.ringsmb.ntacl); no: the mode alone
  bool acl_flag_inherited_canonicalization = true;  // SE_DACL_AUTO_INHERITED only with ..._REQ, as Windows
  bool client_symlinks = false;  // FSCTL_SET/DELETE_REPARSE_POINT make and remove Linux symlinks
  std::vector<std::string> vfs_objects;  // Samba's module names, as written ("recycle", "shadow_copy2")
  RecycleConfig recycle;
  ShadowCopyConfig shadow;
  FruitOptions fruit;
  int line = 0;  // where the section starts, for messages
  // The share keys the section or [global] names (normalized: "smb2leases"),
  // as GlobalConfig::keys_set: kmod-shim leaves ksmbd its defaults for the
  // rest.
  std::set<std::string> keys_set;
};

// Samba's per-interface options in `interfaces`
// ("eth0;capability=RSS,speed=10000000000"): what
// FSCTL_QUERY_NETWORK_INTERFACE_INFO reports for the interfaces that entry
// names, in place of what the kernel says.
struct InterfaceOverride {
  std::string entry;       // the `interfaces` entry (name, address or network)
  uint64_t speed_bps = 0;  // 0: the kernel's
  bool rss = false;        // capability=RSS
  bool rdma = false;       // capability=RDMA: accepted, not reported (no SMB Direct transport)
  uint32_t if_index = 0;   // 0: the kernel's
};

struct GlobalConfig {
  std::vector<uint16_t> tcp_ports{445};  // "tcp port" / "smb ports"
  std::vector<std::string> interfaces;   // addresses or interface names, options stripped
  std::vector<InterfaceOverride> interface_overrides;  // the entries that had options
  bool bind_interfaces_only = false;
  // "metrics listen": where ringsmbd serves /metrics over HTTP
  // (docs/monitoring.md); port 0: not at all (the default).
  std::string metrics_host = "127.0.0.1";
  uint16_t metrics_port = 0;
  std::string users_db = "/var/lib/ringsmb/users.db";
  std::string state_directory = "/var/lib/ringsmb";
  uint16_t min_protocol = kDialect202;   // "server min protocol": SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11, SMB2 (=2.02 as min, 2.10 as max), SMB3 (=3.00 as min, 3.11 as max)
  uint16_t max_protocol = kDialect311;
  SigningPolicy signing = SigningPolicy::Auto;             // "server signing": auto, mandatory/required, disabled/off
  // "server multi channel support": SMB2_GLOBAL_CAP_MULTI_CHANNEL offered
  // to 3.x clients, and session binding (MS-SMB2 3.3.5.5); Samba's default.
  bool multi_channel = true;
  EncryptionPolicy smb3_encryption = EncryptionPolicy::Off;  
  MapToGuest map_to_guest = MapToGuest::Never;            // "never", "bad user", "bad password"
  std::string guest_account = "nobody";
  // "admin users": accounts (users database names) that administer the
  // server over RPC, e.g. may see share paths (srvsvc levels 2 and 502).
  std::vector<std::string> admin_users;
  std::string workgroup = "WORKGROUP";
  // Kerberos (docs/kerberos.md): "realm" (stored upper case), "kerberos
  // method", "dedicated keytab file" ("FILE:/path" or a path).
  std::string realm;
  // With "security = ads", "secrets only" (the default) reads the system
  // keytab, where a domain join (realm join, adcli) puts the machine's keys:
  // ringsmb does not read Samba's secrets.tdb.
  SecurityMode security = SecurityMode::User;
  KerberosMethod kerberos_method = KerberosMethod::SecretsOnly;
  std::string dedicated_keytab_file;
  std::string netbios_name = "RINGSMB";
  std::string server_string = "ringsmb";
  // Resource limits (docs/security.md, "Resource limits"). Beyond these,
  // the descriptor budget (state::ResourceBudget) bounds connections and
  // open files together by the process's RLIMIT_NOFILE.
  uint32_t max_connections = 2048;  // TCP connections over all workers; 0: unlimited
  uint32_t max_connections_per_address = 256;  // from one client address; 0: unlimited
  uint32_t max_open_files = 16384;  // open handles per connection (Samba: per smbd process, i.e. per client)
  uint32_t max_open_files_per_user = 16384;  // over all connections of one user (at most half the budget)
  // Reply bytes one connection may have queued that its client has not
  // read; over it, its requests are not read until half has gone out.
  uint32_t max_send_queue_bytes = 32 * 1024 * 1024;
  // Named streams (docs/security.md, "Named streams"): "max stream size",
  // the bytes one stream may hold (a WRITE or EndOfFile past it is
  // STATUS_DISK_FULL); "max stream space per user", the bytes the sidecar
  // files of large streams (in the state directory) may hold for the
  // files of one owner, 0: no bound.
  uint64_t max_stream_bytes = 64ull << 20;
  uint64_t max_stream_space_per_user = 1ull << 30;
  // Directories one connection may watch for CHANGE_NOTIFY (each directory
  // of a WATCH_TREE counts); 0 turns change notification off.
  uint32_t max_notify_watches = 8192;
  // Seconds a connection has to complete NEGOTIATE and SESSION_SETUP.
  uint32_t login_timeout_s = 30;
  uint32_t smb2_max_credits = 8192;
  uint32_t smb2_max_read = 8 * 1024 * 1024;
  // 1 MiB, the size Windows clients write in: a larger WRITE is assembled
  // in memory that has left the CPU cache by the time pwrite copies it into
  // the page cache; 8 MiB writes cost 3x the CPU per GiB (docs/PERFORMANCE.md).
  uint32_t smb2_max_write = 1024 * 1024;
  uint32_t smb2_max_trans = 8 * 1024 * 1024;
  uint32_t deadtime_minutes = 0;
  // The [global] keys the configuration names (normalized: "smb2maxtrans"),
  // for a data plane whose own defaults differ from ringsmbd's: kmod-shim
  // leaves ksmbd its defaults for what the admin did not set.
  std::set<std::string> keys_set;
  // The login throttle (control/login_throttle.hpp): "login failure delay"
  // (ms, 0: off), "login failure max delay" (ms), "login failure window"
  // (s), "account lockout threshold" (0: never), "account lockout duration" (s).
  uint32_t login_failure_delay_ms = 200;
  uint32_t login_failure_max_delay_ms = 10000;
  uint32_t login_failure_window_s = 600;
  uint32_t account_lockout_threshold = 0;
  uint32_t account_lockout_duration_s = 600;
  // "lease break timeout": ms a CREATE waits for an oplock/lease break
  // acknowledgment before the break counts as done (Windows: 35 s).
  uint32_t lease_break_timeout_ms = 35000;
  int log_level = 1;
  DataPlane data_plane = DataPlane::Ringsmbd;
  uint32_t workers = 0;  // "workers": data-plane threads; 0 = one per core
  uint32_t worker_busy_poll_us = 0;  // "worker busy poll": µs a worker polls before it sleeps
  // "bulk worker nice": added to the nice value of the bulk workers' threads
  // (transport/worker.hpp), so that the listening workers win the CPU.
  uint32_t bulk_worker_nice = 10;
};

struct Config {
  GlobalConfig global;
  std::vector<ShareConfig> shares;
  // [homes]: the template of every user's home share (control/home_shares.hpp).
  // Its path is empty (the home directory from the passwd database) or
  // holds %S, %U or %H.
  std::optional<ShareConfig> homes;
  const ShareConfig* find_share(std::string_view name) const;  // case-insensitive
};

struct ParseOutput {
  Config config;
  std::vector<std::string> warnings;  // "FILE:LINE: unknown key 'x' in [share]"
};

// Where a key was set: [section] (as written) and line, for messages about
// the value that are not found while parsing (config_check.hpp).
struct KeySource {
  std::string section;
  std::string key;  // normalized
  int line = 0;
};

// Every problem of a file in one pass. CONFIG holds every value that
// parsed (the defaults elsewhere), so even a file with errors says where
// the state directory is.
struct CheckedConfig {
  Config config;
  std::vector<std::string> errors;    // "FILE:LINE: key: message"
  std::vector<std::string> warnings;  // "FILE:LINE: unknown key 'x' in [share]"
  std::vector<KeySource> sources;
};

CheckedConfig check_config_text(std::string_view text, std::string_view file_name);
// Orders "FILE:LINE: ..." messages by LINE, keeping the order of equals.
void sort_by_line(std::vector<std::string>& messages);
// Reads PATH first: an error (without a CheckedConfig) when it cannot be
// read or is not a regular file.
std::expected<CheckedConfig, std::string> check_config_file(const std::string& path);

// Errors are "FILE:LINE: key: message", one line each (several lines when
// the file has several errors).
std::expected<ParseOutput, std::string> parse_config_text(std::string_view text, std::string_view file_name);
// parse_config_file also warns about shares whose path is not a directory.
std::expected<ParseOutput, std::string> parse_config_file(const std::string& path);
void warn_missing_share_paths(ParseOutput& out, std::string_view file);

// Normalizes a key as the parser compares keys: lowercase, spaces and tabs removed.
std::string normalize_key(std::string_view key);
bool parse_bool(std::string_view value, bool& out);

}  // namespace ringsmb::config

namespace ringsmb::config {

// The keytab Kerberos tickets are accepted with: nullopt when Kerberos is
// off (no realm, or a method without a keytab); "" for the system keytab
// (krb5's default, /etc/krb5.keytab or KRB5_KTNAME); else the dedicated
// keytab as a krb5 keytab name ("FILE:/path").
std::optional<std::string> kerberos_keytab(const GlobalConfig& g);

}  // namespace ringsmb::config
