// Moving rows between a whole sequence and one rank's shard of it, in
// either layout (dtrain/cp.h): local copies for a caller that has the whole
// sequence, such as a data loader or a test.
#pragma once

#include "base/tensor_list.hpp"
#include "parallel/cp/layout.hpp"

namespace dtrain::parallel::cp {

enum class ShardDirection { full_to_local, local_to_full };

// Checks both tensors (host memory, as the C API parsed them; one dtype,
// the same trailing dimensions, `full`'s rows split evenly by the layout
// into `local`'s; otherwise DT_ERR_INVALID_ARGUMENT), then copies rank
// `cp_rank`'s rows in `direction`.
void copy_shard(SequenceLayout layout, int cp_size, int cp_rank, const CheckedTensor& full,
                const CheckedTensor& local, ShardDirection direction);

}  // namespace dtrain::parallel::cp
