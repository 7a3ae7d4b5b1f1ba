// DLTensor views over the trainer's own vectors, for the calls into libdtrain,
// and the one way a failed call is reported.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpt {

// A borrowed, row-major view of rows x cols floats (cols -1: a vector of
// rows), of rows x heads x dim floats (attention's layout), or of n int32
// ids or int64 positions or indices. Any size may be 0. Not copyable: the
// DLTensor points at its shape.
class View {
 public:
  View(const float *data, int64_t rows, int64_t cols = -1) { init(data, kDLFloat, 32, {rows, cols, -1}); }
  View(const float *data, int64_t rows, int64_t heads, int64_t dim) { init(data, kDLFloat, 32, {rows, heads, dim}); }
  View(const int32_t *data, int64_t n) { init(data, kDLInt, 32, {n, -1, -1}); }
  View(const int64_t *data, int64_t rows, int64_t cols = -1) { init(data, kDLInt, 64, {rows, cols, -1}); }
  View(const View &) = delete;
  View &operator=(const View &) = delete;
  DLTensor *get() { return &t_; }

 private:
  struct Dims {
    int64_t d[3];
  };
  void init(const void *data, uint8_t code, uint8_t bits, Dims dims) {
    t_ = DLTensor{};
    t_.ndim = 0;
    for (int64_t d : dims.d)
      if (d >= 0) shape_[t_.ndim++] = d;
    t_.data = const_cast<void *>(data);
    t_.device = {kDLCPU, 0};
    t_.dtype = {code, bits, 1};
    t_.shape = shape_;
  }
  int64_t shape_[3];
  DLTensor t_;
};

// Throws, with libdtrain's message, when `s` is not DT_OK.
inline void check(dt_status s, const char *what) {
  if (s != DT_OK) throw std::runtime_error(std::string(what) + ": " + dt_status_string(s) + ": " + dt_error_last());
}

}  // namespace gpt
