// Quotas over SMB2 (MS-SMB2 2.2.37.1, 3.3.5.20.4, 3.3.5.21.4; MS-FSCC
// 2.4.36, 2.4.41.1, 2.5.2), backed by the Linux user quotas of the share's
// file system (vfs/quota.hpp), as Samba's smbd reports them:
//
//  - CREATE of "$Extend\$Quota:$Q:$INDEX_ALLOCATION" (NTFS's quota index,
//    which smbcquotas and Windows' quota tools open) gives a quota handle
//    (state::Open::quota_file): no file behind it, only QUERY_INFO,
//    SET_INFO and CLOSE act on it.
//  - QUERY_INFO SMB2_0_INFO_QUOTA on it: FILE_QUOTA_INFORMATION entries
//    for the SIDs the request lists, or a scan of the users that have a
//    limit (RestartScan starts it over; STATUS_NO_MORE_ENTRIES ends it).
//    A SID is a Unix user as everywhere else (S-1-22-1-<uid>, or the
//    machine domain's <SID>-<1000 + uid>); entries name S-1-22-1-<uid>.
//    Sizes are bytes; a limit of 0 on Linux is "no limit" (-1).
//  - SET_INFO SMB2_0_INFO_QUOTA: sets the block limits of each entry's user.
//  - QUERY_INFO FileFsControlInformation (any open): quota tracking and
//    enforcement as the file system reports them, no default limits.
//
// Who may do what: a user of "admin users" (or one whose file operations
// run as root) reads every entry and sets limits; any other user reads
// their own entry only (a listing shows just theirs, a SID list naming
// someone else is ACCESS_DENIED) and sets nothing (ACCESS_DENIED).
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

// Whether a CREATE's UTF-16LE name is the quota index (case-insensitive,
// with or without a leading backslash).
bool names_quota_file(ByteSpan utf16le_name);

struct QuotaFileCreate {
  uint32_t desired_access = 0;
  uint32_t share_access = 0;
  uint32_t disposition = 0;
  uint32_t create_options = 0;
};
// Opens the quota handle and writes the CREATE response.
NtStatus create_quota_file(Request& req, const QuotaFileCreate& c, ByteWriter& w);

// QUERY_INFO SMB2_0_INFO_QUOTA (FileQuotaInformation); INPUT is the
// SMB2_QUERY_QUOTA_INFO.
NtStatus query_quota(Request& req, state::Open& open, ByteSpan input, uint32_t output_length, Bytes& data);
// SET_INFO SMB2_0_INFO_QUOTA: BUF is a FILE_QUOTA_INFORMATION list.
NtStatus set_quota(Request& req, state::Open& open, ByteSpan buf);
// FILE_FS_CONTROL_INFORMATION (48 bytes) for the tree's file system.
void put_fs_control_information(const Request& req, ByteWriter& w);

}  // namespace ringsmb::smb2
