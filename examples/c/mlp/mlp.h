/*
 * A multi-layer perceptron with its own forward and backward: linear layers
 * with ReLU between them and softmax cross-entropy at the end, the matrix
 * products done by CBLAS. It knows nothing about ranks: the trainer hands its
 * gradients to DDP through the `ready` callback of mlp_backward(), and a
 * sharded trainer makes each layer's parameters whole just before it is used
 * through the layer hooks.
 *
 * Parameters are registered in forward order, W0, b0, W1, b1, ...: tensor 2l
 * is layer l's weight, [out x in] row-major as in torch.nn.Linear, and 2l+1
 * its bias. Backward produces them from the last layer down.
 */
#ifndef DT_EXAMPLE_MLP_H
#define DT_EXAMPLE_MLP_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLP_MAX_LINEAR 8

/* Called by mlp_backward() as soon as gradient `index` is final; a nonzero
   return stops backward and is passed on. */
typedef int (*mlp_ready_fn)(void *user, size_t index);

struct mlp;

/* Called around each use of linear layer `layer`, by forward (backward = 0)
   and by backward (backward = 1). When enter() returns, param[2 layer] and
   param[2 layer + 1] (and in backward grad[2 layer], grad[2 layer + 1]) must
   point at the layer's tensors; leave() says they are no longer needed. The
   hooks may repoint them. NULL members are not called. */
typedef struct mlp_layer_hooks {
  void (*enter)(void *user, struct mlp *m, int layer, int backward);
  void (*leave)(void *user, struct mlp *m, int layer, int backward);
  void *user;
} mlp_layer_hooks;

typedef struct mlp {
  int linear;                        /* number of linear layers */
  int dims[MLP_MAX_LINEAR + 1];      /* dims[0] inputs, ..., dims[linear] classes */
  int max_batch;
  int batch;                         /* rows of the last forward */
  float *params;                     /* every parameter, one block, forward order */
  float *grads;                      /* every gradient, laid out like params */
  float *param[2 * MLP_MAX_LINEAR];  /* tensor i within params */
  float *grad[2 * MLP_MAX_LINEAR];
  int64_t shape[2 * MLP_MAX_LINEAR][2];
  int64_t param_elems;               /* total */
  float *act[MLP_MAX_LINEAR + 1];    /* act[0] input, act[l+1] layer l's output (ReLU'd;
                                        the last holds softmax probabilities after forward) */
  const int32_t *labels;             /* of the last forward, borrowed */
  float *delta[2];                   /* backward scratch: loss gradient w.r.t. an activation */
  mlp_layer_hooks hooks;             /* none after mlp_create() */
  float loss_divisor;                /* backward differentiates the summed loss over this;
                                        0 (after mlp_create()): over the batch's own size */
} mlp;

/* Layers inputs -> hidden (x hidden_layers) -> classes. 0, or -1 on a bad
   size or when out of memory. */
int mlp_create(mlp *m, int inputs, int hidden, int hidden_layers, int classes, int max_batch);
void mlp_destroy(mlp *m);

/* The number of parameter (and gradient) tensors. */
size_t mlp_tensor_count(const mlp *m);

/* He initialisation from a generator key (see synthetic.h): weight l is
   normal(mix(key + l), i) * sqrt(g / fan_in), g = 2 before a ReLU and 1 for
   the output layer; biases are zero. */
void mlp_init_params(mlp *m, uint64_t key);

/* Host DLTensors over parameter and gradient i (mlp_tensor_count() each). */
void mlp_tensors(mlp *m, DLTensor *params, DLTensor *grads);

/* Forward over n <= max_batch samples x [n x inputs] with labels y (kept,
   borrowed, for backward). Returns the summed cross-entropy; *correct gets
   the number of samples whose argmax is the label. With n = 0 it still calls
   every layer's hooks, so that a rank without samples keeps in step with the
   others when the hooks are collective. */
double mlp_forward(mlp *m, const float *x, const int32_t *y, int n, int64_t *correct);

/* Writes the gradients of the last forward's summed loss divided by
   loss_divisor (by default the mean loss; zero for n = 0) and calls
   ready(user, i) for each tensor as it becomes final. */
int mlp_backward(mlp *m, mlp_ready_fn ready, void *user);

/* A hash of every parameter's bits: equal on replicas that are identical. */
uint64_t mlp_param_hash(const mlp *m);

/* One BLAS thread: ranks are the parallelism, and more ranks than cores is
   the rule on a laptop. */
void mlp_blas_single_thread(void);

#ifdef __cplusplus
}
#endif

#endif /* DT_EXAMPLE_MLP_H */
