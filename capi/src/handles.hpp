// What the opaque C handles hold.
#pragma once

#include <memory>

#include "comm/communicator.hpp"
#include "parallel/mesh/mesh.hpp"
#include "parallel/pipeline/schedule.hpp"
#include "dtrain/comm.h"
#include "dtrain/mesh.h"
#include "dtrain/pipeline.h"
#include "dtrain/tp.h"

struct dt_comm {
  std::shared_ptr<dtrain::comm::Communicator> impl;
};

// A request keeps its communicator alive so that waiting can record a failure
// even after the caller destroyed the dt_comm.
struct dt_request {
  std::shared_ptr<dtrain::comm::Communicator> comm;
  dtrain::comm::RequestPtr op;
};

struct dt_mesh {
  std::unique_ptr<dtrain::parallel::mesh::Mesh> impl;
};

struct dt_pipeline_schedule {
  dtrain::parallel::pipeline::Schedule impl;
};
