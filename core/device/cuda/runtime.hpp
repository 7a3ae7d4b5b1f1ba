// The CUDA runtime as libdtrain uses it: the current device, streams, events,
// pinned host memory and copies, each call checked (device/cuda/error.hpp).
// Objects own what they create and release it in their destructors, which
// never throw.
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

namespace dtrain::device::cuda {

// Makes `device` current on this thread for the guard's lifetime and then
// restores the caller's device, so that libdtrain never changes a trainer's
// current device behind its back.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// A stream on `device`. By default it synchronises with the legacy default
// stream (cudaStreamDefault), so work a trainer queued on stream 0 before a
// call is ordered before the work libdtrain queues; non_blocking creates a
// stream that does not.
class Stream {
 public:
  explicit Stream(int device, bool non_blocking = false);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  // Blocks until everything queued so far has run; throws its error.
  void synchronize() const;

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
};

// An event without timing (the cheapest kind), for completion tracking.
class Event {
 public:
  explicit Event(int device);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);
  // True once the work before the last record() has run; throws the error
  // of a failed device (a sticky error) instead.
  bool query() const;

 private:
  int device_;
  cudaEvent_t event_ = nullptr;
};

// Page-locked host memory (cudaHostAlloc, portable to every device): copies
// to and from it run at full speed and asynchronously.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// Device memory (cudaMalloc) on the current device; for tests and scratch.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  int device_ = -1;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// Asynchronous copies on `stream` between any two kinds of memory
// (cudaMemcpyDefault: the driver tells them apart through unified addressing).
void copy_async(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);
// `rows` rows of `width` bytes, row r from src + r * src_pitch to dst + r * dst_pitch.
void copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                   std::size_t rows, cudaStream_t stream);

// "0000:1a:00.0", which identifies a GPU across processes.
std::string pci_bus_id(int device);

// Where a pointer points, as the driver sees it.
struct PointerInfo {
  enum class Kind { host, pinned_host, device, managed } kind = Kind::host;
  int device = -1;  // for device and managed memory
};
PointerInfo pointer_info(const void* pointer);

// Refuses, with DT_ERR_INVALID_ARGUMENT naming `name`, `bytes` at `data`
// labelled kDLCUDA on `device` that are not that device's memory (or managed
// memory): kernels would fault on them and end the trainer's CUDA context.
// Nothing to check for 0 bytes.
void check_device_memory(const void* data, std::size_t bytes, const std::string& name, int device);

}  // namespace dtrain::device::cuda
