// wkssvc (MS-WKST): NetrWkstaGetInfo, which clients use to learn the
// server's NetBIOS name and workgroup.
#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"

namespace ringsmb::rpc {

namespace {

constexpr uint32_t kWerrOk = 0;
constexpr uint32_t kWerrInvalidLevel = 124;
constexpr uint32_t kPlatformIdNt = 500;
constexpr uint32_t kVersionMajor = 6;
constexpr uint32_t kVersionMinor = 1;

// WKSTA_INFO_100/101/102 share their leading fields (MS-WKST 2.2.5.1-3).
void write_wksta_info(NdrWriter& w, uint32_t level, const Identity& id) {
  w.u32(kPlatformIdNt);
  w.unique_wstring(id.netbios);
  w.unique_wstring(id.workgroup);
  w.u32(kVersionMajor);
  w.u32(kVersionMinor);
  if (level == 100) return;
  w.unique_wstring("C:\\");  // wki10x_lanroot
  if (level == 101) return;
  w.u32(0);  // wki102_logged_on_users: nobody is logged on at a server console we know of
}

CallResult wksta_get_info(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();  // ServerName
  uint32_t level = r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  bool level_ok = level == 100 || level == 101 || level == 102;
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(level);  // the union discriminant
  if (level_ok) {
    w.pointer(true);
    w.defer([&w, level, &ctx] { write_wksta_info(w, level, ctx.id); });
  } else {
    w.pointer(false);
  }
  w.flush();
  w.u32(level_ok ? kWerrOk : kWerrInvalidLevel);
  return res;
}

CallResult wkssvc_call(uint16_t opnum, ByteSpan stub, CallContext& ctx) {
  if (opnum == 0) return wksta_get_info(stub, ctx);  // NetrWkstaGetInfo
  return fault_result(kFaultOpRangeError);
}

}  // namespace

const RpcInterface& wkssvc_interface() {
  static const RpcInterface iface{"wkssvc", {Uuid::parse("6bffd098-a112-3610-9833-46c3f87e345a"), 1, 0},
                                  wkssvc_call};
  return iface;
}

}  // namespace ringsmb::rpc
