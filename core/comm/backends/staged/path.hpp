// Which path a communicator's CUDA tensors take: NCCL, or staged through
// pinned host memory over the host backend (UCX). Every rank must choose the
// same, so each rank describes what it has (DeviceCaps), the descriptions
// are exchanged, and every rank applies the same pure rule to all of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dtrain::comm::staged {

struct DeviceCaps {
  int device = -1;      // the CUDA ordinal this rank uses; -1: none usable
  std::string machine;  // identifies the machine (its boot id, else its host name)
  std::string bus_id;   // the device's PCI bus id: two ranks with one bus id share a GPU
  bool nccl = false;    // NCCL could be loaded
};

// A line-based text ("device=0\nmachine=...\nbus=...\nnccl=1\n") and back;
// decode returns nullopt for text that is not an encoding.
std::string encode(const DeviceCaps& caps);
std::optional<DeviceCaps> decode(const std::string& text);

enum class DevicePath {
  none,    // this rank has no device: CUDA tensors are refused before they get here
  nccl,    // CUDA tensors over NCCL
  staged,  // CUDA tensors staged through pinned memory over the host backend
};
const char* path_name(DevicePath path);

struct PathChoice {
  DevicePath path = DevicePath::none;
  std::string reason;  // why NCCL is not used, when it is not (for logs and errors)
};

// The path of rank `self` given every rank's caps and dt_comm_options.backend
// (a dt_backend value). NCCL needs every rank to have a device and NCCL and
// no two ranks of one machine to share a GPU. DT_BACKEND_AUTO takes NCCL when
// possible and stages otherwise; DT_BACKEND_UCX always stages;
// DT_BACKEND_NCCL throws DT_ERR_UNSUPPORTED with the reason when NCCL is not
// possible (on every rank alike).
PathChoice choose_path(int backend, const std::vector<DeviceCaps>& ranks, int self);

}  // namespace dtrain::comm::staged
