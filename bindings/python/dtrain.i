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
   objects or returns at once. Calls that may wait on other ranks are
   DTPY_BLOCKING (swig/interrupt.i), given the argument that names their
   communicator: Ctrl-C aborts it and raises KeyboardInterrupt at once. The others
   (rendezvous, which has no communicator yet; destroying, which aborts
   first; local math) only release the GIL. */
%nothread;
%include "swig/errors.i"
%include "swig/interrupt.i"
%thread dt_comm_create;
%thread dt_comm_destroy;
%thread dt_comm::~dt_comm;
DTPY_OWNER(dt_comm, dt_comm_destroy)
DTPY_BLOCKING(dt_comm_split, arg2)
DTPY_BLOCKING(dt_allreduce, arg1)
DTPY_BLOCKING(dt_reduce_scatter, arg1)
DTPY_BLOCKING(dt_allgather, arg1)
DTPY_BLOCKING(dt_broadcast, arg1)
DTPY_BLOCKING(dt_alltoall, arg1)
DTPY_BLOCKING(dt_alltoallv, arg1)
DTPY_BLOCKING(dt_reduce, arg1)
DTPY_BLOCKING(dt_gather, arg1)
DTPY_BLOCKING(dt_scatter, arg1)
DTPY_BLOCKING(dt_allgatherv, arg1)
DTPY_BLOCKING(dt_reduce_scatterv, arg1)
DTPY_BLOCKING(dt_p2p_group, arg1)
DTPY_BLOCKING(dt_send, arg1)
DTPY_BLOCKING(dt_recv, arg1)
DTPY_BLOCKING(dt_barrier, arg1)
DTPY_BLOCKING(dt_request_wait, arg1)
DTPY_OWNED(dt_request, dt_request_free)
%thread dt_optimizer_create;
%thread dt_optimizer_step;
%thread dt_optimizer_zero_grad;
%thread dt_optimizer_destroy;
%thread dt_optimizer::~dt_optimizer;
DTPY_BLOCKING(dt_ddp_create, arg2)
%thread dt_ddp_destroy;
%thread dt_ddp::~dt_ddp;
DTPY_OWNED(dt_ddp, dt_ddp_destroy)
DTPY_BLOCKING(dt_ddp_mark_ready, arg1)
DTPY_BLOCKING(dt_ddp_wait, arg1)
DTPY_BLOCKING(dt_ddp_broadcast_parameters, arg1)
DTPY_BLOCKING(dt_zero_create, arg2)
%thread dt_zero_destroy;
%thread dt_zero::~dt_zero;
DTPY_OWNED(dt_zero, dt_zero_destroy)
DTPY_BLOCKING(dt_zero_mark_ready, arg1)
DTPY_BLOCKING(dt_zero_wait, arg1)
DTPY_BLOCKING(dt_zero_step, arg1)
DTPY_BLOCKING(dt_zero_gather, arg1)
DTPY_BLOCKING(dt_zero_gather_wait, arg1)
DTPY_BLOCKING(dt_zero_release, arg1)
DTPY_BLOCKING(dt_zero_save, arg1)
DTPY_BLOCKING(dt_zero_load, arg1)
DTPY_BLOCKING(dt_mesh_create, arg2)
DTPY_BLOCKING(dt_mesh_comm, arg1)
%thread dt_mesh_destroy;
%thread dt_mesh::~dt_mesh;
DTPY_OWNED(dt_mesh, dt_mesh_destroy)
DTPY_BLOCKING(dt_tp_region_forward, arg1)
DTPY_BLOCKING(dt_tp_region_backward, arg1)
DTPY_BLOCKING(dt_tp_column_linear_forward, arg1)
DTPY_BLOCKING(dt_tp_column_linear_backward, arg1)
DTPY_BLOCKING(dt_tp_row_linear_forward, arg1)
DTPY_BLOCKING(dt_tp_row_linear_backward, arg1)
DTPY_BLOCKING(dt_tp_embedding_forward, arg1)
DTPY_BLOCKING(dt_tp_embedding_backward, arg1)
DTPY_BLOCKING(dt_tp_cross_entropy_forward, arg1)
DTPY_BLOCKING(dt_tp_cross_entropy_backward, arg1)
DTPY_BLOCKING(dt_tp_unshard, arg1)
DTPY_BLOCKING(dt_moe_plan_create, arg2)
%thread dt_moe_plan_destroy;
%thread dt_moe_plan::~dt_moe_plan;
DTPY_OWNED(dt_moe_plan, dt_moe_plan_destroy)
DTPY_BLOCKING(dt_moe_dispatch, arg1)
DTPY_BLOCKING(dt_moe_combine, arg1)
DTPY_BLOCKING(dt_moe_combine_backward, arg1)
DTPY_BLOCKING(dt_moe_dispatch_backward, arg1)
%thread dt_moe_experts_forward;
%thread dt_moe_experts_backward;
DTPY_BLOCKING(dt_pipeline_step, arg1)
DTPY_OWNED(dt_pipeline, dt_pipeline_destroy)
DTPY_BLOCKING(dt_cp_ring_attention_forward, arg1)
DTPY_BLOCKING(dt_cp_ring_attention_backward, arg1)
DTPY_BLOCKING(dt_cp_ulysses_attention_forward, arg1)
DTPY_BLOCKING(dt_cp_ulysses_attention_backward, arg1)

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
%include "swig/log.i"
%include "swig/stats.i"

/* DT_UNDEF is INT_MIN, which SWIG's preprocessor cannot evaluate. */
%constant int DT_UNDEF = INT_MIN;

%include "dtrain/common.h"
%include "dtrain/status.h"
%include "dtrain/version.h"
%include "dtrain/log.h"
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
