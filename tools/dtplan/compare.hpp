// Holds one configuration against another, term by term, and says where
// the time goes: the reasoning behind a ranking.
#pragma once

#include <dtrain.h>

#include <string>

namespace dtplan {

// Lines comparing `other` with `best`: each term of the step time and of
// the memory, and the terms that make the difference, largest first.
std::string explain(const dt_plan_estimate& best, const dt_plan_estimate& other);

}  // namespace dtplan
