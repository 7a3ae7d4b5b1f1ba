// The backend a communicator talks to when this build has CUDA: it sends
// each operation where its tensors live. Host tensors go to the host backend
// (UCX, or self for a world of one); operations with CUDA tensors go to the
// NCCL backend or to the staged path (StagedBackend over the host backend),
// as choose_path() decided for the whole communicator. Barriers always run
// on the host backend.
//
// The NCCL communicator is created on the first CUDA operation (or at once
// with DT_BACKEND_NCCL): every rank must reach one, as NCCL's own
// initialisation requires. Its unique id travels through the host backend.
// A failed creation is remembered and reported again by every later CUDA
// operation. split() splits the host backend (collective); a child creates
// its own NCCL communicator at its first CUDA operation, as its parent did.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "comm/backend.hpp"
#include "comm/backends/staged/path.hpp"
#include "comm/backends/staged/staged_backend.hpp"

namespace dtrain::comm::staged {

struct Devices {
  int rank = 0;
  int size = 1;
  int device = -1;  // this rank's CUDA device; -1 for none
  int timeout_ms = 300000;
  DevicePath path = DevicePath::none;
  Tuning tuning;
  // Creates the NCCL backend of rank `rank` of `size` (collective; `host` is
  // the group's host backend, for sharing the unique id). `aborted` turns
  // true when the communicator is aborted meanwhile.
  std::function<std::unique_ptr<Backend>(Backend& host, int rank, int size, const std::atomic<bool>& aborted)>
      make_nccl;
  // The staged path's queues (pinned memory and streams of `device`).
  std::function<Lanes()> make_lanes;
  // Checks a CUDA tensor's memory before anything reads it (throwing
  // DT_ERR_INVALID_ARGUMENT naming `name`); may be empty.
  std::function<void(const TensorView& view, const char* name)> check;
};

class DeviceRouter final : public Backend {
 public:
  DeviceRouter(std::unique_ptr<Backend> host, Devices devices);
  ~DeviceRouter() override;

  // "ucx", "ucx+nccl", "ucx+staged", "self+nccl" ...
  const char* name() const override { return name_.c_str(); }
  DevicePath path() const { return devices_.path; }

  // Routes `op` by its tensors (a group's together) and passes it on whole;
  // barriers go to the host backend.
  RequestPtr start(const Collective& op) override;
  std::unique_ptr<Backend> split(int color, int key, int* new_rank, int* new_size) override;
  void abort() override;

  // The host backend drives its own progress while waiting; requests of the
  // device paths complete on their own threads, so waiting through the host
  // backend serves every request.
  bool wait(const RequestPtr& request, Clock::time_point deadline) override;
  void expect_wait(bool on) override { host_->expect_wait(on); }
  void check_placement(const TensorView& view, const char* name) const override { route(name, {{&view, name}}); }
  std::string unresponsive_ranks(const Request& request) override;
  const PeerMemory* peer_memory() const override { return host_->peer_memory(); }

  // Creates the NCCL communicator now (collective); for DT_BACKEND_NCCL.
  void connect_devices();

 private:
  enum class Route { host, nccl, staged };
  struct Operand {
    const TensorView* view;
    const char* name;
  };
  Route route(const char* op, std::initializer_list<Operand> operands) const {
    return route(op, operands.begin(), operands.size());
  }
  Route route(const char* op, const Operand* operands, std::size_t count) const;
  Backend& backend_for(Route way);
  Backend& nccl();
  Backend& staged();
  void adopt_nccl(std::unique_ptr<Backend> nccl);

  std::unique_ptr<Backend> host_;
  const Devices devices_;
  const std::string name_;
  std::atomic<bool> aborted_{false};

  std::mutex setup_mutex_;  // one creation at a time (held during NCCL's creation)
  dt_status nccl_failure_ = DT_OK;
  std::string nccl_failure_text_;

  mutable std::mutex state_mutex_;  // guards the pointers (brief; abort() takes it)
  std::unique_ptr<Backend> nccl_;
  std::unique_ptr<Backend> staged_;
};

}  // namespace dtrain::comm::staged
