// Constants of SMB2 request and response bodies that more than one place
// reads (MS-SMB2 2.2.13 ff., MS-FSCC 2.3): QUERY_INFO / SET_INFO info types,
// CREATE's dispositions and options, IOCTL's FSCTL codes, CREATE context
// names. Each is defined here once;
// the information classes are in wire/fscc.hpp.
#pragma once

#include <cstdint>
#include <string_view>

namespace ringsmb::wire {

// InfoType of QUERY_INFO and SET_INFO (MS-SMB2 2.2.37, 2.2.39).
enum InfoType : uint8_t {
  SMB2_0_INFO_FILE = 1,
  SMB2_0_INFO_FILESYSTEM = 2,
  SMB2_0_INFO_SECURITY = 3,
  SMB2_0_INFO_QUOTA = 4,
};

// CREATE (MS-SMB2 2.2.13, 2.2.14): CreateDisposition, CreateOptions,
// CreateAction.
namespace create {
enum : uint32_t {
  FILE_SUPERSEDE = 0, FILE_OPEN = 1, FILE_CREATE = 2, FILE_OPEN_IF = 3, FILE_OVERWRITE = 4, FILE_OVERWRITE_IF = 5,
};
enum : uint32_t {
  FILE_DIRECTORY_FILE = 0x1,
  FILE_NON_DIRECTORY_FILE = 0x40,
  FILE_DELETE_ON_CLOSE = 0x1000,
  FILE_OPEN_BY_FILE_ID = 0x2000,
  FILE_OPEN_REPARSE_POINT = 0x00200000,
  FILE_WRITE_THROUGH = 0x2,
  kReservedCreateOptions = 0xFF000000,
};
enum : uint32_t { FILE_SUPERSEDED = 0, FILE_OPENED = 1, FILE_CREATED = 2, FILE_OVERWRITTEN = 3 };
}  // namespace create

// IOCTL Flags (MS-SMB2 2.2.31): the CtlCode is an FSCTL.
inline constexpr uint32_t SMB2_0_IOCTL_IS_FSCTL = 0x1;

// FSCTL codes (MS-FSCC 2.3, MS-SMB2 2.2.31).
enum FsctlCode : uint32_t {
  FSCTL_DFS_GET_REFERRALS = 0x00060194,
  FSCTL_DFS_GET_REFERRALS_EX = 0x000601B0,
  FSCTL_GET_REPARSE_POINT = 0x000900A8,
  FSCTL_SET_REPARSE_POINT = 0x000900A4,
  FSCTL_DELETE_REPARSE_POINT = 0x000900AC,
  FSCTL_CREATE_OR_GET_OBJECT_ID = 0x000900C0,
  FSCTL_SET_SPARSE = 0x000900C4,
  FSCTL_GET_COMPRESSION = 0x0009003C,
  FSCTL_SET_COMPRESSION = 0x0009C040,
  FSCTL_SET_ZERO_DATA = 0x000980C8,
  FSCTL_QUERY_ALLOCATED_RANGES = 0x000940CF,
  FSCTL_FILE_LEVEL_TRIM = 0x00098208,
  FSCTL_DUPLICATE_EXTENTS_TO_FILE = 0x00098344,
  FSCTL_PIPE_PEEK = 0x0011400C,
  FSCTL_PIPE_WAIT = 0x00110018,
  FSCTL_PIPE_TRANSCEIVE = 0x0011C017,
  FSCTL_SRV_COPYCHUNK = 0x001440F2,
  FSCTL_SRV_REQUEST_RESUME_KEY = 0x00140078,
  FSCTL_SRV_COPYCHUNK_WRITE = 0x001480F2,
  FSCTL_LMR_REQUEST_RESILIENCY = 0x001401D4,
  FSCTL_QUERY_NETWORK_INTERFACE_INFO = 0x001401FC,
  FSCTL_VALIDATE_NEGOTIATE_INFO = 0x00140204,
};

// CREATE context names (MS-SMB2 2.2.13.2, 2.2.14.2).
namespace create_context {
inline constexpr std::string_view kEaBuffer = "ExtA";               // SMB2_CREATE_EA_BUFFER
inline constexpr std::string_view kSdBuffer = "SecD";               // SMB2_CREATE_SD_BUFFER
inline constexpr std::string_view kDurableRequest = "DHnQ";         // SMB2_CREATE_DURABLE_HANDLE_REQUEST
inline constexpr std::string_view kDurableReconnect = "DHnC";       // SMB2_CREATE_DURABLE_HANDLE_RECONNECT
inline constexpr std::string_view kDurableRequestV2 = "DH2Q";       // SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2
inline constexpr std::string_view kDurableReconnectV2 = "DH2C";     // SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2
// SMB2_CREATE_ALLOCATION_SIZE: "AlSi" (the spec's "AISi" is a typo).
inline constexpr std::string_view kAllocationSize = "AlSi";
inline constexpr std::string_view kMaximalAccess = "MxAc";          // SMB2_CREATE_QUERY_MAXIMAL_ACCESS_REQUEST
inline constexpr std::string_view kTimewarpToken = "TWrp";          // SMB2_CREATE_TIMEWARP_TOKEN
inline constexpr std::string_view kQueryOnDiskId = "QFid";          // SMB2_CREATE_QUERY_ON_DISK_ID
inline constexpr std::string_view kRequestLease = "RqLs";           // SMB2_CREATE_REQUEST_LEASE(_V2)
// SMB2_CREATE_APP_INSTANCE_ID: a GUID in wire order.
inline constexpr uint8_t kAppInstanceId[16] = {0x45, 0xBC, 0xA6, 0x6A, 0xEF, 0xA7, 0xF7, 0x4A,
                                               0x90, 0x08, 0xFA, 0x46, 0x2E, 0x14, 0x4D, 0x74};
}  // namespace create_context

}  // namespace ringsmb::wire
