// Test helper: the first `stages` ranks of the world as a pipeline group.
#pragma once

#include <gtest/gtest.h>

#include "dtrain.h"

namespace dtrain::testing {

// A communicator of world ranks 0..stages-1 in `*out` on those ranks, NULL
// on the others. Collective over `world`.
inline void split_pipeline_group(dt_comm* world, int world_rank, int stages, dt_comm** out) {
  const int color = world_rank < stages ? 0 : DT_UNDEF;
  ASSERT_EQ(dt_comm_split(out, world, color, world_rank), DT_OK) << dt_error_last();
}

}  // namespace dtrain::testing
