/* Joins the job from the environment, then checks through an allgather that
 * every rank agrees on the world: rank r reports (r, size). Prints
 * "rank R of N agrees" or the failure; exits 0 only on agreement. */
#include <dtrain.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  dt_comm *comm = NULL;
  dt_status s = dt_comm_create(&comm, NULL);
  if (s != DT_OK) {
    printf("dt_comm_create: %s: %s\n", dt_status_string(s), dt_error_last());
    return 3;
  }
  int rank = -1, size = -1;
  dt_comm_rank(comm, &rank);
  dt_comm_size(comm, &size);
  int32_t mine[2] = {rank, size};
  int32_t *all = calloc(2 * (size_t)size, sizeof *all);
  int64_t send_shape[1] = {2}, recv_shape[1] = {2 * (int64_t)size};
  DLTensor send = {mine, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, send_shape, NULL, 0};
  DLTensor recv = {all, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, recv_shape, NULL, 0};
  s = dt_allgather(comm, &send, &recv, NULL, NULL);
  int agree = s == DT_OK;
  for (int r = 0; agree && r < size; ++r) agree = all[2 * r] == r && all[2 * r + 1] == size;
  if (agree) {
    printf("rank %d of %d agrees\n", rank, size);
  } else {
    printf("rank %d of %d disagrees: %s\n", rank, size, s == DT_OK ? "mismatched reports" : dt_error_last());
  }
  free(all);
  dt_comm_destroy(comm);
  return agree ? 0 : 1;
}
