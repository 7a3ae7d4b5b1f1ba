/*
 * Tensor parallelism. Optional tensors (a layer without bias, a backward
 * that wants no input gradient) are None, which every tensor argument turns
 * into NULL (swig/tensor.i); the ignored target is a Python int.
 */

%apply long long { int64_t ignore_index };
