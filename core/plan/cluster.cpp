#include "plan/cluster.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "base/error.hpp"

namespace dtrain::plan {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

void positive(double value, const char* name) {
  if (!(value > 0) || !std::isfinite(value)) invalid(std::string("cluster.") + name + " must be a positive number");
}

// Per-GPU figures of the vendors' data sheets for SXM parts in 8-GPU nodes
// with one 200 Gb/s (A100, HDR) or 400 Gb/s (H100, H200, NDR) NIC per GPU.
// Bandwidths are what NCCL's bus bandwidth reaches, about 80 % of the
// signalling rate; gemm_efficiency is the share of peak cuBLAS reaches on
// large bf16 GEMMs. docs/planner.md lists the sources.
Cluster node_kind(const std::string& name) {
  Cluster c;
  c.gpus_per_node = 8;
  if (name == "a100") {
    c.gpu_memory = 80e9;
    c.peak_flops = 312e12;
    c.memory_bandwidth = 2.039e12;
    c.gemm_efficiency = 0.75;
    c.intra = {240e9, 8e-6};
    c.inter = {20e9, 12e-6};
  } else if (name == "h100") {
    c.gpu_memory = 80e9;
    c.peak_flops = 989e12;
    c.memory_bandwidth = 3.35e12;
    c.gemm_efficiency = 0.70;
    c.intra = {360e9, 8e-6};
    c.inter = {40e9, 12e-6};
  } else if (name == "h200") {
    c.gpu_memory = 141e9;
    c.peak_flops = 989e12;
    c.memory_bandwidth = 4.8e12;
    c.gemm_efficiency = 0.70;
    c.intra = {360e9, 8e-6};
    c.inter = {40e9, 12e-6};
  } else {
    invalid("unknown cluster preset \"" + name + "\"; the presets are a100, h100 and h200");
  }
  return c;
}

double number(const std::string& value, const std::string& where) {
  std::size_t used = 0;
  double result = 0;
  try {
    result = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size()) invalid(where + ": \"" + value + "\" is not a number");
  return result;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

void set(Cluster& c, const std::string& key, const std::string& value, const std::string& where) {
  struct Field {
    const char* name;
    double Cluster::*member;
  };
  static const Field fields[] = {{"gpu_memory", &Cluster::gpu_memory},
                                 {"peak_flops", &Cluster::peak_flops},
                                 {"memory_bandwidth", &Cluster::memory_bandwidth},
                                 {"gemm_efficiency", &Cluster::gemm_efficiency},
                                 {"overlap", &Cluster::overlap}};
  for (const Field& field : fields) {
    if (key == field.name) {
      c.*field.member = number(value, where);
      return;
    }
  }
  if (key == "nodes" || key == "gpus_per_node") {
    const double n = number(value, where);
    if (n != std::floor(n) || n < 1 || n > 1e7) invalid(where + ": " + key + " must be a whole number >= 1");
    (key == "nodes" ? c.nodes : c.gpus_per_node) = static_cast<int>(n);
  } else if (key == "intra_bandwidth") {
    c.intra.bandwidth = number(value, where);
  } else if (key == "intra_latency") {
    c.intra.latency = number(value, where);
  } else if (key == "inter_bandwidth") {
    c.inter.bandwidth = number(value, where);
  } else if (key == "inter_latency") {
    c.inter.latency = number(value, where);
  } else {
    invalid(where + ": unknown key \"" + key + "\"");
  }
}

}  // namespace

void check(const Cluster& c) {
  if (c.nodes < 1) invalid("cluster.nodes must be >= 1");
  if (c.gpus_per_node < 1) invalid("cluster.gpus_per_node must be >= 1");
  positive(c.gpu_memory, "gpu_memory");
  positive(c.peak_flops, "peak_flops");
  positive(c.memory_bandwidth, "memory_bandwidth");
  positive(c.gemm_efficiency, "gemm_efficiency");
  if (c.gemm_efficiency > 1) invalid("cluster.gemm_efficiency must be in (0, 1]");
  positive(c.intra.bandwidth, "intra_bandwidth");
  positive(c.inter.bandwidth, "inter_bandwidth");
  if (!(c.intra.latency >= 0) || !(c.inter.latency >= 0)) invalid("cluster latencies must be >= 0");
  if (!(c.overlap >= 0 && c.overlap <= 1)) invalid("cluster.overlap must be in [0, 1]");
}

Cluster preset(const std::string& name, int nodes) {
  Cluster c = node_kind(name);
  c.nodes = nodes;
  check(c);
  return c;
}

Cluster parse_cluster(const std::string& text, const std::string& where) {
  Cluster c;
  std::istringstream lines(text);
  std::string line;
  int number_of_line = 0;
  while (std::getline(lines, line)) {
    ++number_of_line;
    const std::string here = where + ":" + std::to_string(number_of_line);
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) invalid(here + ": expected \"key = value\"");
    const std::string key = trim(line.substr(0, equals));
    const std::string value = trim(line.substr(equals + 1));
    if (key == "preset") {
      const int nodes = c.nodes;
      c = node_kind(value);
      c.nodes = nodes;
    } else {
      set(c, key, value, here);
    }
  }
  if (c.nodes == 0) c.nodes = 1;
  check(c);
  return c;
}

Cluster load_cluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) raise(DT_ERR_IO, "cannot read cluster file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_cluster(text.str(), path);
}

}  // namespace dtrain::plan
