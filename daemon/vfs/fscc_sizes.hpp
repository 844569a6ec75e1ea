// Fixed sizes of the MS-FSCC structures the vfs encoders produce, so the
// SMB2 handlers can check OutputBufferLength against them (MS-SMB2 3.3.5.20
// fails too-small buffers for fixed-size classes with INFO_LENGTH_MISMATCH).
// "Fixed" sizes of variable-length classes exclude the trailing name.
#pragma once

#include <cstddef>

namespace ringsmb::vfs::fscc {

// File information classes (MS-FSCC 2.4).
inline constexpr size_t kBasicInfoSize = 40;           // 2.4.7: 4 FILETIMEs, attributes, reserved
inline constexpr size_t kStandardInfoSize = 24;        // 2.4.47
inline constexpr size_t kInternalInfoSize = 8;         // 2.4.26
inline constexpr size_t kEaInfoSize = 4;               // 2.4.13
inline constexpr size_t kAccessInfoSize = 4;           // 2.4.1
inline constexpr size_t kPositionInfoSize = 8;         // 2.4.40
inline constexpr size_t kModeInfoSize = 4;             // 2.4.31
inline constexpr size_t kAlignmentInfoSize = 4;        // 2.4.3
inline constexpr size_t kNameInfoFixedSize = 4;        // 2.4.32: FileNameLength
inline constexpr size_t kAllInfoFixedSize = 100;       // 2.4.2
inline constexpr size_t kNetworkOpenInfoSize = 56;     // 2.4.33
inline constexpr size_t kAttributeTagInfoSize = 8;     // 2.4.6
inline constexpr size_t kStreamInfoFixedSize = 24;     // 2.4.49: per entry, before StreamName
inline constexpr size_t kCompressionInfoSize = 16;     // 2.4.9

static_assert(kAllInfoFixedSize == kBasicInfoSize + kStandardInfoSize + kInternalInfoSize + kEaInfoSize +
                                       kAccessInfoSize + kPositionInfoSize + kModeInfoSize +
                                       kAlignmentInfoSize + kNameInfoFixedSize,
              "FileAllInformation is the concatenation of its parts");

// Directory information classes (MS-FSCC 2.4), before FileName.
inline constexpr size_t kDirectoryInfoFixedSize = 64;        // 2.4.10
inline constexpr size_t kFullDirectoryInfoFixedSize = 68;    // 2.4.14
inline constexpr size_t kBothDirectoryInfoFixedSize = 94;    // 2.4.8
inline constexpr size_t kIdBothDirectoryInfoFixedSize = 104; // 2.4.17
inline constexpr size_t kIdFullDirectoryInfoFixedSize = 80;  // 2.4.18
inline constexpr size_t kNamesInfoFixedSize = 12;            // 2.4.28
inline constexpr size_t kShortNameBytes = 24;                // 8.3 name, 12 UTF-16 units
inline constexpr size_t kDirEntryAlignment = 8;              // MS-SMB2 3.3.5.18

// Filesystem information classes (MS-FSCC 2.5).
inline constexpr size_t kFsVolumeInfoFixedSize = 18;     // 2.5.9
inline constexpr size_t kFsSizeInfoSize = 24;            // 2.5.8
inline constexpr size_t kFsFullSizeInfoSize = 32;        // 2.5.4
inline constexpr size_t kFsDeviceInfoSize = 8;           // 2.5.10
inline constexpr size_t kFsAttributeInfoFixedSize = 12;  // 2.5.1
inline constexpr size_t kFsSectorSizeInfoSize = 28;      // 2.5.7

}  // namespace ringsmb::vfs::fscc
