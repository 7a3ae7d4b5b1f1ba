// A plan for people and programs: a terminal table, JSON, and an SVG chart
// of the memory and time breakdowns of the fastest configurations.
#pragma once

#include <cstddef>
#include <string>

#include "plan/search.hpp"

namespace dtrain::plan {

// "dp=32 tp=8 pp=4 cp=1 ep=1 zero=1 1f1b mb=2 recompute=full" style.
std::string describe(const Config& config);
const char* schedule_name(Schedule schedule);
const char* recompute_name(Recompute recompute);

// The `top` fastest configurations (all kept when top is 0) and the rejections.
std::string table(const Plan& plan, std::size_t top);
std::string json(const Plan& plan, std::size_t top);
std::string svg(const Plan& plan, std::size_t top);

}  // namespace dtrain::plan
