#include "device/cuda/runtime.hpp"

#include <utility>

#include "base/error.hpp"
#include "device/cuda/error.hpp"

namespace dtrain::device::cuda {

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) {
    check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
  } else {
    previous_ = -1;  // nothing to restore
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Stream::Stream(int device, bool non_blocking) : device_(device) {
  DeviceGuard guard(device);
  check(cudaStreamCreateWithFlags(&stream_, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault),
        "cudaStreamCreateWithFlags");
}

Stream::~Stream() {
  // Work still queued completes first; the call itself does not wait.
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void Stream::synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

Event::Event(int device) : device_(device) {
  DeviceGuard guard(device);
  check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
}

Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

void Event::record(cudaStream_t stream) { check(cudaEventRecord(event_, stream), "cudaEventRecord"); }

bool Event::query() const {
  const cudaError_t rc = cudaEventQuery(event_);
  if (rc == cudaErrorNotReady) return false;
  check(rc, "cudaEventQuery");
  return true;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  check(cudaHostAlloc(&data_, bytes, cudaHostAllocPortable),
        "cudaHostAlloc of " + std::to_string(bytes) + " bytes of pinned host memory");
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFreeHost(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : device_(device), size_(bytes) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  check(cudaMalloc(&data_, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes on device " +
                                       std::to_string(device));
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(other.device_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    device_ = other.device_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void copy_async(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
        "cudaMemcpyAsync of " + std::to_string(bytes) + " bytes");
}

void copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                   std::size_t rows, cudaStream_t stream) {
  if (width == 0 || rows == 0) return;
  if (rows == 1 || (dst_pitch == width && src_pitch == width)) {
    copy_async(dst, src, width * rows, stream);
    return;
  }
  check(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDefault, stream),
        "cudaMemcpy2DAsync of " + std::to_string(rows) + " rows of " + std::to_string(width) + " bytes");
}

std::string pci_bus_id(int device) {
  char id[32] = {};
  check(cudaDeviceGetPCIBusId(id, sizeof id, device), "cudaDeviceGetPCIBusId(" + std::to_string(device) + ")");
  return id;
}

PointerInfo pointer_info(const void* pointer) {
  cudaPointerAttributes attributes{};
  check(cudaPointerGetAttributes(&attributes, pointer), "cudaPointerGetAttributes");
  PointerInfo info;
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
      info.kind = PointerInfo::Kind::device;
      info.device = attributes.device;
      break;
    case cudaMemoryTypeManaged:
      info.kind = PointerInfo::Kind::managed;
      info.device = attributes.device;
      break;
    case cudaMemoryTypeHost:
      info.kind = PointerInfo::Kind::pinned_host;
      break;
    default:
      info.kind = PointerInfo::Kind::host;
      break;
  }
  return info;
}

void check_device_memory(const void* data, std::size_t bytes, const std::string& name, int device) {
  if (bytes == 0) return;
  const PointerInfo info = pointer_info(data);
  if (info.kind != PointerInfo::Kind::device && info.kind != PointerInfo::Kind::managed) {
    raise(DT_ERR_INVALID_ARGUMENT, name +
                                       ": the tensor says kDLCUDA but its data is not CUDA device memory "
                                       "(use kDLCPU or kDLCUDAHost for host memory)");
  }
  if (info.kind == PointerInfo::Kind::device && info.device != device) {
    raise(DT_ERR_INVALID_ARGUMENT, name + ": its data is memory of CUDA device " + std::to_string(info.device) +
                                       ", not of device " + std::to_string(device));
  }
}

}  // namespace dtrain::device::cuda
