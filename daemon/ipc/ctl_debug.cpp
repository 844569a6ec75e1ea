#include "ipc/ctl_debug.hpp"

#include "common/log.hpp"

namespace ringsmb::ipc {

using namespace abi;

Bytes answer_debug(const Message& m, uint32_t from_port) {
  NtStatus status = NtStatus::Success;
  std::string text;
  int before = log_level_setting();
  if (m.has(ATTR_LOG_LEVEL)) {
    uint32_t level = m.u32(ATTR_LOG_LEVEL);
    bool from_config = m.u32(ATTR_LOG_LEVEL_SOURCE) == LOG_SOURCE_CONFIG;
    if (level > uint32_t(kMaxLogLevel)) {
      status = NtStatus::InvalidParameter;
      text = "log level " + std::to_string(level) + " is out of range (0.." + std::to_string(kMaxLogLevel) + ")";
    } else if (from_config && !apply_configured_log_level(int(level))) {
      text = "log level " + std::to_string(before) + " kept: set by -d on the command line";
    } else {
      if (!from_config) set_log_level(int(level));
      // Logged at the level that is always shown, so the change is on record.
      if (int(level) != before)
        LOG_WARN("log level %d (was %d), asked by %s (port %u)", int(level), before,
               from_config ? "reload" : "ringsmbctl debug", from_port);
    }
  }
  MsgBuilder b(CMD_DEBUG, m.seq, false);
  b.u32(ATTR_STATUS, uint32_t(status)).u32(ATTR_LOG_LEVEL, uint32_t(log_level_setting()));
  if (!text.empty()) b.str(ATTR_TEXT, text);
  ByteSpan w = b.wire();
  return Bytes(w.begin(), w.end());
}

}  // namespace ringsmb::ipc
