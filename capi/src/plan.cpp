// The planner (dtrain/plan.h): C structs in, plan::search / plan::evaluate,
// C structs out. Nothing here communicates.
#include "dtrain/plan.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "base/dtype.hpp"
#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "base/options.hpp"
#include "entry.hpp"
#include "optim/config.hpp"
#include "optim/optimizer.hpp"
#include "parallel/zero/footprint.hpp"
#include "parallel/zero/layout.hpp"
#include "plan/report.hpp"
#include "plan/search.hpp"
#include "zero_memory.hpp"

using dtrain::capi::entry;
using dtrain::capi::require;
namespace plan = dtrain::plan;

struct dt_plan {
  plan::Plan impl;
};

namespace {

constexpr std::size_t kModelSizes[] = {0, sizeof(dt_plan_model)};
constexpr std::size_t kClusterSizes[] = {0, offsetof(dt_plan_cluster, overlap), sizeof(dt_plan_cluster)};
constexpr std::size_t kOptionsSizes[] = {0, sizeof(dt_plan_options)};
constexpr std::size_t kConfigSizes[] = {0, sizeof(dt_plan_config)};
constexpr std::size_t kEstimateSizes[] = {0, sizeof(dt_plan_estimate)};
constexpr std::size_t kSummarySizes[] = {0, sizeof(dt_plan_summary)};
constexpr std::size_t kRejectionSizes[] = {0, sizeof(dt_plan_rejection)};

constexpr dt_plan_model kDefaultModel = DT_PLAN_MODEL_INIT;
constexpr dt_plan_cluster kDefaultCluster = DT_PLAN_CLUSTER_INIT;
constexpr dt_plan_options kDefaultOptions = DT_PLAN_OPTIONS_INIT;
constexpr dt_plan_config kDefaultConfig = DT_PLAN_CONFIG_INIT;

[[noreturn]] void invalid(const std::string& message) { dtrain::raise(DT_ERR_INVALID_ARGUMENT, message); }

int or_default(int value, int fallback) { return value == DT_UNDEF ? fallback : value; }

plan::Transformer read_model(const dt_plan_model* user) {
  require(user, "model");
  const dt_plan_model m = dtrain::read_options(user, kDefaultModel, kModelSizes, "model");
  plan::Transformer t;
  t.layers = m.layers;
  t.hidden = m.hidden;
  t.heads = m.heads;
  t.kv_heads = or_default(m.kv_heads, m.heads);
  t.ffn = m.ffn_hidden == DT_UNDEF ? 4 * std::int64_t{m.hidden} : m.ffn_hidden;
  t.vocab = m.vocab;
  t.seq = m.seq_len;
  t.experts = or_default(m.experts, 1);
  t.top_k = or_default(m.top_k, 1);
  plan::check(t);
  return t;
}

plan::Cluster read_cluster(const dt_plan_cluster* user) {
  require(user, "cluster");
  const dt_plan_cluster c = dtrain::read_options(user, kDefaultCluster, kClusterSizes, "cluster");
  plan::Cluster result;
  result.nodes = c.nodes;
  result.gpus_per_node = c.gpus_per_node;
  result.gpu_memory = c.gpu_memory;
  result.peak_flops = c.peak_flops;
  result.memory_bandwidth = c.memory_bandwidth;
  result.gemm_efficiency = c.gemm_efficiency;
  result.intra = {c.intra_bandwidth, c.intra_latency};
  result.inter = {c.inter_bandwidth, c.inter_latency};
  result.overlap = c.overlap;
  plan::check(result);
  return result;
}

void write_cluster(const plan::Cluster& c, dt_plan_cluster* out) {
  dtrain::check_output_version(out->version, kClusterSizes, "out", "DT_PLAN_CLUSTER_INIT");
  out->nodes = c.nodes;
  out->gpus_per_node = c.gpus_per_node;
  out->gpu_memory = c.gpu_memory;
  out->peak_flops = c.peak_flops;
  out->memory_bandwidth = c.memory_bandwidth;
  out->gemm_efficiency = c.gemm_efficiency;
  out->intra_bandwidth = c.intra.bandwidth;
  out->intra_latency = c.intra.latency;
  out->inter_bandwidth = c.inter.bandwidth;
  out->inter_latency = c.inter.latency;
  if (out->version >= 2) out->overlap = c.overlap;
}

plan::Options read_options(const dt_plan_options* user) {
  require(user, "opts");
  const dt_plan_options o = dtrain::read_options(user, kDefaultOptions, kOptionsSizes, "opts");
  plan::Options result;
  result.global_batch = o.global_batch;
  result.dimensions = o.dimensions;
  result.zero_stages = o.zero_stages;
  result.schedules = o.schedules;
  result.recompute = o.recompute;
  result.max_micro_batch = or_default(o.max_micro_batch, static_cast<int>(result.max_micro_batch));
  result.max_virtual_stages = or_default(o.max_virtual_stages, result.max_virtual_stages);
  result.sequence_parallel = or_default(o.sequence_parallel, 1) != 0;
  if (o.memory_fraction != 0.0) result.memory_fraction = o.memory_fraction;
  if (o.keep != 0) result.keep = o.keep;
  plan::check(result);
  return result;
}

plan::Config read_config(const dt_plan_config* user) {
  require(user, "config");
  const dt_plan_config c = dtrain::read_options(user, kDefaultConfig, kConfigSizes, "config");
  plan::Config result;
  result.dp = c.dp;
  result.tp = c.tp;
  result.pp = c.pp;
  result.cp = c.cp;
  result.ep = c.ep;
  if (c.zero_stage < 0 || c.zero_stage > 3)
    invalid("config.zero_stage " + std::to_string(c.zero_stage) + " is not 0-3");
  result.zero_stage = c.zero_stage;
  const int schedule = dtrain::enum_value(c.schedule);
  if (schedule < DT_PIPELINE_GPIPE || schedule > DT_PIPELINE_ZB_H1) {
    invalid("config.schedule " + std::to_string(schedule) + " is not GPIPE, 1F1B, INTERLEAVED_1F1B or ZB_H1");
  }
  result.schedule = static_cast<plan::Schedule>(schedule);
  result.virtual_stages = c.virtual_stages;
  if (c.virtual_stages < 1) invalid("config.virtual_stages must be >= 1");
  result.micro_batch = c.micro_batch;
  const int recompute = dtrain::enum_value(c.recompute);
  if (recompute < DT_PLAN_RECOMPUTE_NONE || recompute > DT_PLAN_RECOMPUTE_FULL) {
    invalid("config.recompute " + std::to_string(recompute) + " is not a dt_plan_recompute");
  }
  result.recompute = static_cast<plan::Recompute>(recompute);
  return result;
}

dt_plan_config to_c(const plan::Config& c) {
  dt_plan_config out = kDefaultConfig;
  out.dp = c.dp;
  out.tp = c.tp;
  out.pp = c.pp;
  out.cp = c.cp;
  out.ep = c.ep;
  out.zero_stage = c.zero_stage;
  out.schedule = static_cast<dt_pipeline_schedule_kind>(c.schedule);
  out.virtual_stages = c.virtual_stages;
  out.micro_batch = static_cast<int>(c.micro_batch);
  out.recompute = static_cast<dt_plan_recompute>(c.recompute);
  return out;
}

// Version 1 is every field there is so far.
void write_estimate(const plan::Estimate& e, dt_plan_reason reason, dt_plan_estimate* out) {
  const unsigned version = out->version;
  *out = dt_plan_estimate{};
  out->version = version;
  out->reason = reason;
  out->config = to_c(e.config);
  out->micro_batches = e.micro_batches;
  out->mem_parameters = e.memory.parameters;
  out->mem_gradients = e.memory.gradients;
  out->mem_optimizer_state = e.memory.optimizer_state;
  out->mem_master_weights = e.memory.master_weights;
  out->mem_activations = e.memory.activations;
  out->mem_activations_without_recompute = e.memory.activations_without_recompute;
  out->mem_communication = e.memory.communication;
  out->mem_total = e.memory.total;
  out->time_compute = e.time.compute;
  out->time_recompute = e.time.recompute;
  out->time_bubble = e.time.bubble;
  out->time_tp = e.time.tp;
  out->time_cp = e.time.cp;
  out->time_ep = e.time.ep;
  out->time_pp = e.time.pp;
  out->time_dp = e.time.dp;
  out->time_optimizer = e.time.optimizer;
  out->time_step = e.time.step;
  out->model_flops = e.model_flops;
  out->hardware_flops = e.hardware_flops;
  out->mfu = e.mfu;
  out->tflops_per_gpu = e.tflops_per_gpu;
}

}  // namespace

extern "C" {

DT_API dt_status dt_plan_model_init(dt_plan_model* model, unsigned version) {
  return entry([&] { dtrain::init_options(model, version, kDefaultModel, kModelSizes, "model"); });
}

DT_API dt_status dt_plan_options_init(dt_plan_options* opts, unsigned version) {
  return entry([&] { dtrain::init_options(opts, version, kDefaultOptions, kOptionsSizes, "opts"); });
}

DT_API dt_status dt_plan_config_init(dt_plan_config* config, unsigned version) {
  return entry([&] { dtrain::init_options(config, version, kDefaultConfig, kConfigSizes, "config"); });
}

DT_API dt_status dt_plan_cluster_preset(dt_plan_cluster* out, const char* name, int nodes) {
  return entry([&] {
    require(out, "out");
    require(name, "name");
    if (nodes < 1) invalid("nodes is " + std::to_string(nodes) + "; it must be >= 1");
    dtrain::check_output_version(out->version, kClusterSizes, "out", "DT_PLAN_CLUSTER_INIT");
    write_cluster(plan::preset(name, nodes), out);
  });
}

DT_API dt_status dt_plan_cluster_load(dt_plan_cluster* out, const char* path) {
  return entry([&] {
    require(out, "out");
    require(path, "path");
    dtrain::check_output_version(out->version, kClusterSizes, "out", "DT_PLAN_CLUSTER_INIT");
    write_cluster(plan::load_cluster(path), out);
  });
}

DT_API dt_status dt_plan_create(dt_plan** out, const dt_plan_model* model, const dt_plan_cluster* cluster,
                                const dt_plan_options* opts) {
  return entry([&] {
    require(out, "out");
    const plan::Transformer t = read_model(model);
    const plan::Cluster c = read_cluster(cluster);
    const plan::Options o = read_options(opts);
    *out = new dt_plan{plan::search(t, c, o)};
  });
}

DT_API dt_status dt_plan_destroy(dt_plan* plan) {
  delete plan;
  return DT_OK;
}

DT_API dt_status dt_plan_info(const dt_plan* plan, dt_plan_summary* out) {
  return entry([&] {
    require(plan, "plan");
    require(out, "out");
    dtrain::check_output_version(out->version, kSummarySizes, "out", "DT_PLAN_SUMMARY_INIT");
    out->evaluated = plan->impl.evaluated;
    out->feasible = plan->impl.feasible;
    out->kept = plan->impl.ranked.size();
    out->seconds = plan->impl.seconds;
  });
}

DT_API dt_status dt_plan_ranked(const dt_plan* plan, size_t index, dt_plan_estimate* out) {
  return entry([&] {
    require(plan, "plan");
    require(out, "out");
    dtrain::check_output_version(out->version, kEstimateSizes, "out", "DT_PLAN_ESTIMATE_INIT");
    const auto& ranked = plan->impl.ranked;
    if (index >= ranked.size()) {
      invalid("index " + std::to_string(index) + " is out of range: the plan keeps " + std::to_string(ranked.size()));
    }
    write_estimate(ranked[index], DT_PLAN_ACCEPTED, out);
  });
}

DT_API dt_status dt_plan_rejected(const dt_plan* plan, dt_plan_reason reason, dt_plan_rejection* out) {
  return entry([&] {
    require(plan, "plan");
    require(out, "out");
    dtrain::check_output_version(out->version, kRejectionSizes, "out", "DT_PLAN_REJECTION_INIT");
    const int r = dtrain::enum_value(reason);
    if (r <= DT_PLAN_ACCEPTED || r > DT_PLAN_REJECT_MEMORY) {
      invalid("reason " + std::to_string(r) + " is not a rejection (1-" + std::to_string(DT_PLAN_REJECT_MEMORY) + ")");
    }
    const plan::Rejections& rej = plan->impl.rejected[static_cast<std::size_t>(r)];
    out->count = rej.count;
    out->example = to_c(rej.example);
    out->message = rej.message.c_str();
  });
}

DT_API dt_status dt_plan_evaluate(const dt_plan_model* model, const dt_plan_cluster* cluster,
                                  const dt_plan_options* opts, const dt_plan_config* config, dt_plan_estimate* out) {
  return entry([&] {
    require(out, "out");
    dtrain::check_output_version(out->version, kEstimateSizes, "out", "DT_PLAN_ESTIMATE_INIT");
    write_estimate(plan::Estimate{}, DT_PLAN_ACCEPTED, out);
    const plan::Transformer t = read_model(model);
    const plan::Cluster c = read_cluster(cluster);
    const plan::Options o = read_options(opts);
    const plan::Config chosen = read_config(config);
    plan::Estimate estimate;
    estimate.config = chosen;
    const plan::Verdict verdict = plan::evaluate(t, c, o, chosen, estimate);
    // Only a configuration rejected for memory was estimated.
    if (verdict.reason != plan::Reason::none && verdict.reason != plan::Reason::memory) {
      estimate = plan::Estimate{};
      estimate.config = chosen;
    }
    write_estimate(estimate, static_cast<dt_plan_reason>(verdict.reason), out);
    if (!verdict.accepted()) {
      invalid(std::string("rejected (") + plan::reason_name(verdict.reason) + "): " + verdict.message);
    }
  });
}

DT_API dt_status dt_plan_write(const dt_plan* plan, const char* path, dt_plan_format format, size_t top) {
  return entry([&] {
    require(plan, "plan");
    require(path, "path");
    std::string text;
    switch (dtrain::enum_value(format)) {
      case DT_PLAN_TABLE:
        text = plan::table(plan->impl, top);
        break;
      case DT_PLAN_JSON:
        text = plan::json(plan->impl, top);
        break;
      case DT_PLAN_SVG:
        text = plan::svg(plan->impl, top);
        break;
      default:
        invalid("format " + std::to_string(dtrain::enum_value(format)) + " is not a dt_plan_format");
    }
    if (std::string(path) == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
      if (std::fflush(stdout) != 0) dtrain::raise(DT_ERR_IO, "cannot write to standard output");
      return;
    }
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file) dtrain::raise(DT_ERR_IO, std::string("cannot write ") + path);
  });
}

DT_API dt_status dt_plan_zero_memory(const int64_t* unit_elements, size_t units, int stage, int ranks, int rank,
                                     DLDataType dtype, const dt_optimizer_options* optim, dt_zero_memory* out) {
  return entry([&] {
    require(unit_elements, "unit_elements");
    require(out, "out");
    dtrain::capi::check_zero_memory(out);
    if (units == 0) invalid("units is 0");
    if (stage < 0 || stage > 3) invalid("stage " + std::to_string(stage) + " is not 0-3");
    if (ranks < 1) invalid("ranks is " + std::to_string(ranks) + "; it must be >= 1");
    if (rank < 0 || rank >= ranks)
      invalid("rank " + std::to_string(rank) + " is not in 0.." + std::to_string(ranks - 1));
    const auto type = dtrain::dtype_from_dlpack(dtype);
    if (!type || (*type != dtrain::DType::f32 && *type != dtrain::DType::f16 && *type != dtrain::DType::bf16)) {
      invalid("dtype must be float32, float16 or bfloat16, as dt_zero's parameters");
    }
    const std::vector<std::int64_t> counts(unit_elements, unit_elements + units);
    for (std::size_t u = 0; u < units; ++u) {
      if (counts[u] < 0) invalid("unit_elements[" + std::to_string(u) + "] is negative");
    }
    const dtrain::optim::Config config = dtrain::optim::read_config(optim);
    // One parameter per unit: the layout, and so the memory, depends only on
    // the units' element counts.
    const dtrain::parallel::zero::Layout layout(counts, std::vector<std::size_t>(units, 1), stage == 0 ? 1 : ranks,
                                                stage == 0 ? 0 : rank);
    dtrain::capi::write_zero_memory(
        dtrain::parallel::zero::footprint(layout, stage, *type, dtrain::optim::state_buffers(config)), out);
  });
}

}  // extern "C"
