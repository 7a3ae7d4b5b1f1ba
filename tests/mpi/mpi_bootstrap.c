/* Bootstraps libdtrain from MPI_COMM_WORLD through dtrain_mpi.h, then checks
 * that both agree on ranks and that an allreduce matches MPI's. */
#include <dtrain_mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int mpi_rank = 0, mpi_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);

  dt_comm *comm = NULL;
  dt_status s = dt_comm_create_mpi(&comm, MPI_COMM_WORLD, NULL);
  if (s != DT_OK) {
    fprintf(stderr, "rank %d: dt_comm_create_mpi: %s: %s\n", mpi_rank, dt_status_string(s), dt_error_last());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int rank = -1, size = -1;
  dt_comm_rank(comm, &rank);
  dt_comm_size(comm, &size);
  int failures = (rank != mpi_rank) + (size != mpi_size);

  double mine[3] = {mpi_rank + 1.0, 2.0 * mpi_rank, -1.0};
  double ours[3], theirs[3];
  int64_t shape[1] = {3};
  DLTensor send = {mine, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape, NULL, 0};
  DLTensor recv = {ours, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape, NULL, 0};
  s = dt_allreduce(comm, &send, &recv, DT_SUM, NULL, NULL);
  if (s != DT_OK) {
    fprintf(stderr, "rank %d: dt_allreduce: %s\n", mpi_rank, dt_error_last());
    failures++;
  }
  MPI_Allreduce(mine, theirs, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 3; ++i) failures += ours[i] != theirs[i];

  dt_comm_destroy(comm);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (mpi_rank == 0) printf("%s: %d ranks bootstrapped through MPI\n", total == 0 ? "ok" : "FAILED", mpi_size);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
