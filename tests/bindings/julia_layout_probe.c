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

  CONSTANT(DT_UNDEF);
  CONSTANT(DT_COMM_OPTIONS_VERSION);
  CONSTANT(kDLCPU);
  CONSTANT(kDLCUDA);
  CONSTANT(kDLCUDAHost);
  CONSTANT(kDLInt);
  CONSTANT(kDLUInt);
  CONSTANT(kDLFloat);
  CONSTANT(kDLBfloat);
  return 0;
}
