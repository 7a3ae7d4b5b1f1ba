#include "device/queue.hpp"

#include <cstring>
#include <map>
#include <new>
#include <string>

#include "base/error.hpp"
#include "device/cpu/convert.hpp"
#include "device/cpu/optim_kernels.hpp"
#include "device/cpu/reduce.hpp"

namespace dtrain::device {

#ifdef DTRAIN_HAVE_CUDA
// device/cuda/queue.cpp
std::unique_ptr<Queue> make_cuda_queue(int device);
#endif

namespace {

// Host memory: every call runs before it returns, so ordering is free.
class HostQueue final : public Queue {
 public:
  // What cudaMalloc gives, so that code written for both devices sees one
  // alignment: every element type and vector load, no cache line shared
  // between two buffers.
  static constexpr std::align_val_t kAlignment{256};

  Memory memory() const override { return Memory::host; }
  int device_id() const override { return 0; }
  void* stream() const override { return nullptr; }

  void* allocate_unset(std::size_t bytes) override { return allocate_pinned(bytes); }
  void release(void* data, std::size_t) noexcept override { release_pinned(data); }
  // Host memory is as fast to copy as host memory gets.
  void* allocate_pinned(std::size_t bytes) override {
    void* data = ::operator new[](bytes == 0 ? 1 : bytes, kAlignment, std::nothrow);
    if (data == nullptr) raise(DT_ERR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    return data;
  }
  void release_pinned(void* data) noexcept override { ::operator delete[](data, kAlignment); }

  void zero(void* data, std::size_t bytes) override {
    if (bytes > 0) std::memset(data, 0, bytes);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0 && dst != src) std::memcpy(dst, src, bytes);
  }
  void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                 std::size_t rows) override {
    for (std::size_t row = 0; row < rows; ++row) {
      copy(static_cast<std::byte*>(dst) + row * dst_pitch, static_cast<const std::byte*>(src) + row * src_pitch,
           row_bytes);
    }
  }
  void fill(DType dtype, void* data, std::int64_t count, double value) override {
    if (count == 0) return;
    cpu::scaled_copy(DType::f64, &value, dtype, data, 1, 1.0);
    const std::size_t size = dtype_size(dtype);
    for (std::int64_t i = 1; i < count; ++i) std::memcpy(static_cast<std::byte*>(data) + i * size, data, size);
  }
  void divide(DType dtype, void* data, std::int64_t count, double divisor) override {
    cpu::divide(dtype, data, count, divisor);
  }
  void add(DType dtype, void* dst, const void* src, std::int64_t count) override {
    cpu::reduce(cpu::Reduction::sum, dtype, dst, src, count);
  }
  void cast(DType to, void* dst, DType from, const void* src, std::int64_t count, double scale) override {
    if (to == from && scale == 1.0) {
      copy(dst, src, static_cast<std::size_t>(count) * dtype_size(to));
    } else {
      cpu::scaled_copy(from, src, to, dst, count, scale);
    }
  }
  bool can_cast(DType from, DType to) const override { return dtype_is_floating(from) && dtype_is_floating(to); }

  void wait_for(void*) override {}
  void signal(void*) override {}
  void synchronize() override {}
  std::unique_ptr<Fence> fence() override { return std::make_unique<Reached>(); }
  std::unique_ptr<FusedUpdate> fused_update(std::span<const Slot> slots) override {
    return cpu::make_fused_update(slots);
  }

 private:
  // The work before it ran in the calls that queued it.
  struct Reached final : Fence {
    bool reached() override { return true; }
  };
};

}  // namespace

TensorView Queue::view(void* data, std::int64_t count, DType dtype) const {
  TensorView view;
  view.data = data;
  view.count = count;
  view.dtype = dtype;
  view.memory = memory();
  view.device_id = device_id();
  view.stream = stream();
  return view;
}

std::unique_ptr<Queue> make_host_queue() { return std::make_unique<HostQueue>(); }

Queue& thread_queue(const TensorView& like) {
  static HostQueue host;  // stateless: one serves every thread
  if (like.memory == Memory::host) return host;
  thread_local std::map<int, std::unique_ptr<Queue>> devices;
  std::unique_ptr<Queue>& queue = devices[like.device_id];
  if (!queue) queue = make_queue(like);
  return *queue;
}

std::unique_ptr<Queue> make_queue(Memory memory, int device_id) {
  if (memory == Memory::host) return make_host_queue();
#ifdef DTRAIN_HAVE_CUDA
  return make_cuda_queue(device_id);
#else
  (void)device_id;
  raise(DT_ERR_UNSUPPORTED, "this build of libdtrain has no CUDA support");
#endif
}

std::unique_ptr<Queue> make_queue(const TensorView& like) { return make_queue(like.memory, like.device_id); }

}  // namespace dtrain::device
