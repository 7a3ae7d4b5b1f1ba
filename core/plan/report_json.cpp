#include <cstdio>
#include <sstream>

#include "base/json_text.hpp"
#include "plan/report.hpp"

namespace dtrain::plan {

namespace {

// JSON numbers: integers exactly, others with 6 significant digits.
std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

void config_fields(std::ostringstream& s, const Config& c) {
  s << "\"dp\": " << c.dp << ", \"tp\": " << c.tp << ", \"pp\": " << c.pp << ", \"cp\": " << c.cp
    << ", \"ep\": " << c.ep << ", \"zero_stage\": " << c.zero_stage << ", \"schedule\": \"" << schedule_name(c.schedule)
    << "\", \"virtual_stages\": " << c.virtual_stages << ", \"micro_batch\": " << c.micro_batch << ", \"recompute\": \""
    << recompute_name(c.recompute) << "\"";
}

}  // namespace

std::string json(const Plan& plan, std::size_t top) {
  const Transformer& t = plan.model;
  const Cluster& c = plan.cluster;
  std::ostringstream s;
  s << "{\n  \"model\": {\"layers\": " << t.layers << ", \"hidden\": " << t.hidden << ", \"heads\": " << t.heads
    << ", \"kv_heads\": " << t.kv_heads << ", \"ffn_hidden\": " << t.ffn << ", \"vocab\": " << t.vocab
    << ", \"seq_len\": " << t.seq << ", \"experts\": " << t.experts << ", \"top_k\": " << t.top_k
    << ", \"parameters\": " << total_parameters(t) << "},\n";
  s << "  \"cluster\": {\"nodes\": " << c.nodes << ", \"gpus_per_node\": " << c.gpus_per_node
    << ", \"gpu_memory\": " << num(c.gpu_memory) << ", \"peak_flops\": " << num(c.peak_flops)
    << ", \"memory_bandwidth\": " << num(c.memory_bandwidth) << ", \"gemm_efficiency\": " << num(c.gemm_efficiency)
    << ", \"intra_bandwidth\": " << num(c.intra.bandwidth) << ", \"intra_latency\": " << num(c.intra.latency)
    << ", \"inter_bandwidth\": " << num(c.inter.bandwidth) << ", \"inter_latency\": " << num(c.inter.latency)
    << ", \"overlap\": " << num(c.overlap) << "},\n";
  s << "  \"global_batch\": " << plan.options.global_batch << ",\n  \"evaluated\": " << plan.evaluated
    << ",\n  \"feasible\": " << plan.feasible << ",\n  \"seconds\": " << num(plan.seconds)
    << ",\n  \"configurations\": [";
  const std::size_t n = top == 0 || top > plan.ranked.size() ? plan.ranked.size() : top;
  for (std::size_t i = 0; i < n; ++i) {
    const Estimate& e = plan.ranked[i];
    const Memory& m = e.memory;
    const Time& tm = e.time;
    s << (i ? ",\n" : "\n") << "    {\"rank\": " << i + 1 << ", ";
    config_fields(s, e.config);
    s << ", \"micro_batches\": " << e.micro_batches << ",\n     \"memory\": {\"parameters\": " << m.parameters
      << ", \"gradients\": " << m.gradients << ", \"optimizer_state\": " << m.optimizer_state
      << ", \"master_weights\": " << m.master_weights << ", \"activations\": " << m.activations
      << ", \"activations_without_recompute\": " << m.activations_without_recompute
      << ", \"communication\": " << m.communication << ", \"total\": " << m.total
      << "},\n     \"time\": {\"step\": " << num(tm.step) << ", \"compute\": " << num(tm.compute)
      << ", \"recompute\": " << num(tm.recompute) << ", \"bubble\": " << num(tm.bubble) << ", \"tp\": " << num(tm.tp)
      << ", \"cp\": " << num(tm.cp) << ", \"ep\": " << num(tm.ep) << ", \"pp\": " << num(tm.pp)
      << ", \"dp\": " << num(tm.dp) << ", \"optimizer\": " << num(tm.optimizer) << "},\n     \"mfu\": " << num(e.mfu)
      << ", \"tflops_per_gpu\": " << num(e.tflops_per_gpu) << ", \"model_flops\": " << num(e.model_flops)
      << ", \"hardware_flops\": " << num(e.hardware_flops) << "}";
  }
  s << "\n  ],\n  \"rejected\": [";
  bool first = true;
  for (std::size_t r = 1; r < plan.rejected.size(); ++r) {
    const Rejections& rej = plan.rejected[r];
    if (rej.count == 0) continue;
    s << (first ? "\n" : ",\n") << "    {\"reason\": " << json_string(reason_name(static_cast<Reason>(r)))
      << ", \"count\": " << rej.count << ", \"message\": " << json_string(rej.message) << ", \"example\": {";
    config_fields(s, rej.example);
    s << "}}";
    first = false;
  }
  s << "\n  ]\n}\n";
  return s.str();
}

}  // namespace dtrain::plan
