// DTRAIN_HOST_DEVICE marks a function that both the CPU kernels and the CUDA
// kernels call, so that both devices compute an element by the same formula.
#pragma once

#ifdef __CUDACC__
#define DTRAIN_HOST_DEVICE __host__ __device__
#else
#define DTRAIN_HOST_DEVICE
#endif
