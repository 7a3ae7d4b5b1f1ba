/*
 * dtrain._capi: the low-level Python module over libdtrain's C API.
 *
 * Function names are the C names. Handles are classes that free themselves
 * when collected; a failing dt_status raises the dtrain.Error subclass for it,
 * carrying dt_error_last(). The pure-Python package `dtrain` builds the
 * friendly API on top of this module.
 *
 * Built with `swig -python -builtin -interface _capi`, so the compiled
 * extension is the whole module and no generated Python file is needed.
 */
%module(package="dtrain", threads="1") _capi

%{
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dtrain.h"
%}

%include <typemaps.i>

/* Only calls that may block give up the GIL; everything else touches Python
   objects or returns at once. */
%nothread;
%thread dt_comm_create;
%thread dt_comm_split;
%thread dt_comm_destroy;
%thread dt_comm::~dt_comm;
%thread dt_allreduce;
%thread dt_reduce_scatter;
%thread dt_allgather;
%thread dt_broadcast;
%thread dt_alltoall;
%thread dt_alltoallv;
%thread dt_reduce;
%thread dt_gather;
%thread dt_scatter;
%thread dt_allgatherv;
%thread dt_reduce_scatterv;
%thread dt_p2p_group;
%thread dt_send;
%thread dt_recv;
%thread dt_barrier;
%thread dt_request_wait;
%thread dt_optimizer_create;
%thread dt_optimizer_step;
%thread dt_optimizer_zero_grad;
%thread dt_optimizer_destroy;
%thread dt_optimizer::~dt_optimizer;
%thread dt_ddp_create;
%thread dt_ddp_destroy;
%thread dt_ddp::~dt_ddp;
%thread dt_ddp_mark_ready;
%thread dt_ddp_wait;
%thread dt_ddp_broadcast_parameters;
%thread dt_zero_create;
%thread dt_zero_destroy;
%thread dt_zero::~dt_zero;
%thread dt_zero_mark_ready;
%thread dt_zero_wait;
%thread dt_zero_step;
%thread dt_zero_gather;
%thread dt_zero_gather_wait;
%thread dt_zero_release;
%thread dt_zero_save;
%thread dt_zero_load;
%thread dt_mesh_create;
%thread dt_mesh_comm;
%thread dt_mesh_destroy;
%thread dt_mesh::~dt_mesh;
%thread dt_tp_region_forward;
%thread dt_tp_region_backward;
%thread dt_tp_column_linear_forward;
%thread dt_tp_column_linear_backward;
%thread dt_tp_row_linear_forward;
%thread dt_tp_row_linear_backward;
%thread dt_tp_embedding_forward;
%thread dt_tp_embedding_backward;
%thread dt_tp_cross_entropy_forward;
%thread dt_tp_cross_entropy_backward;
%thread dt_tp_unshard;
%thread dt_moe_plan_create;
%thread dt_moe_plan_destroy;
%thread dt_moe_plan::~dt_moe_plan;
%thread dt_moe_dispatch;
%thread dt_moe_combine;
%thread dt_moe_combine_backward;
%thread dt_moe_dispatch_backward;
%thread dt_moe_experts_forward;
%thread dt_moe_experts_backward;
%thread dt_pipeline_step;
%thread dt_cp_ring_attention_forward;
%thread dt_cp_ring_attention_backward;
%thread dt_cp_ulysses_attention_forward;
%thread dt_cp_ulysses_attention_backward;

%include "swig/errors.i"
%include "swig/tensor.i"
%include "swig/handles.i"
%include "swig/p2p.i"
%include "swig/optim.i"
%include "swig/ddp.i"
%include "swig/zero.i"
%include "swig/mesh.i"
%include "swig/tp.i"
%include "swig/pipeline.i"
%include "swig/moe.i"
%include "swig/pipeline_executor.i"
%include "swig/cp.i"
%include "swig/plan.i"
%include "swig/stats.i"

/* DT_UNDEF is INT_MIN, which SWIG's preprocessor cannot evaluate. */
%constant int DT_UNDEF = INT_MIN;

%include "dtrain/common.h"
%include "dtrain/status.h"
%include "dtrain/version.h"
%include "dtrain/tensor.h"
%include "dtrain/comm.h"
%include "dtrain/optim.h"
%include "dtrain/ddp.h"
%include "dtrain/zero.h"
%include "dtrain/mesh.h"
%include "dtrain/tp.h"
%include "dtrain/pipeline.h"
%include "dtrain/moe.h"
%include "dtrain/cp.h"
%include "dtrain/plan.h"
