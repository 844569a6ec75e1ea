// The gauges of `ringsmbctl status --prometheus` and of ringsmbd's
// /metrics listener, from the LIST_* status lists (status_prometheus.cpp).
#pragma once

#include <ostream>

#include "ipc/ctl_status.hpp"

namespace ringsmb::ipc {

// The gauges of S in the Prometheus text format; S null: the server is not
// running (ringsmb_up 0 only).
void print_prometheus(std::ostream& out, const ServerStatus* s);

}  // namespace ringsmb::ipc
