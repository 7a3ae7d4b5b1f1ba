/*
 * Context parallelism: the attention calls take tensors as every call does;
 * only the token positions of dt_cp_attention() may also be None (NULL),
 * which the library accepts when the attention is not causal.
 */

%typemap(in) const DLTensor *q_positions (dtpy_tensor temp, int converted = 0),
             const DLTensor *k_positions (dtpy_tensor temp, int converted = 0) {
  if ($input == Py_None) {
    $1 = NULL;
  } else if (dtpy_tensor_arg($input, $descriptor(dtpy_tensor *), 0, "$1_name", &temp, &$1, &converted) < 0) {
    SWIG_fail;
  }
}
