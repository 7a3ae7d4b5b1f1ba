#include "mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synthetic.h"

static float *alloc_floats(int64_t n) {
  /* 64-byte aligned, as the optimizer's and BLAS's vector loops like. */
  void *p = NULL;
  size_t bytes = (size_t)n * sizeof(float);
  return posix_memalign(&p, 64, bytes == 0 ? 64 : bytes) == 0 ? p : NULL;
}

int mlp_create(mlp *m, int inputs, int hidden, int hidden_layers, int classes, int max_batch) {
  memset(m, 0, sizeof *m);
  if (inputs <= 0 || hidden <= 0 || classes <= 1 || hidden_layers < 0 ||
      hidden_layers + 1 > MLP_MAX_LINEAR || max_batch <= 0)
    return -1;
  m->linear = hidden_layers + 1;
  m->max_batch = max_batch;
  m->dims[0] = inputs;
  for (int l = 1; l < m->linear; ++l) m->dims[l] = hidden;
  m->dims[m->linear] = classes;

  int widest = 0;
  for (int l = 0; l <= m->linear; ++l) widest = m->dims[l] > widest ? m->dims[l] : widest;
  for (int l = 0; l < m->linear; ++l) {
    m->shape[2 * l][0] = m->dims[l + 1];
    m->shape[2 * l][1] = m->dims[l];
    m->shape[2 * l + 1][0] = m->dims[l + 1];
    m->shape[2 * l + 1][1] = 1;
    m->param_elems += (int64_t)m->dims[l + 1] * m->dims[l] + m->dims[l + 1];
  }
  m->params = alloc_floats(m->param_elems);
  m->grads = alloc_floats(m->param_elems);
  int ok = m->params != NULL && m->grads != NULL;
  for (int l = 0; l <= m->linear && ok; ++l) ok = (m->act[l] = alloc_floats((int64_t)max_batch * m->dims[l])) != NULL;
  for (int k = 0; k < 2 && ok; ++k) ok = (m->delta[k] = alloc_floats((int64_t)max_batch * widest)) != NULL;
  if (!ok) {
    mlp_destroy(m);
    return -1;
  }
  int64_t offset = 0;
  for (size_t i = 0; i < mlp_tensor_count(m); ++i) {
    m->param[i] = m->params + offset;
    m->grad[i] = m->grads + offset;
    offset += m->shape[i][0] * m->shape[i][1];
  }
  memset(m->params, 0, sizeof(float) * m->param_elems);
  memset(m->grads, 0, sizeof(float) * m->param_elems);
  return 0;
}

void mlp_destroy(mlp *m) {
  free(m->params);
  free(m->grads);
  for (int l = 0; l <= MLP_MAX_LINEAR; ++l) free(m->act[l]);
  free(m->delta[0]);
  free(m->delta[1]);
  memset(m, 0, sizeof *m);
}

size_t mlp_tensor_count(const mlp *m) { return 2 * (size_t)m->linear; }

void mlp_init_params(mlp *m, uint64_t key) {
  for (int l = 0; l < m->linear; ++l) {
    int fan_in = m->dims[l];
    double gain = l + 1 < m->linear ? 2.0 : 1.0;
    double scale = sqrt(gain / fan_in);
    uint64_t layer_key = syn_mix(key + (uint64_t)l);
    int64_t n = m->shape[2 * l][0] * m->shape[2 * l][1];
    for (int64_t i = 0; i < n; ++i) m->param[2 * l][i] = (float)(syn_normal(layer_key, (uint64_t)i) * scale);
    memset(m->param[2 * l + 1], 0, sizeof(float) * m->dims[l + 1]);
  }
}

void mlp_tensors(mlp *m, DLTensor *params, DLTensor *grads) {
  for (size_t i = 0; i < mlp_tensor_count(m); ++i) {
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.device.device_type = kDLCPU;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    /* Biases are one-dimensional, as in torch. */
    t.ndim = i % 2 == 0 ? 2 : 1;
    t.shape = m->shape[i];
    t.data = m->param[i];
    params[i] = t;
    t.data = m->grad[i];
    grads[i] = t;
  }
}

static void enter_layer(mlp *m, int layer, int backward) {
  if (m->hooks.enter != NULL) m->hooks.enter(m->hooks.user, m, layer, backward);
}

static void leave_layer(mlp *m, int layer, int backward) {
  if (m->hooks.leave != NULL) m->hooks.leave(m->hooks.user, m, layer, backward);
}

double mlp_forward(mlp *m, const float *x, const int32_t *y, int n, int64_t *correct) {
  m->batch = n;
  m->labels = y;
  *correct = 0;
  if (n <= 0) {
    for (int l = 0; l < m->linear; ++l) {
      enter_layer(m, l, 0);
      leave_layer(m, l, 0);
    }
    return 0.0;
  }
  memcpy(m->act[0], x, sizeof(float) * (size_t)n * m->dims[0]);
  for (int l = 0; l < m->linear; ++l) {
    int in = m->dims[l], out = m->dims[l + 1];
    enter_layer(m, l, 0);
    const float *w = m->param[2 * l], *b = m->param[2 * l + 1];
    float *z = m->act[l + 1];
    /* z = x W^T + b */
    for (int r = 0; r < n; ++r) memcpy(z + (int64_t)r * out, b, sizeof(float) * out);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0f, m->act[l], in, w, in, 1.0f, z, out);
    leave_layer(m, l, 0);
    if (l + 1 < m->linear)
      for (int64_t i = 0; i < (int64_t)n * out; ++i) z[i] = z[i] > 0.0f ? z[i] : 0.0f;
  }
  /* Softmax cross-entropy, row by row, shifted by the row's maximum. */
  int classes = m->dims[m->linear];
  double loss = 0.0;
  for (int r = 0; r < n; ++r) {
    float *p = m->act[m->linear] + (int64_t)r * classes;
    int best = 0;
    for (int c = 1; c < classes; ++c) best = p[c] > p[best] ? c : best;
    float top = p[best];
    double sum = 0.0;
    for (int c = 0; c < classes; ++c) sum += exp((double)(p[c] - top));
    loss += log(sum) - (double)(p[y[r]] - top);
    for (int c = 0; c < classes; ++c) p[c] = (float)(exp((double)(p[c] - top)) / sum);
    *correct += best == y[r];
  }
  return loss;
}

int mlp_backward(mlp *m, mlp_ready_fn ready, void *user) {
  int n = m->batch;
  if (n <= 0) {
    /* A rank without samples contributes zero gradients (and weight 0). */
    for (int l = m->linear - 1; l >= 0; --l) {
      enter_layer(m, l, 1);
      memset(m->grad[2 * l], 0, sizeof(float) * (size_t)m->dims[l + 1] * (size_t)m->dims[l]);
      memset(m->grad[2 * l + 1], 0, sizeof(float) * (size_t)m->dims[l + 1]);
      int rc = ready(user, (size_t)(2 * l + 1));
      if (rc == 0) rc = ready(user, (size_t)(2 * l));
      leave_layer(m, l, 1);
      if (rc != 0) return rc;
    }
    return 0;
  }
  /* d(summed loss / divisor)/d(logits) = (softmax - onehot) / divisor */
  int classes = m->dims[m->linear];
  float divisor = m->loss_divisor > 0.0f ? m->loss_divisor : (float)n;
  float *delta = m->delta[0], *below = m->delta[1];
  for (int r = 0; r < n; ++r) {
    const float *p = m->act[m->linear] + (int64_t)r * classes;
    float *d = delta + (int64_t)r * classes;
    for (int c = 0; c < classes; ++c) d[c] = (p[c] - (c == m->labels[r] ? 1.0f : 0.0f)) / divisor;
  }
  for (int l = m->linear - 1; l >= 0; --l) {
    int in = m->dims[l], out = m->dims[l + 1];
    enter_layer(m, l, 1);
    /* dW = delta^T x, db = column sums of delta */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, n, 1.0f, delta, out, m->act[l], in, 0.0f,
                m->grad[2 * l], in);
    float *db = m->grad[2 * l + 1];
    memset(db, 0, sizeof(float) * out);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < out; ++c) db[c] += delta[(int64_t)r * out + c];
    /* Handing these over now lets their bucket travel while the layers
       below are still being differentiated. */
    int rc = ready(user, (size_t)(2 * l));
    if (rc == 0) rc = ready(user, (size_t)(2 * l + 1));
    if (rc != 0 || l == 0) {
      leave_layer(m, l, 1);
      return rc;
    }
    /* below = (delta W) * relu'(act[l]) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, out, 1.0f, delta, out, m->param[2 * l], in,
                0.0f, below, in);
    leave_layer(m, l, 1);
    const float *a = m->act[l];
    for (int64_t i = 0; i < (int64_t)n * in; ++i) below[i] = a[i] > 0.0f ? below[i] : 0.0f;
    float *t = delta;
    delta = below;
    below = t;
  }
  return 0;
}

uint64_t mlp_param_hash(const mlp *m) {
  /* FNV-1a over the bytes. */
  const unsigned char *p = (const unsigned char *)m->params;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < sizeof(float) * (size_t)m->param_elems; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

void mlp_blas_single_thread(void) {
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);
#endif
}
