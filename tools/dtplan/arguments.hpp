// dtplan's command line: the model, the cluster, the batch and what to
// search, as the C API's structs.
#pragma once

#include <dtrain.h>

#include <string>

namespace dtplan {

struct Arguments {
  dt_plan_model model = DT_PLAN_MODEL_INIT;
  dt_plan_cluster cluster = DT_PLAN_CLUSTER_INIT;
  dt_plan_options options = DT_PLAN_OPTIONS_INIT;
  int top = 10;
  std::string json;
  std::string svg;
  std::string compare;  // a configuration to hold against the fastest, "tp=8,pp=4,..."
};

// Exits with a usage message on --help or a bad argument.
Arguments parse(int argc, char** argv);

// "tp=8,pp=4,dp=32,zero=1,schedule=interleaved,v=2,mb=1,recompute=full";
// what is not named keeps DT_PLAN_CONFIG_INIT's value. Throws
// std::invalid_argument saying what is wrong with a bad one.
dt_plan_config parse_config(const std::string& text);

}  // namespace dtplan
