// `status --prometheus` (status_prometheus.cpp).
#pragma once

#include <ostream>

#include "ipc/ctl_status.hpp"

namespace ringsmb::ctl {

// The gauges of S in the Prometheus text format; S null: the server is not
// running (ringsmb_up 0 only).
void print_prometheus(std::ostream& out, const ipc::ServerStatus* s);

}  // namespace ringsmb::ctl
