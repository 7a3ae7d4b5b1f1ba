#include "comm/backends/staged/router.hpp"

#include <span>
#include <string>
#include <utility>

#include "base/error.hpp"
#include "base/log.hpp"

namespace dtrain::comm::staged {

DeviceRouter::DeviceRouter(std::unique_ptr<Backend> host, Devices devices)
    : host_(std::move(host)),
      devices_(std::move(devices)),
      name_(devices_.path == DevicePath::none ? std::string(host_->name())
                                              : std::string(host_->name()) + "+" + path_name(devices_.path)) {}

DeviceRouter::~DeviceRouter() {
  abort();
  // The host backend goes first: once it is gone nothing can write into the
  // staging memory the staged path frees next.
  host_.reset();
  std::lock_guard<std::mutex> lock(state_mutex_);
  staged_.reset();
  nccl_.reset();
}

DeviceRouter::Route DeviceRouter::route(const char* op, const Operand* operands, std::size_t count) const {
  bool any_device = false;
  bool all_device = true;
  for (const Operand& operand : std::span(operands, count)) {
    const TensorView& view = *operand.view;
    if (view.memory != Memory::cuda) {
      all_device = false;
      continue;
    }
    any_device = true;
    if (devices_.path == DevicePath::none) {
      raise(DT_ERR_UNSUPPORTED, std::string(operand.name) + ": this communicator has no CUDA device");
    }
    if (view.device_id != devices_.device) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(operand.name) + " is on CUDA device " +
                                         std::to_string(view.device_id) + " but this communicator uses device " +
                                         std::to_string(devices_.device) + " (options.device)");
    }
    if (view.count > 0 && devices_.check) devices_.check(view, operand.name);
  }
  if (!any_device) return Route::host;
  if (devices_.path == DevicePath::nccl) {
    if (!all_device) {
      raise(DT_ERR_UNSUPPORTED, std::string(op) +
                                    ": host and CUDA tensors in one operation are not supported with NCCL; "
                                    "use CUDA tensors for all of them");
    }
    return Route::nccl;
  }
  return Route::staged;
}

void DeviceRouter::adopt_nccl(std::unique_ptr<Backend> nccl) {
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    nccl_ = std::move(nccl);
  }
  if (aborted_.load()) nccl_->abort();
}

Backend& DeviceRouter::nccl() {
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    if (nccl_) return *nccl_;
  }
  std::lock_guard<std::mutex> setup(setup_mutex_);
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    if (nccl_) return *nccl_;
  }
  if (aborted_.load()) raise(DT_ERR_ABORTED, "rank " + std::to_string(devices_.rank) + ": aborted");
  if (nccl_failure_ != DT_OK) raise(nccl_failure_, nccl_failure_text_);
  if (!devices_.make_nccl) raise(DT_ERR_UNSUPPORTED, "this build has no NCCL backend");
  try {
    adopt_nccl(devices_.make_nccl(*host_, devices_.rank, devices_.size, aborted_));
  } catch (const Error& e) {
    nccl_failure_ = e.status();
    nccl_failure_text_ = std::string("the NCCL communicator could not be created: ") + e.what();
    DT_LOG(warn) << nccl_failure_text_;
    raise(nccl_failure_, nccl_failure_text_);
  }
  std::lock_guard<std::mutex> lock(state_mutex_);
  return *nccl_;
}

Backend& DeviceRouter::staged() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!staged_) {
    if (aborted_.load()) raise(DT_ERR_ABORTED, "rank " + std::to_string(devices_.rank) + ": aborted");
    if (!devices_.make_lanes) raise(DT_ERR_UNSUPPORTED, "this build cannot stage CUDA tensors");
    staged_ = std::make_unique<StagedBackend>(*host_, devices_.make_lanes(), devices_.rank, devices_.size,
                                              devices_.timeout_ms, devices_.tuning);
  }
  return *staged_;
}

void DeviceRouter::connect_devices() {
  if (devices_.path == DevicePath::nccl) nccl();
}

Backend& DeviceRouter::backend_for(Route way) {
  switch (way) {
    case Route::host: return *host_;
    case Route::nccl: return nccl();
    case Route::staged: return staged();
  }
  raise(DT_ERR_INTERNAL, "no route");
}

RequestPtr DeviceRouter::start(const Collective& op) {
  const char* name = call_kind_name(op.kind);
  switch (op.kind) {
    case CallKind::barrier: return host_->start(op);
    case CallKind::p2p_group: {
      std::vector<std::string> names;
      names.reserve(op.group.size());
      std::vector<Operand> operands;
      operands.reserve(op.group.size());
      for (std::size_t i = 0; i < op.group.size(); ++i) {
        names.push_back("ops[" + std::to_string(i) + "].tensor");
        operands.push_back({&op.group[i].buf, names.back().c_str()});
      }
      return backend_for(route(name, operands.data(), operands.size())).start(op);
    }
    case CallKind::send: return backend_for(route(name, {{&op.send, "buf"}})).start(op);
    case CallKind::recv: return backend_for(route(name, {{&op.recv, "buf"}})).start(op);
    case CallKind::broadcast: return backend_for(route(name, {{&op.recv, "buf"}})).start(op);
    default: return backend_for(route(name, {{&op.send, "send"}, {&op.recv, "recv"}})).start(op);
  }
}

std::unique_ptr<Backend> DeviceRouter::split(int color, int key, int* new_rank, int* new_size) {
  auto child_host = host_->split(color, key, new_rank, new_size);
  if (!child_host) return nullptr;
  Devices devices = devices_;
  devices.rank = *new_rank;
  devices.size = *new_size;
  // The child creates its own NCCL communicator at its first CUDA operation
  // (ncclCommInitRank, the unique id shared over the child's host backend)
  // instead of taking one from ncclCommSplit of ours: children made by
  // ncclCommSplit corrupted the heap at their first operation with NCCL
  // 2.28.9 (half the runs of a world of one on an H200), and a fresh
  // communicator did not.
  return std::make_unique<DeviceRouter>(std::move(child_host), std::move(devices));
}

void DeviceRouter::abort() {
  aborted_.store(true);
  host_->abort();
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (staged_) staged_->abort();
  if (nccl_) nccl_->abort();
}

bool DeviceRouter::wait(const RequestPtr& request, Clock::time_point deadline) {
  return host_->wait(request, deadline);
}

std::string DeviceRouter::unresponsive_ranks(const Request& request) { return host_->unresponsive_ranks(request); }

}  // namespace dtrain::comm::staged
