/* A program that uses an installed libdtrain the way a user's would. */
#include <dtrain.h>
#include <stdio.h>

int main(void) {
  int major = 0, minor = 0, patch = 0;
  dt_version(&major, &minor, &patch);
  if (major != DT_VERSION_MAJOR || minor != DT_VERSION_MINOR) {
    fprintf(stderr, "header %d.%d but library %d.%d\n", DT_VERSION_MAJOR, DT_VERSION_MINOR, major, minor);
    return 1;
  }
  dt_comm *comm = NULL;
  if (dt_comm_create(&comm, NULL) != DT_OK) {
    fprintf(stderr, "dt_comm_create: %s\n", dt_error_last());
    return 1;
  }
  double value = 21.0, result = 0.0;
  int64_t shape[1] = {1};
  DLTensor send = {&value, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape, NULL, 0};
  DLTensor recv = {&result, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape, NULL, 0};
  dt_status s = dt_allreduce(comm, &send, &recv, DT_SUM, NULL, NULL);
  dt_comm_destroy(comm);
  if (s != DT_OK || result != 21.0) {
    fprintf(stderr, "allreduce: %s (%g)\n", dt_status_string(s), result);
    return 1;
  }
  printf("consumer ok: %s\n", dt_build_info());
  return 0;
}
