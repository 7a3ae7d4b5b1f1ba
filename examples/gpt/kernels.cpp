#include "kernels.hpp"

#include <cblas.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace gpt {

namespace {
constexpr float kEps = 1e-5f;
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
}  // namespace

void layernorm_forward(const float *x, const float *g, const float *b, float *y, float *mean, float *rstd,
                       int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    double m = 0.0, v = 0.0;
    for (int64_t c = 0; c < cols; ++c) m += xr[c];
    m /= (double)cols;
    for (int64_t c = 0; c < cols; ++c) v += (xr[c] - m) * (xr[c] - m);
    float s = (float)(1.0 / std::sqrt(v / (double)cols + kEps));
    mean[r] = (float)m;
    rstd[r] = s;
    for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - (float)m) * s * g[c] + b[c];
  }
}

void layernorm_backward(const float *x, const float *mean, const float *rstd, const float *g, const float *dy,
                        float *dx, float *dg, float *db, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols, *dyr = dy + r * cols;
    float *dxr = dx + r * cols;
    float m = mean[r], s = rstd[r];
    double sum_d = 0.0, sum_dx = 0.0;  // means of dxhat and dxhat * xhat
    for (int64_t c = 0; c < cols; ++c) {
      float xhat = (xr[c] - m) * s;
      float d = dyr[c] * g[c];
      sum_d += d;
      sum_dx += d * xhat;
      dg[c] += dyr[c] * xhat;
      db[c] += dyr[c];
    }
    float md = (float)(sum_d / (double)cols), mdx = (float)(sum_dx / (double)cols);
    for (int64_t c = 0; c < cols; ++c) {
      float xhat = (xr[c] - m) * s;
      dxr[c] += s * (dyr[c] * g[c] - md - xhat * mdx);
    }
  }
}

void gelu_forward(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(kGeluC * (v + 0.044715f * v * v * v)));
  }
}

void gelu_backward(const float *x, const float *dy, float *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    float t = std::tanh(kGeluC * (v + 0.044715f * v * v * v));
    float dt = kGeluC * (1.0f + 3.0f * 0.044715f * v * v) * (1.0f - t * t);
    dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * dt);
  }
}

// Per (sequence, head): S = Q K^T / sqrt(d) masked above the diagonal,
// P = softmax(S), O = P V. The products go through CBLAS with the row
// strides of the packed qkv and out rows.
void attention_forward(const float *qkv, float *out, float *probs, int64_t seqs, int64_t len, int64_t heads,
                       int64_t dim) {
  const int64_t width = heads * dim, stride = 3 * width;
  const float scale = 1.0f / std::sqrt((float)dim);
  for (int64_t s = 0; s < seqs; ++s)
    for (int64_t h = 0; h < heads; ++h) {
      const float *q = qkv + s * len * stride + h * dim;
      const float *k = q + width, *v = q + 2 * width;
      float *p = probs + (s * heads + h) * len * len;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)len, (int)len, (int)dim, scale, q, (int)stride, k,
                  (int)stride, 0.0f, p, (int)len);
      for (int64_t i = 0; i < len; ++i) {
        float *row = p + i * len;
        float mx = row[0];
        for (int64_t j = 1; j <= i; ++j) mx = row[j] > mx ? row[j] : mx;
        float sum = 0.0f;
        for (int64_t j = 0; j <= i; ++j) sum += row[j] = std::exp(row[j] - mx);
        for (int64_t j = 0; j <= i; ++j) row[j] /= sum;
        for (int64_t j = i + 1; j < len; ++j) row[j] = 0.0f;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)len, (int)dim, (int)len, 1.0f, p, (int)len, v,
                  (int)stride, 0.0f, out + s * len * width + h * dim, (int)width);
    }
}

// dP = dO V^T, dV = P^T dO, dS = P (dP - rowsum(dP P)), dQ = dS K / sqrt(d),
// dK = dS^T Q / sqrt(d).
void attention_backward(const float *qkv, const float *probs, const float *dout, float *dqkv, int64_t seqs,
                        int64_t len, int64_t heads, int64_t dim) {
  const int64_t width = heads * dim, stride = 3 * width;
  const float scale = 1.0f / std::sqrt((float)dim);
  std::vector<float> ds((size_t)(len * len));
  for (int64_t s = 0; s < seqs; ++s)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t base = s * len * stride + h * dim;
      const float *q = qkv + base, *k = q + width, *v = q + 2 * width;
      float *dq = dqkv + base, *dk = dq + width, *dv = dq + 2 * width;
      const float *p = probs + (s * heads + h) * len * len;
      const float *dO = dout + s * len * width + h * dim;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)len, (int)len, (int)dim, 1.0f, dO, (int)width, v,
                  (int)stride, 0.0f, ds.data(), (int)len);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)len, (int)dim, (int)len, 1.0f, p, (int)len, dO,
                  (int)width, 0.0f, dv, (int)stride);
      for (int64_t i = 0; i < len; ++i) {
        float *row = ds.data() + i * len;
        const float *prow = p + i * len;
        float dot = 0.0f;
        for (int64_t j = 0; j <= i; ++j) dot += row[j] * prow[j];
        for (int64_t j = 0; j <= i; ++j) row[j] = prow[j] * (row[j] - dot);
        for (int64_t j = i + 1; j < len; ++j) row[j] = 0.0f;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)len, (int)dim, (int)len, scale, ds.data(), (int)len,
                  k, (int)stride, 0.0f, dq, (int)stride);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)len, (int)dim, (int)len, scale, ds.data(), (int)len,
                  q, (int)stride, 0.0f, dk, (int)stride);
    }
}

void add_positions(float *x, const float *pos, const int64_t *where, int64_t rows, int64_t len, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) add_into(x + r * cols, pos + where[r % len] * cols, cols);
}

void positions_backward(const float *dx, float *dpos, const int64_t *where, int64_t rows, int64_t len,
                        int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) add_into(dpos + where[r % len] * cols, dx + r * cols, cols);
}

void add_into(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace gpt
