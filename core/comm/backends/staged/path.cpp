#include "comm/backends/staged/path.hpp"

#include <map>
#include <sstream>
#include <utility>

#include "base/error.hpp"
#include "dtrain/comm.h"

namespace dtrain::comm::staged {

std::string encode(const DeviceCaps& caps) {
  return "device=" + std::to_string(caps.device) + "\nmachine=" + caps.machine + "\nbus=" + caps.bus_id +
         "\nnccl=" + (caps.nccl ? "1" : "0") + "\n";
}

std::optional<DeviceCaps> decode(const std::string& text) {
  DeviceCaps caps;
  std::istringstream lines(text);
  std::string line;
  int seen = 0;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string key = line.substr(0, eq);
    const std::string value = line.substr(eq + 1);
    if (key == "device") {
      try {
        std::size_t used = 0;
        caps.device = std::stoi(value, &used);
        if (used != value.size()) return std::nullopt;
      } catch (const std::exception&) {
        return std::nullopt;
      }
      seen |= 1;
    } else if (key == "machine") {
      caps.machine = value;
      seen |= 2;
    } else if (key == "bus") {
      caps.bus_id = value;
      seen |= 4;
    } else if (key == "nccl") {
      if (value != "0" && value != "1") return std::nullopt;
      caps.nccl = value == "1";
      seen |= 8;
    } else {
      return std::nullopt;
    }
  }
  if (seen != 15) return std::nullopt;
  return caps;
}

const char* path_name(DevicePath path) {
  switch (path) {
    case DevicePath::none: return "none";
    case DevicePath::nccl: return "nccl";
    case DevicePath::staged: return "staged";
  }
  return "?";
}

namespace {

// Why NCCL cannot serve these ranks; empty when it can.
std::string nccl_obstacle(const std::vector<DeviceCaps>& ranks) {
  std::map<std::pair<std::string, std::string>, int> owner;  // (machine, bus id) -> first rank
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    const DeviceCaps& caps = ranks[r];
    if (caps.device < 0) return "rank " + std::to_string(r) + " has no usable CUDA device";
    if (!caps.nccl) return "rank " + std::to_string(r) + " cannot load NCCL";
    auto [it, fresh] = owner.emplace(std::make_pair(caps.machine, caps.bus_id), r);
    if (!fresh) {
      return "ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " share the GPU " + caps.bus_id +
             " (NCCL needs one GPU per rank)";
    }
  }
  return {};
}

}  // namespace

PathChoice choose_path(int backend, const std::vector<DeviceCaps>& ranks, int self) {
  PathChoice choice;
  const bool has_device = self >= 0 && self < static_cast<int>(ranks.size()) && ranks[self].device >= 0;
  const std::string obstacle = nccl_obstacle(ranks);
  switch (backend) {
    case DT_BACKEND_NCCL:
      if (!obstacle.empty()) {
        raise(DT_ERR_UNSUPPORTED, "options.backend = DT_BACKEND_NCCL, but NCCL cannot serve this communicator: " +
                                      obstacle);
      }
      choice.path = DevicePath::nccl;
      return choice;
    case DT_BACKEND_UCX:
      choice.reason = "options.backend = DT_BACKEND_UCX";
      break;
    default:
      if (obstacle.empty()) {
        choice.path = DevicePath::nccl;
        return choice;
      }
      choice.reason = obstacle;
      break;
  }
  choice.path = has_device ? DevicePath::staged : DevicePath::none;
  return choice;
}

}  // namespace dtrain::comm::staged
