// DLTensor views over the trainer's own vectors, for the calls into libdtrain,
// and the one way a failed call is reported.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpt {

// A borrowed, row-major view of rows x cols floats (cols 0: a vector of
// rows), or of n int32 ids. Not copyable: the DLTensor points at its shape.
class View {
 public:
  View(const float *data, int64_t rows, int64_t cols = 0) { init(data, kDLFloat, rows, cols); }
  View(const int32_t *data, int64_t n) { init(data, kDLInt, n, 0); }
  View(const View &) = delete;
  View &operator=(const View &) = delete;
  DLTensor *get() { return &t_; }

 private:
  void init(const void *data, uint8_t code, int64_t rows, int64_t cols) {
    shape_[0] = rows;
    shape_[1] = cols;
    t_ = DLTensor{};
    t_.data = const_cast<void *>(data);
    t_.device = {kDLCPU, 0};
    t_.ndim = cols > 0 ? 2 : 1;
    t_.dtype = {code, 32, 1};
    t_.shape = shape_;
  }
  int64_t shape_[2];
  DLTensor t_;
};

// Throws, with libdtrain's message, when `s` is not DT_OK.
inline void check(dt_status s, const char *what) {
  if (s != DT_OK) throw std::runtime_error(std::string(what) + ": " + dt_status_string(s) + ": " + dt_error_last());
}

}  // namespace gpt
