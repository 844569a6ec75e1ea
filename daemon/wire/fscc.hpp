// Information classes (MS-FSCC 2.4, 2.5): the InfoClass of QUERY_INFO,
// SET_INFO and QUERY_DIRECTORY. The vfs/ encoders know their layouts.
#pragma once

#include <cstdint>

namespace ringsmb::wire {

// MS-FSCC 2.4 file information classes (InfoType SMB2_0_INFO_FILE).
enum class FileInfoClass : uint8_t {
  Directory = 1, FullDirectory = 2, BothDirectory = 3, Basic = 4, Standard = 5, Internal = 6,
  Ea = 7, Access = 8, Name = 9, Rename = 10, Link = 11, Names = 12, Disposition = 13,
  Position = 14, FullEa = 15, Mode = 16, Alignment = 17, All = 18, Allocation = 19,
  EndOfFile = 20, AlternateName = 21, Stream = 22, Pipe = 23, PipeLocal = 24, Compression = 28,
  NetworkOpen = 34, AttributeTag = 35, IdBothDirectory = 37, IdFullDirectory = 38,
  NormalizedName = 48, DispositionEx = 64, RenameEx = 65,
};

// MS-FSCC 2.5 filesystem information classes (InfoType SMB2_0_INFO_FILESYSTEM).
enum class FsInfoClass : uint8_t {
  Volume = 1, Label = 2, Size = 3, Device = 4, Attribute = 5, Control = 6, FullSize = 7,
  ObjectId = 8, SectorSize = 11,
};

}  // namespace ringsmb::wire
