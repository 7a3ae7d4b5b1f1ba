// Holds one configuration against another, term by term, and says where
// the time goes: the reasoning behind a ranking.
#pragma once

#include <string>

#include <dtrain.h>

namespace dtplan {

// Lines comparing `other` with `best`: each term of the step time and of
// the memory, and the terms that make the difference, largest first.
std::string explain(const dt_plan_estimate& best, const dt_plan_estimate& other);

}  // namespace dtplan
