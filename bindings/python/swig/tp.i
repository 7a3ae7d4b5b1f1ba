/*
 * Tensor parallelism: optional tensors (a layer without bias, a backward
 * that wants no input gradient) are None, which the C API receives as NULL.
 */

%typemap(in) const DLTensor *bias (dtpy_tensor temp, int converted = 0) {
  if ($input == Py_None) {
    $1 = NULL;
  } else if (dtpy_tensor_arg($input, $descriptor(dtpy_tensor *), 0, "$1_name", &temp, &$1, &converted) < 0) {
    SWIG_fail;
  }
}
%typemap(in) DLTensor *dx (dtpy_tensor temp, int converted = 0), DLTensor *dbias (dtpy_tensor temp, int converted = 0) {
  if ($input == Py_None) {
    $1 = NULL;
  } else if (dtpy_tensor_arg($input, $descriptor(dtpy_tensor *), 1, "$1_name", &temp, &$1, &converted) < 0) {
    SWIG_fail;
  }
}

/* The ignored target: a Python int. */
%apply long long { int64_t ignore_index };
