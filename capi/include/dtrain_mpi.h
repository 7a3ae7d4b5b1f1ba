/** @file
 * libdtrain — bootstrapping from an existing MPI communicator.
 *
 * Header-only: the calling program links MPI; libdtrain itself never does.
 * dt_comm_create_mpi() runs libdtrain's rendezvous over MPI_Allgather on the
 * caller's communicator, so no store and no launcher variables are needed:
 *
 *     #include <dtrain_mpi.h>
 *     dt_comm *comm;
 *     dt_comm_create_mpi(&comm, MPI_COMM_WORLD, NULL);
 *
 * The new communicator has the same ranks as `mpi_comm`. The MPI communicator
 * is used only during the call (collectively, on every rank of it).
 */
#ifndef DTRAIN_MPI_H
#define DTRAIN_MPI_H

#include <limits.h>
#include <mpi.h>

#include "dtrain.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The out-of-band allgather over the MPI communicator `user` points to. */
static inline dt_status dt_mpi_oob_allgather(void *user, const void *send, void *recv, size_t bytes) {
  MPI_Comm comm = *(MPI_Comm *)user;
  if (bytes > (size_t)INT_MAX) return DT_ERR_INVALID_ARGUMENT;
  int rc = MPI_Allgather((void *)send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, comm);
  return rc == MPI_SUCCESS ? DT_OK : DT_ERR_TRANSPORT;
}

/**
 * Creates a libdtrain communicator over the ranks of `mpi_comm`. `opts` may
 * be NULL; its rank, world_size, store, oob_allgather and oob_user are
 * replaced by what `mpi_comm` says. Collective over `mpi_comm`.
 */
static inline dt_status dt_comm_create_mpi(dt_comm **out, MPI_Comm mpi_comm, const dt_comm_options *opts) {
  dt_comm_options o = DT_COMM_OPTIONS_INIT;
  int rank = 0, size = 0;
  if (opts != NULL) {
    if (opts->version != DT_COMM_OPTIONS_VERSION) {
      /* Let the library report an unknown version with its usual message. */
      return dt_comm_create(out, opts);
    }
    o = *opts;
  }
  if (MPI_Comm_rank(mpi_comm, &rank) != MPI_SUCCESS || MPI_Comm_size(mpi_comm, &size) != MPI_SUCCESS) {
    return DT_ERR_INVALID_ARGUMENT;
  }
  o.rank = rank;
  o.world_size = size;
  o.store = NULL;
  o.oob_allgather = dt_mpi_oob_allgather;
  o.oob_user = &mpi_comm;
  return dt_comm_create(out, &o);
}

#ifdef __cplusplus
}
#endif

#endif /* DTRAIN_MPI_H */
