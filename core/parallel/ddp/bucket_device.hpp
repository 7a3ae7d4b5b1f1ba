// Where a DDP's buckets live and how gradients move in and out of them: host
// memory with the CPU conversion loops, or the gradients' CUDA device with
// kernels queued on a stream of the DDP's own.
//
// CUDA ordering: the trainer produces gradients on its stream and uses the
// averages there (the `stream` given at creation; NULL: the legacy default
// stream). pack() makes the DDP's stream wait for what the trainer's stream
// has queued so far, so a gradient is read only once backward has written
// it, without blocking the caller; allreduces are queued on the DDP's stream;
// finish() blocks until the averages are written back, so that they are in
// place for any stream when dt_ddp_wait() returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <dlpack/dlpack.h>

#include "base/tensor.hpp"
#include "parallel/ddp/options.hpp"

namespace dtrain::parallel::ddp {

class BucketDevice {
 public:
  virtual ~BucketDevice() = default;

  // `bytes` of bucket memory, 256-byte aligned, valid while this object lives.
  virtual void* allocate(std::size_t bytes) = 0;
  // The device buckets are on, for the DLTensors handed to the communicator.
  virtual DLDevice device() const = 0;
  // The stream the buckets' allreduces are ordered on (nullptr on the host).
  virtual void* stream() const = 0;

  // bucket[0, count) = gradient * scale, converted to `wire`.
  virtual void pack(const TensorView& gradient, DType wire, void* bucket, double scale) = 0;
  // bucket[0, count) = 0 in `wire`.
  virtual void zero(DType wire, void* bucket, std::int64_t count) = 0;
  // gradient = bucket * scale, converted from `wire`.
  virtual void unpack(DType wire, const void* bucket, const TensorView& gradient, double scale) = 0;
  // Returns once every unpack() queued so far has written its gradient.
  virtual void finish() = 0;
};

// The device for `gradients`, all in one place (common::check_tensors with
// Placement::one_device), ordered after the trainer's `stream` on CUDA.
// Throws DT_ERR_UNSUPPORTED for CUDA gradients that `compression` would need
// converted in a way the device kernels cannot (f64 to 16 bits).
std::unique_ptr<BucketDevice> make_bucket_device(std::span<const TensorView> gradients, Compression compression,
                                                 void* stream);

}  // namespace dtrain::parallel::ddp
