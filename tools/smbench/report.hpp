// smbench's output: a human summary and one "RESULT key=value ..." line
// that bench/run parses.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "workload.hpp"

namespace ringsmb::smbench {

void report_files(const Options& opt, Stats& stats, double seconds);
// Prints "RESULT k=v ..." for the given pairs.
void report_result(const std::vector<std::pair<std::string, double>>& kv);

}  // namespace ringsmb::smbench
