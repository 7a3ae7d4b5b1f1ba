/*
 * libdtrain — the parallelism planner: from a transformer, a cluster and a
 * global batch to every way of running a training step (dp x tp x pp x cp x
 * ep, ZeRO stage, pipeline schedule, micro-batch size, activation
 * recomputation), ranked by estimated step time, with memory per GPU and
 * step time broken down, and the reasons the infeasible ones were rejected.
 *
 * The model. Memory of the model states is what a dt_zero over the same
 * units holds (the same code computes it: dt_plan_zero_memory() predicts a
 * dt_zero to the byte), with one unit per layer and one for the embedding,
 * 16-bit parameters and AdamW. Activations follow Korthikanti et al. 2022;
 * compute runs GEMMs at the cluster's gemm_efficiency and everything else
 * at its memory bandwidth; communication follows the alpha-beta model with
 * ring and tree algorithms, hierarchical across nodes; the pipeline bubble
 * is (p - 1) / (v m). Ranks are laid out as dt_mesh_create() lays them
 * (tp, cp, ep, dp, pp, innermost first). docs/planner.md states every
 * formula and its source.
 *
 * Ownership: a dt_plan belongs to the caller (dt_plan_destroy()). Strings a
 * plan hands out are borrowed from it and valid until it is destroyed.
 * Nothing here communicates; every call is local and any thread may use a
 * distinct plan.
 */
#ifndef DTRAIN_PLAN_H
#define DTRAIN_PLAN_H

#include "dtrain/common.h"
#include "dtrain/optim.h"
#include "dtrain/pipeline.h"
#include "dtrain/status.h"
#include "dtrain/tensor.h"
#include "dtrain/zero.h"

DT_BEGIN_DECLS

typedef struct dt_plan dt_plan;

/** Activation recomputation (Korthikanti et al. 2022). */
typedef enum dt_plan_recompute {
  DT_PLAN_RECOMPUTE_NONE = 0,      /* keep every activation */
  DT_PLAN_RECOMPUTE_SELECTIVE = 1, /* recompute the attention core (scores, softmax, dropout) */
  DT_PLAN_RECOMPUTE_FULL = 2       /* keep each layer's input; recompute the layer in backward */
} dt_plan_recompute;

/** Bits of dt_plan_options.dimensions: the mesh dimensions searched (dp takes what is left). */
typedef enum dt_plan_dimension {
  DT_PLAN_DIM_TP = 1,
  DT_PLAN_DIM_PP = 2,
  DT_PLAN_DIM_CP = 4,
  DT_PLAN_DIM_EP = 8
} dt_plan_dimension;

/** Why a configuration was rejected. */
typedef enum dt_plan_reason {
  DT_PLAN_ACCEPTED = 0,
  DT_PLAN_REJECT_GPUS = 1,       /* dp*tp*pp*cp*ep differs from the cluster's GPUs */
  DT_PLAN_REJECT_HEADS_TP = 2,   /* heads or key/value heads not divisible by tp */
  DT_PLAN_REJECT_FFN_TP = 3,     /* ffn_hidden not divisible by tp */
  DT_PLAN_REJECT_LAYERS_PP = 4,  /* layers not divisible by pp * virtual_stages */
  DT_PLAN_REJECT_SEQ_CP = 5,     /* seq_len not divisible by 2 * cp */
  DT_PLAN_REJECT_EXPERTS_EP = 6, /* experts not divisible by ep, or ep > 1 on a dense model */
  DT_PLAN_REJECT_BATCH = 7,      /* global_batch not divisible by dp * ep * micro_batch */
  DT_PLAN_REJECT_SCHEDULE = 8,   /* a schedule that does not fit (interleaved: pp >= 2, v >= 2, m % pp == 0) */
  DT_PLAN_REJECT_MEMORY = 9      /* more than memory_fraction of a GPU's memory */
} dt_plan_reason;

/** Output formats of dt_plan_write(). */
typedef enum dt_plan_format {
  DT_PLAN_TABLE = 0, /* text for a terminal: the ranked table and the rejections */
  DT_PLAN_JSON = 1,  /* the inputs, the ranked estimates with every field, the rejections */
  DT_PLAN_SVG = 2    /* a chart: memory and time breakdown of each configuration */
} dt_plan_format;

/** A decoder-only transformer. Grows only at its end. */
typedef struct dt_plan_model {
  unsigned version; /**< DT_PLAN_MODEL_VERSION */
  int layers;     /**< transformer blocks */
  int hidden;     /**< model width */
  int heads;      /**< attention (query) heads */
  int kv_heads;   /**< DT_UNDEF: heads (multi-head attention) */
  int ffn_hidden; /**< DT_UNDEF: 4 * hidden */
  int vocab;      /**< vocabulary size */
  int seq_len;    /**< tokens per sequence */
  int experts;    /**< DT_UNDEF or 1: dense; > 1: every MLP is a mixture of this many experts */
  int top_k;      /**< experts per token; DT_UNDEF: 1 */
} dt_plan_model;

#define DT_PLAN_MODEL_VERSION 1u
#define DT_PLAN_MODEL_INIT { DT_PLAN_MODEL_VERSION, 0, 0, 0, DT_UNDEF, DT_UNDEF, 0, 0, DT_UNDEF, DT_UNDEF }

/** A cluster of identical nodes. Bandwidths per GPU, each direction. Grows only at its end. */
typedef struct dt_plan_cluster {
  unsigned version; /**< DT_PLAN_CLUSTER_VERSION */
  int nodes;         /**< nodes in the cluster */
  int gpus_per_node; /**< GPUs in each node */
  double gpu_memory;       /**< bytes */
  double peak_flops;       /**< dense 16-bit FLOP/s of one GPU */
  double memory_bandwidth; /**< bytes/s of one GPU's memory */
  double gemm_efficiency;  /**< share of peak_flops that large GEMMs reach, (0, 1] */
  double intra_bandwidth;  /**< bytes/s between GPUs of a node */
  double intra_latency;    /**< seconds per message inside a node */
  double inter_bandwidth;  /**< bytes/s per GPU between nodes */
  double inter_latency;    /**< seconds per message between nodes */
  /* version 2 */
  /** Share of a data-parallel or context-parallel transfer's time that the
   * compute issued beside it can hide, [0, 1]. 1 (every preset, and a
   * version 1 struct): copy engines or spare SMs move the data while the
   * GPU computes. 0: nothing hides, as on CPU ranks without a spare core,
   * whose progress thread and copies take the core the compute needs. */
  double overlap;
} dt_plan_cluster;

#define DT_PLAN_CLUSTER_VERSION 2u
#define DT_PLAN_CLUSTER_INIT { DT_PLAN_CLUSTER_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.0 }

/** What to search. Grows only at its end. */
typedef struct dt_plan_options {
  unsigned version;        /**< DT_PLAN_OPTIONS_VERSION */
  int64_t global_batch;    /**< sequences per step, >= 1 (no default) */
  unsigned dimensions;     /**< dt_plan_dimension bits searched (default all) */
  unsigned zero_stages;    /**< bit s: ZeRO stage s (default 0xF: 0-3) */
  unsigned schedules;      /**< bit k: dt_pipeline_schedule_kind k (default 0x7: GPIPE, 1F1B, INTERLEAVED_1F1B; add bit 3 for ZB_H1, which needs a trainer whose backward splits into input and weight gradients) */
  unsigned recompute;      /**< bit k: dt_plan_recompute k (default 0x7) */
  int max_micro_batch;     /**< DT_UNDEF: 8 */
  int max_virtual_stages;  /**< interleaved: 2..this chunks per rank; DT_UNDEF: 4 */
  int sequence_parallel;   /**< with tp > 1; DT_UNDEF: 1 */
  double memory_fraction;  /**< share of GPU memory a configuration may use, (0, 1]; 0: 0.9 */
  size_t keep;             /**< feasible configurations kept, fastest first; 0: 100 */
} dt_plan_options;

#define DT_PLAN_OPTIONS_VERSION 1u
#define DT_PLAN_OPTIONS_INIT \
  { DT_PLAN_OPTIONS_VERSION, 0, 0xFu, 0xFu, 0x7u, 0x7u, DT_UNDEF, DT_UNDEF, DT_UNDEF, 0.0, 0 }

/** One way of running a step. Grows only at its end. */
typedef struct dt_plan_config {
  unsigned version; /**< DT_PLAN_CONFIG_VERSION */
  int dp;                             /**< data-parallel size */
  int tp;                             /**< tensor-parallel size */
  int pp;                             /**< pipeline-parallel size */
  int cp;                             /**< context-parallel size */
  int ep;                             /**< expert-parallel size */
  int zero_stage;                     /**< 0-3 */
  dt_pipeline_schedule_kind schedule; /**< GPIPE, 1F1B, INTERLEAVED_1F1B or ZB_H1 */
  int virtual_stages;                 /**< chunks per pipeline rank: 1, or >= 2 with INTERLEAVED_1F1B */
  int micro_batch;                    /**< sequences per micro-batch */
  dt_plan_recompute recompute;        /**< activation recomputation */
} dt_plan_config;

#define DT_PLAN_CONFIG_VERSION 1u
#define DT_PLAN_CONFIG_INIT \
  { DT_PLAN_CONFIG_VERSION, 1, 1, 1, 1, 1, 0, DT_PIPELINE_1F1B, 1, 1, DT_PLAN_RECOMPUTE_NONE }

/**
 * The estimate of one configuration: memory per GPU in bytes on the
 * pipeline stage that needs most, and the step's seconds on the critical
 * path. The caller sets `version` (DT_PLAN_ESTIMATE_INIT); the library
 * writes the rest. Grows only at its end.
 */
typedef struct dt_plan_estimate {
  unsigned version; /**< DT_PLAN_ESTIMATE_VERSION */
  dt_plan_reason reason;   /**< DT_PLAN_ACCEPTED, or why rejected */
  dt_plan_config config;   /**< the configuration estimated */
  int64_t micro_batches;   /**< per step and pipeline */
  int64_t mem_parameters;                     /**< parameters held by one GPU */
  int64_t mem_gradients;                      /**< gradients held by one GPU */
  int64_t mem_optimizer_state;                /**< optimizer moments held by one GPU */
  int64_t mem_master_weights;                 /**< f32 master weights of 16-bit parameters */
  int64_t mem_activations;                    /**< with the configuration's recomputation */
  int64_t mem_activations_without_recompute;  /**< the same without recomputation */
  int64_t mem_communication;                  /**< buffers of pp, tp, ep and ZeRO stages 2-3 */
  int64_t mem_total;                          /**< the sum of the above */
  double time_compute;   /**< forward and backward on the slowest stage */
  double time_recompute; /**< forward passes run again */
  double time_bubble;    /**< pipeline fill and drain */
  double time_tp;        /**< exposed communication of each dimension */
  double time_cp;        /**< exposed context-parallel communication */
  double time_ep;        /**< exposed expert-parallel all-to-all */
  double time_pp;        /**< exposed pipeline send/receive */
  double time_dp;        /**< exposed data-parallel gradient reduction */
  double time_optimizer; /**< the optimizer step */
  double time_step;      /**< the sum */
  double model_flops;    /**< per step, all GPUs, without recomputation */
  double hardware_flops; /**< with recomputation */
  double mfu;            /**< model_flops / (time_step * GPUs * peak_flops) */
  double tflops_per_gpu; /**< hardware_flops / (time_step * GPUs) / 1e12 */
} dt_plan_estimate;

#define DT_PLAN_ESTIMATE_VERSION 1u
#define DT_PLAN_ESTIMATE_INIT                                                                   \
  { DT_PLAN_ESTIMATE_VERSION, DT_PLAN_ACCEPTED, DT_PLAN_CONFIG_INIT, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 }

/** A search's totals. The caller sets `version`. Grows only at its end. */
typedef struct dt_plan_summary {
  unsigned version;   /**< DT_PLAN_SUMMARY_VERSION */
  int64_t evaluated;  /**< configurations looked at (a mesh shape rejected as such counts once) */
  int64_t feasible;   /**< of which fit and were estimated */
  size_t kept;        /**< estimates available through dt_plan_ranked() */
  double seconds;     /**< wall time of the search */
} dt_plan_summary;

#define DT_PLAN_SUMMARY_VERSION 1u
#define DT_PLAN_SUMMARY_INIT { DT_PLAN_SUMMARY_VERSION, 0, 0, 0, 0.0 }

/** The configurations rejected for one reason. The caller sets `version`. Grows only at its end. */
typedef struct dt_plan_rejection {
  unsigned version;       /**< DT_PLAN_REJECTION_VERSION */
  int64_t count;          /**< how many; 0: none (then example and message say nothing) */
  dt_plan_config example; /**< the first one */
  const char *message;    /**< why it was rejected; borrowed from the plan, never NULL */
} dt_plan_rejection;

#define DT_PLAN_REJECTION_VERSION 1u
#define DT_PLAN_REJECTION_INIT { DT_PLAN_REJECTION_VERSION, 0, DT_PLAN_CONFIG_INIT, NULL }

/** Fill `model`, `opts` or `config` with the defaults of `version`; DT_ERR_INVALID_ARGUMENT for NULL or an unknown version. */
DT_API dt_status dt_plan_model_init(dt_plan_model *model, unsigned version);
DT_API dt_status dt_plan_options_init(dt_plan_options *opts, unsigned version);
DT_API dt_status dt_plan_config_init(dt_plan_config *config, unsigned version);

/**
 * Fills `out` (its version set by the caller) with `nodes` nodes of preset
 * `name`: "a100" (8 x A100 80 GB SXM, NVLink 3, HDR 200 Gb/s per GPU),
 * "h100" (8 x H100 SXM, NVLink 4, NDR 400 Gb/s per GPU) or "h200" (the same
 * with H200's 141 GB). DT_ERR_INVALID_ARGUMENT for another name (the message
 * lists the presets), nodes < 1, NULLs or an unknown version.
 */
DT_API dt_status dt_plan_cluster_preset(dt_plan_cluster *out, const char *name, int nodes);

/**
 * Reads the cluster file at `path` into `out` (its version set by the
 * caller). The format: lines "key = value", '#' starts a comment; keys are
 * the fields of dt_plan_cluster, and "preset = NAME" sets every field from a
 * preset first (later lines override it); nodes defaults to 1. Example:
 *
 *   preset = h100
 *   nodes = 16
 *   inter_bandwidth = 25e9   # RoCE at 200 Gb/s per GPU
 *
 * DT_ERR_IO when the file cannot be read; DT_ERR_INVALID_ARGUMENT naming
 * the line of a bad key or value, or a field missing or out of range.
 */
DT_API dt_status dt_plan_cluster_load(dt_plan_cluster *out, const char *path);

/**
 * Searches every configuration of the cluster's GPUs that `opts` allows and
 * keeps the `keep` fastest. `opts` must give global_batch.
 * DT_ERR_INVALID_ARGUMENT (nothing created) for NULL arguments, unknown
 * versions, a model that is no transformer (hidden not divisible by heads,
 * heads not divisible by kv_heads, top_k > experts, a size < 1), a cluster
 * field out of range, or options out of range. A search in which nothing
 * is feasible still succeeds: dt_plan_rejected() says why.
 */
DT_API dt_status dt_plan_create(dt_plan **out, const dt_plan_model *model, const dt_plan_cluster *cluster,
                                const dt_plan_options *opts);

/** Destroys `plan` (NULL: no-op). */
DT_API dt_status dt_plan_destroy(dt_plan *plan);

/** Fills `out` (its version set) with the search's totals. */
DT_API dt_status dt_plan_info(const dt_plan *plan, dt_plan_summary *out);

/**
 * Fills `out` (its version set) with the estimate ranked `index` (0: the
 * fastest). DT_ERR_INVALID_ARGUMENT for index >= dt_plan_summary.kept.
 */
DT_API dt_status dt_plan_ranked(const dt_plan *plan, size_t index, dt_plan_estimate *out);

/**
 * Fills `out` (its version set) with the configurations rejected for
 * `reason` (count 0 when none were). DT_ERR_INVALID_ARGUMENT for
 * DT_PLAN_ACCEPTED or a value outside dt_plan_reason.
 */
DT_API dt_status dt_plan_rejected(const dt_plan *plan, dt_plan_reason reason, dt_plan_rejection *out);

/**
 * Evaluates one configuration `config` of the model on the cluster with
 * the options' batch and limits. DT_OK: feasible, `out` filled. Rejected:
 * DT_ERR_INVALID_ARGUMENT with dt_error_last() giving the reason and
 * out->reason its code; the rest of `out` is filled only for
 * DT_PLAN_REJECT_MEMORY (the estimate that did not fit) and zeroed
 * otherwise. DT_ERR_INVALID_ARGUMENT with out->reason DT_PLAN_ACCEPTED for
 * bad arguments (NULLs, versions, model, cluster or options as in
 * dt_plan_create(), a schedule or recompute value outside its enum).
 */
DT_API dt_status dt_plan_evaluate(const dt_plan_model *model, const dt_plan_cluster *cluster,
                                  const dt_plan_options *opts, const dt_plan_config *config, dt_plan_estimate *out);

/**
 * Writes the plan to `path` ("-": standard output, flushed) in `format`:
 * its `top` fastest configurations (0: all kept) and the rejections. DT_ERR_IO when the file cannot be
 * written; DT_ERR_INVALID_ARGUMENT for NULLs or an unknown format.
 */
DT_API dt_status dt_plan_write(const dt_plan *plan, const char *path, dt_plan_format format, size_t top);

/**
 * What dt_zero_create() with `stage` on `ranks` ranks will hold on rank
 * `rank` for parameters of `dtype` grouped into `units` units of
 * `unit_elements[u]` elements (as dt_zero_options.unit_sizes groups them)
 * with optimizer `optim` (NULL: AdamW): `out` (its version set) gets the
 * bytes by purpose and the padding that dt_zero_memory_usage() reports right
 * after creation, and as `peak` the most held during creation.
 * DT_ERR_INVALID_ARGUMENT for NULLs, units == 0, a negative element count,
 * a stage outside 0-3, ranks < 1, rank outside 0..ranks-1, a dtype other
 * than f32, f16 or bf16, or a bad optimizer.
 */
DT_API dt_status dt_plan_zero_memory(const int64_t *unit_elements, size_t units, int stage, int ranks, int rank,
                                     DLDataType dtype, const dt_optimizer_options *optim, dt_zero_memory *out);

DT_END_DECLS

#endif /* DTRAIN_PLAN_H */
