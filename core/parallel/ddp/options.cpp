#include "parallel/ddp/options.hpp"

#include <string>

#include "base/error.hpp"

namespace dtrain::parallel::ddp {

const char* compression_name(Compression compression) {
  switch (compression) {
    case Compression::none: return "none";
    case Compression::f16: return "f16";
    case Compression::bf16: return "bf16";
  }
  return "?";
}

void check_options(const Options& options) {
  if (options.bucket_bytes < 1) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "bucket_bytes = " + std::to_string(options.bucket_bytes) + " must be at least 1");
  }
  switch (options.compression) {
    case Compression::none:
    case Compression::f16:
    case Compression::bf16:
      return;
  }
  raise(DT_ERR_INVALID_ARGUMENT, "compression = " + std::to_string(static_cast<int>(options.compression)) +
                                     " is not a dt_ddp_compression (none 0, f16 1, bf16 2)");
}

}  // namespace dtrain::parallel::ddp
