// How a DataParallel reduces gradients. Every rank must pass the same
// options: they are part of the layout the ranks agree on at creation.
#pragma once

#include <cstdint>

namespace dtrain::parallel::ddp {

// The type gradients travel in. f32 and f64 gradients are cast down to the
// 16-bit type for the allreduce and back afterwards; gradients that are
// already 16-bit travel as they are. The values are the C API's
// dt_ddp_compression.
enum class Compression { none = 0, f16 = 1, bf16 = 2 };

struct Options {
  // A bucket is closed once it holds at least this many bytes on the wire
  // (after compression); a larger gradient gets a bucket of its own.
  std::int64_t bucket_bytes = std::int64_t{25} << 20;
  Compression compression = Compression::none;
  // wait() treats gradients never marked in a step as zero instead of failing.
  bool find_unused = false;
  // Average weighted by each rank's set_local_weight() (for example its
  // sample count) instead of uniformly.
  bool weighted = false;
};

const char* compression_name(Compression compression);

// Throws DT_ERR_INVALID_ARGUMENT for a bucket size below one byte or a
// compression that is not one of the above.
void check_options(const Options& options);

}  // namespace dtrain::parallel::ddp
