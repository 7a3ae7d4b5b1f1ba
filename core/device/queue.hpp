// A strategy's own memory and the work it does on it, written once for both
// devices: host memory, where every call runs on the calling thread before
// it returns, or one CUDA device, where calls are queued, in order, on a
// stream the Queue owns and return at once.
//
// The trainer's work runs on a stream of its own (CUDA; NULL is the legacy
// default stream). The Queue orders itself against it through events, never
// by blocking: wait_for(stream) before reading what the trainer wrote,
// signal(stream) before the trainer uses what the Queue wrote, and
// synchronize() where the host itself reads results or must know the work
// has run. On the host all three have nothing to do.
//
// Memory comes from allocate() and goes back through release(); on CUDA both
// are ordered on the stream (cudaMallocAsync / cudaFreeAsync), so a buffer
// released after the work that uses it is freed once that work has run.
// Copies take any memory the device can address (host, pinned or its own);
// allocate_pinned() gives host memory they reach at full speed. A Fence
// tells, without blocking, when the work queued before it has run.
//
// Thread-safety: calls from several threads are allowed and queue in some
// order; a caller that needs an order between threads makes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "base/dtype.hpp"
#include "base/tensor.hpp"
#include "device/fused_update.hpp"
#include "device/slot.hpp"

namespace dtrain::device {

class Fence {
 public:
  virtual ~Fence() = default;
  // True once the work queued before the fence has run; throws the error of
  // a device that failed (as a dtrain::Error).
  virtual bool reached() = 0;
};

class Queue {
 public:
  virtual ~Queue() = default;

  virtual Memory memory() const = 0;
  virtual int device_id() const = 0;
  // The cudaStream_t work is queued on, for collectives on the Queue's
  // buffers (nullptr on the host).
  virtual void* stream() const = 0;

  // `bytes` of zeroed memory, aligned for any element type (a pointer that
  // must not be dereferenced when bytes is 0). Throws DT_ERR_OUT_OF_MEMORY.
  void* allocate(std::size_t bytes) {
    void* data = allocate_unset(bytes);
    zero(data, bytes);
    return data;
  }
  // The same, not zeroed: for a buffer the next work overwrites whole (the
  // result of an allgather), where zeroing would only cost a pass over it.
  virtual void* allocate_unset(std::size_t bytes) = 0;
  // Gives back what allocate() or allocate_unset() returned, after the work
  // queued so far.
  virtual void release(void* data, std::size_t bytes) noexcept = 0;
  // `bytes` of host memory that copies to and from the device reach at full
  // speed: page-locked on CUDA (cudaHostAlloc, usable from every device),
  // ordinary on the host. Not zeroed. Throws DT_ERR_OUT_OF_MEMORY.
  virtual void* allocate_pinned(std::size_t bytes) = 0;
  // Frees what allocate_pinned() returned, at once: no queued work may
  // still use it.
  virtual void release_pinned(void* data) noexcept = 0;

  virtual void zero(void* data, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // `rows` runs of `row_bytes` each, from src to dst, whose consecutive rows
  // start `src_pitch` and `dst_pitch` bytes apart (a block of a matrix).
  virtual void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                         std::size_t row_bytes, std::size_t rows) = 0;
  // data[i] = value converted to `dtype` (rounded to nearest even for
  // 16-bit types), for a floating dtype.
  virtual void fill(DType dtype, void* data, std::int64_t count, double value) = 0;
  // data[i] /= divisor, for a floating dtype (16-bit types computed in f32).
  virtual void divide(DType dtype, void* data, std::int64_t count, double divisor) = 0;
  // dst[i] += src[i]; dst and src equal or disjoint.
  virtual void add(DType dtype, void* dst, const void* src, std::int64_t count) = 0;
  // dst[i] = src[i] * scale converted from `from` to `to`, computed in f32
  // (f64 for f64) and rounded once; a plain copy when the dtypes are equal
  // and scale is 1. Pairs this Queue cannot convert (can_cast() false):
  // DT_ERR_UNSUPPORTED. dst == src only when the dtypes are equal.
  virtual void cast(DType to, void* dst, DType from, const void* src, std::int64_t count, double scale = 1.0) = 0;
  // Whether cast() takes `from` to `to`: any floating pair on the host; f32
  // to and from f16 or bf16, and any dtype to itself, on CUDA.
  virtual bool can_cast(DType from, DType to) const = 0;

  // Work queued from now on runs after the work `stream` holds now.
  virtual void wait_for(void* stream) = 0;
  // Work queued on `stream` from now on runs after the work queued here so far.
  virtual void signal(void* stream) = 0;
  // Returns once the work queued so far has run; throws its error.
  virtual void synchronize() = 0;
  // A Fence over the work queued so far.
  virtual std::unique_ptr<Fence> fence() = 0;

  // The optimizer's step over `slots` (fused_update.hpp), whose params,
  // grads, masters and state are in this Queue's memory, run on its stream.
  // The Slots' buffers must outlive it, as must the Queue.
  virtual std::unique_ptr<FusedUpdate> fused_update(std::span<const Slot> slots) = 0;

  // A view of `count` elements of `dtype` at `data`, in the Queue's memory,
  // ordered on its stream.
  TensorView view(void* data, std::int64_t count, DType dtype) const;
};

// A Queue over host memory.
std::unique_ptr<Queue> make_host_queue();
// A Queue for `memory` (host, or CUDA device `device_id` with a
// non-blocking stream of its own; DT_ERR_UNSUPPORTED in a build without
// CUDA).
std::unique_ptr<Queue> make_queue(Memory memory, int device_id);
// A Queue for `like`'s place: host memory, or its CUDA device (a
// non-blocking stream of its own on that device; DT_ERR_UNSUPPORTED in a
// build without CUDA).
std::unique_ptr<Queue> make_queue(const TensorView& like);
// The Queue for `like`'s place that the calling thread's blocking calls
// share (made on first use, kept until the thread ends), so that a call
// does not pay for a new stream. Each call must leave it with its work
// done (synchronize()) before it returns.
Queue& thread_queue(const TensorView& like);

}  // namespace dtrain::device
