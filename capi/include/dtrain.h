/** @file
 * libdtrain — distributed training as an embeddable library.
 *
 * The only public API: include this header and link libdtrain.so.
 * Conventions (status codes, ownership, options structs, tensors) are
 * described in each module's header.
 */
#ifndef DTRAIN_H
#define DTRAIN_H

#include "dtrain/common.h"
#include "dtrain/status.h"
#include "dtrain/version.h"
#include "dtrain/log.h"
#include "dtrain/tensor.h"
#include "dtrain/comm.h"
#include "dtrain/optim.h"
#include "dtrain/ddp.h"
#include "dtrain/zero.h"
#include "dtrain/mesh.h"
#include "dtrain/tp.h"
#include "dtrain/pipeline.h"
#include "dtrain/moe.h"
#include "dtrain/cp.h"
#include "dtrain/plan.h"

#endif /* DTRAIN_H */
