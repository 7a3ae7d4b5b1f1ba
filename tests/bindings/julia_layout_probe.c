/*
 * Prints what a C compiler makes of the structs and constants that the Julia
 * binding mirrors by hand (bindings/julia/DTrain/src), for
 * check_julia_binding.py to compare with the Julia definitions:
 *   struct NAME SIZE
 *   field NAME MEMBER OFFSET SIZE
 *   const NAME VALUE
 */
#include <stddef.h>
#include <stdio.h>

#include "dtrain.h"

#define STRUCT(type) printf("struct %s %zu\n", #type, sizeof(type))
#define FIELD(type, member) \
  printf("field %s %s %zu %zu\n", #type, #member, offsetof(type, member), sizeof(((type *)0)->member))
#define CONSTANT(name) printf("const %s %lld\n", #name, (long long)(name))

int main(void) {
  STRUCT(DLDevice);
  FIELD(DLDevice, device_type);
  FIELD(DLDevice, device_id);

  STRUCT(DLDataType);
  FIELD(DLDataType, code);
  FIELD(DLDataType, bits);
  FIELD(DLDataType, lanes);

  STRUCT(DLTensor);
  FIELD(DLTensor, data);
  FIELD(DLTensor, device);
  FIELD(DLTensor, ndim);
  FIELD(DLTensor, dtype);
  FIELD(DLTensor, shape);
  FIELD(DLTensor, strides);
  FIELD(DLTensor, byte_offset);

  STRUCT(dt_comm_options);
  FIELD(dt_comm_options, version);
  FIELD(dt_comm_options, rank);
  FIELD(dt_comm_options, world_size);
  FIELD(dt_comm_options, store);
  FIELD(dt_comm_options, auth_token);
  FIELD(dt_comm_options, backend);
  FIELD(dt_comm_options, device);
  FIELD(dt_comm_options, timeout_ms);
  FIELD(dt_comm_options, oob_allgather);
  FIELD(dt_comm_options, oob_user);

  STRUCT(dt_optimizer_options);
  FIELD(dt_optimizer_options, version);
  FIELD(dt_optimizer_options, kind);
  FIELD(dt_optimizer_options, lr);
  FIELD(dt_optimizer_options, weight_decay);
  FIELD(dt_optimizer_options, momentum);
  FIELD(dt_optimizer_options, dampening);
  FIELD(dt_optimizer_options, nesterov);
  FIELD(dt_optimizer_options, beta1);
  FIELD(dt_optimizer_options, beta2);
  FIELD(dt_optimizer_options, eps);
  FIELD(dt_optimizer_options, max_grad_norm);
  FIELD(dt_optimizer_options, loss_scale);
  FIELD(dt_optimizer_options, dynamic_loss_scale);
  FIELD(dt_optimizer_options, growth_factor);
  FIELD(dt_optimizer_options, backoff_factor);
  FIELD(dt_optimizer_options, growth_interval);
  FIELD(dt_optimizer_options, comm);

  STRUCT(dt_optimizer_step_info);
  FIELD(dt_optimizer_step_info, version);
  FIELD(dt_optimizer_step_info, skipped);
  FIELD(dt_optimizer_step_info, grad_norm);
  FIELD(dt_optimizer_step_info, step);
  FIELD(dt_optimizer_step_info, loss_scale);

  STRUCT(dt_ddp_options);
  FIELD(dt_ddp_options, version);
  FIELD(dt_ddp_options, bucket_bytes);
  FIELD(dt_ddp_options, compression);
  FIELD(dt_ddp_options, find_unused);
  FIELD(dt_ddp_options, weighted);
  FIELD(dt_ddp_options, stream);

  STRUCT(dt_zero_options);
  FIELD(dt_zero_options, version);
  FIELD(dt_zero_options, stage);
  FIELD(dt_zero_options, bucket_bytes);
  FIELD(dt_zero_options, unit_sizes);
  FIELD(dt_zero_options, unit_count);
  FIELD(dt_zero_options, prefetch);
  FIELD(dt_zero_options, stream);
  FIELD(dt_zero_options, norm_excluded);
  FIELD(dt_zero_options, norm_excluded_count);

  STRUCT(dt_zero_memory);
  FIELD(dt_zero_memory, version);
  FIELD(dt_zero_memory, parameters);
  FIELD(dt_zero_memory, gradients);
  FIELD(dt_zero_memory, optimizer_state);
  FIELD(dt_zero_memory, master_weights);
  FIELD(dt_zero_memory, communication);
  FIELD(dt_zero_memory, padding);
  FIELD(dt_zero_memory, peak);

  STRUCT(dt_op_stats);
  FIELD(dt_op_stats, version);
  FIELD(dt_op_stats, count);
  FIELD(dt_op_stats, failed);
  FIELD(dt_op_stats, bytes);
  FIELD(dt_op_stats, seconds);

  STRUCT(dt_p2p_op);
  FIELD(dt_p2p_op, kind);
  FIELD(dt_p2p_op, tensor);
  FIELD(dt_p2p_op, peer);
  FIELD(dt_p2p_op, tag);

  STRUCT(dt_pipeline_schedule_options);
  FIELD(dt_pipeline_schedule_options, version);
  FIELD(dt_pipeline_schedule_options, kind);
  FIELD(dt_pipeline_schedule_options, stages);
  FIELD(dt_pipeline_schedule_options, microbatches);
  FIELD(dt_pipeline_schedule_options, chunks);

  STRUCT(dt_pipeline_action);
  FIELD(dt_pipeline_action, kind);
  FIELD(dt_pipeline_action, chunk);
  FIELD(dt_pipeline_action, microbatch);
  FIELD(dt_pipeline_action, peer);
  STRUCT(dt_moe_options);
  FIELD(dt_moe_options, version);
  FIELD(dt_moe_options, num_experts);
  FIELD(dt_moe_options, top_k);
  FIELD(dt_moe_options, scoring);
  FIELD(dt_moe_options, normalize);
  FIELD(dt_moe_options, capacity_factor);
  FIELD(dt_moe_options, drop_policy);

  STRUCT(dt_pipeline_options);
  FIELD(dt_pipeline_options, version);
  FIELD(dt_pipeline_options, activation_elements);
  FIELD(dt_pipeline_options, activation_dtype);
  FIELD(dt_pipeline_options, forward);
  FIELD(dt_pipeline_options, backward);
  FIELD(dt_pipeline_options, backward_weight);
  FIELD(dt_pipeline_options, chunk_done);
  FIELD(dt_pipeline_options, user);

  STRUCT(dt_pipeline_step_info);
  FIELD(dt_pipeline_step_info, version);
  FIELD(dt_pipeline_step_info, step_seconds);
  FIELD(dt_pipeline_step_info, recv_wait_seconds);
  FIELD(dt_pipeline_step_info, comm_wait_seconds);
  FIELD(dt_pipeline_step_info, bubble_fraction);
  FIELD(dt_pipeline_step_info, peak_in_flight);

  CONSTANT(DT_UNDEF);
  CONSTANT(DT_COMM_OPTIONS_VERSION);
  CONSTANT(DT_OPTIMIZER_OPTIONS_VERSION);
  CONSTANT(DT_OPTIMIZER_STEP_INFO_VERSION);
  CONSTANT(DT_DDP_OPTIONS_VERSION);
  CONSTANT(DT_ZERO_OPTIONS_VERSION);
  CONSTANT(DT_ZERO_MEMORY_VERSION);
  CONSTANT(DT_OP_STATS_VERSION);
  CONSTANT(DT_PIPELINE_SCHEDULE_OPTIONS_VERSION);
  CONSTANT(DT_MOE_OPTIONS_VERSION);
  CONSTANT(DT_PIPELINE_OPTIONS_VERSION);
  CONSTANT(DT_PIPELINE_STEP_INFO_VERSION);
  CONSTANT(kDLCPU);
  CONSTANT(kDLCUDA);
  CONSTANT(kDLCUDAHost);
  CONSTANT(kDLInt);
  CONSTANT(kDLUInt);
  CONSTANT(kDLFloat);
  CONSTANT(kDLBfloat);

  STRUCT(dt_plan_model);
  FIELD(dt_plan_model, version);
  FIELD(dt_plan_model, layers);
  FIELD(dt_plan_model, hidden);
  FIELD(dt_plan_model, heads);
  FIELD(dt_plan_model, kv_heads);
  FIELD(dt_plan_model, ffn_hidden);
  FIELD(dt_plan_model, vocab);
  FIELD(dt_plan_model, seq_len);
  FIELD(dt_plan_model, experts);
  FIELD(dt_plan_model, top_k);

  STRUCT(dt_plan_cluster);
  FIELD(dt_plan_cluster, version);
  FIELD(dt_plan_cluster, nodes);
  FIELD(dt_plan_cluster, gpus_per_node);
  FIELD(dt_plan_cluster, gpu_memory);
  FIELD(dt_plan_cluster, peak_flops);
  FIELD(dt_plan_cluster, memory_bandwidth);
  FIELD(dt_plan_cluster, gemm_efficiency);
  FIELD(dt_plan_cluster, intra_bandwidth);
  FIELD(dt_plan_cluster, intra_latency);
  FIELD(dt_plan_cluster, inter_bandwidth);
  FIELD(dt_plan_cluster, inter_latency);
  FIELD(dt_plan_cluster, overlap);

  STRUCT(dt_plan_options);
  FIELD(dt_plan_options, version);
  FIELD(dt_plan_options, global_batch);
  FIELD(dt_plan_options, dimensions);
  FIELD(dt_plan_options, zero_stages);
  FIELD(dt_plan_options, schedules);
  FIELD(dt_plan_options, recompute);
  FIELD(dt_plan_options, max_micro_batch);
  FIELD(dt_plan_options, max_virtual_stages);
  FIELD(dt_plan_options, sequence_parallel);
  FIELD(dt_plan_options, memory_fraction);
  FIELD(dt_plan_options, keep);

  STRUCT(dt_plan_config);
  FIELD(dt_plan_config, version);
  FIELD(dt_plan_config, dp);
  FIELD(dt_plan_config, tp);
  FIELD(dt_plan_config, pp);
  FIELD(dt_plan_config, cp);
  FIELD(dt_plan_config, ep);
  FIELD(dt_plan_config, zero_stage);
  FIELD(dt_plan_config, schedule);
  FIELD(dt_plan_config, virtual_stages);
  FIELD(dt_plan_config, micro_batch);
  FIELD(dt_plan_config, recompute);

  STRUCT(dt_plan_estimate);
  FIELD(dt_plan_estimate, version);
  FIELD(dt_plan_estimate, reason);
  FIELD(dt_plan_estimate, config);
  FIELD(dt_plan_estimate, micro_batches);
  FIELD(dt_plan_estimate, mem_parameters);
  FIELD(dt_plan_estimate, mem_gradients);
  FIELD(dt_plan_estimate, mem_optimizer_state);
  FIELD(dt_plan_estimate, mem_master_weights);
  FIELD(dt_plan_estimate, mem_activations);
  FIELD(dt_plan_estimate, mem_activations_without_recompute);
  FIELD(dt_plan_estimate, mem_communication);
  FIELD(dt_plan_estimate, mem_total);
  FIELD(dt_plan_estimate, time_compute);
  FIELD(dt_plan_estimate, time_recompute);
  FIELD(dt_plan_estimate, time_bubble);
  FIELD(dt_plan_estimate, time_tp);
  FIELD(dt_plan_estimate, time_cp);
  FIELD(dt_plan_estimate, time_ep);
  FIELD(dt_plan_estimate, time_pp);
  FIELD(dt_plan_estimate, time_dp);
  FIELD(dt_plan_estimate, time_optimizer);
  FIELD(dt_plan_estimate, time_step);
  FIELD(dt_plan_estimate, model_flops);
  FIELD(dt_plan_estimate, hardware_flops);
  FIELD(dt_plan_estimate, mfu);
  FIELD(dt_plan_estimate, tflops_per_gpu);

  STRUCT(dt_plan_summary);
  FIELD(dt_plan_summary, version);
  FIELD(dt_plan_summary, evaluated);
  FIELD(dt_plan_summary, feasible);
  FIELD(dt_plan_summary, kept);
  FIELD(dt_plan_summary, seconds);

  STRUCT(dt_plan_rejection);
  FIELD(dt_plan_rejection, version);
  FIELD(dt_plan_rejection, count);
  FIELD(dt_plan_rejection, example);
  FIELD(dt_plan_rejection, message);

  CONSTANT(DT_PLAN_MODEL_VERSION);
  CONSTANT(DT_PLAN_CLUSTER_VERSION);
  CONSTANT(DT_PLAN_OPTIONS_VERSION);
  CONSTANT(DT_PLAN_CONFIG_VERSION);
  CONSTANT(DT_PLAN_ESTIMATE_VERSION);
  CONSTANT(DT_PLAN_SUMMARY_VERSION);
  CONSTANT(DT_PLAN_REJECTION_VERSION);
  return 0;
}
