#include "smb2/commands/command_table.hpp"

#include "smb2/commands/handlers.hpp"
#include "smb2/commands/negotiate.hpp"
#include "smb2/durable/durable.hpp"

namespace ringsmb::smb2 {
namespace {

using wire::Command;

constexpr SessionNeed kValid = SessionNeed::Valid;

// Payload fields (MS-SMB2 2.2.19 READ Length, 2.2.21 WRITE Length, 2.2.31
// IOCTL InputCount and MaxOutputResponse, 2.2.33 OutputBufferLength,
// 2.2.35 OutputBufferLength, 2.2.37 OutputBufferLength, 2.2.39 BufferLength).
// FileId offsets: MS-SMB2 2.2.15 ff., the field "FileId" of each request.
constexpr std::array<CommandSpec, wire::kCommandCount> kCommands = {{
    {.handler = handle_negotiate, .name = "NEGOTIATE", .structure_size = 36},
    {.handler = handle_session_setup, .name = "SESSION_SETUP", .structure_size = 25},
    {.handler = handle_logoff, .name = "LOGOFF", .structure_size = 4, .session = kValid},
    {.handler = handle_tree_connect, .name = "TREE_CONNECT", .structure_size = 9, .session = kValid},
    {.handler = handle_tree_disconnect, .name = "TREE_DISCONNECT", .structure_size = 4, .session = kValid,
     .needs_tree = true},
    {.handler = handle_create, .name = "CREATE", .structure_size = 57, .session = kValid, .needs_tree = true,
     .changes_file_data = true, .may_go_async = true},  // behind a break
    {.handler = handle_close, .name = "CLOSE", .structure_size = 24, .session = kValid, .needs_tree = true,
     .file_id_at = 8, .serves_quota_file = true},
    {.handler = handle_flush, .name = "FLUSH", .structure_size = 24, .session = kValid, .needs_tree = true,
     .file_id_at = 8, .may_go_async = true},  // fsync off the worker
    {.handler = handle_read, .name = "READ", .structure_size = 49, .session = kValid, .needs_tree = true,
     .file_id_at = 16, .may_go_async = true, .payload_at = {4, 0}},  // an empty pipe
    {.handler = handle_write, .name = "WRITE", .structure_size = 49, .session = kValid, .needs_tree = true,
     .file_id_at = 16, .modifies = true, .changes_file_data = true, .may_go_async = true,
     .payload_at = {4, 0}},  // a large pwrite off the worker
    {.handler = handle_lock, .name = "LOCK", .structure_size = 48, .session = kValid, .needs_tree = true,
     .file_id_at = 8, .may_go_async = true},  // a blocking lock
    {.handler = handle_ioctl, .name = "IOCTL", .structure_size = 57, .session = kValid, .needs_tree = true,
     .file_id_at = 8, .open_optional = ioctl_takes_no_open, .modifies = true, .changes_file_data = true,
     .payload_at = {28, 44}},
    {.handler = nullptr, .name = "CANCEL", .structure_size = 4},  // handled by the processor
    {.handler = handle_echo, .name = "ECHO", .structure_size = 4},
    {.handler = handle_query_directory, .name = "QUERY_DIRECTORY", .structure_size = 33, .session = kValid,
     .needs_tree = true, .file_id_at = 8, .payload_at = {28, 0}},
    {.handler = handle_change_notify, .name = "CHANGE_NOTIFY", .structure_size = 32, .session = kValid,
     .needs_tree = true, .file_id_at = 8, .may_go_async = true, .payload_at = {4, 0}},
    {.handler = handle_query_info, .name = "QUERY_INFO", .structure_size = 41, .session = kValid,
     .needs_tree = true, .file_id_at = 24, .payload_at = {4, 0}, .serves_quota_file = true},
    {.handler = handle_set_info, .name = "SET_INFO", .structure_size = 33, .session = kValid, .needs_tree = true,
     .file_id_at = 16, .modifies = true, .changes_file_data = true, .may_go_async = true,
     .payload_at = {4, 0}, .serves_quota_file = true},  // a rename behind a break
    {.handler = handle_oplock_break, .name = "OPLOCK_BREAK", .structure_size = 24, .alt_structure_size = 36,
     .session = kValid, .needs_tree = true, .file_id_at = 8},  // the oplock form's
}};

constexpr CommandTable kTable{.commands = kCommands,
                               .smb1_negotiate = handle_smb1_negotiate,
                               .close_unreachable_holder = close_unreachable_holder};

}  // namespace

void install_commands() { install_command_table(kTable); }

}  // namespace ringsmb::smb2
