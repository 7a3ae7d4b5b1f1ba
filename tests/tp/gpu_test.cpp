// Tensor parallelism on CUDA tensors through the C API, one process per rank
// under dtrun (ranks sharing a GPU take the staged path, one rank alone
// NCCL). Every call runs twice in the same ranks with the same values: on
// host tensors, the reference (capi_tp_test.cpp holds it to the dense layer
// in double), and on copies of them on the GPU; the outputs must agree (f32
// within 1e-5 of the largest value, bf16 within 1e-2).
//
// Also: inputs written on the legacy default stream behind a host function
// that sleeps are what the call reads (it waits for that stream); tensors
// in two places are refused. Exits 77 (skipped) without a CUDA device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/world_fixture.hpp"
#include "common/gpu_program.hpp"
#include "dtrain.h"
#include "tp/dense.hpp"

namespace {

using dtrain::testing::random_dense;

using dtrain::testing::check;
using dtrain::testing::from_bf16;
using dtrain::testing::to_bf16;

enum class Kind { f32, bf16, i64 };

// One test tensor twice: in host memory for the reference call, and a copy
// on the current GPU for the call under test.
class Twin {
 public:
  Twin(Kind kind, std::vector<std::int64_t> shape, const std::vector<double>& values)
      : kind_(kind), shape_(std::move(shape)), bytes_(values.size() * element()) {
    for (std::size_t i = 0; i < values.size(); ++i) store(i, values[i]);
    check(cudaMalloc(&device_, std::max<std::size_t>(bytes_.size(), 1)), "cudaMalloc");
    check(cudaMemcpy(device_, bytes_.data(), bytes_.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    for (DLTensor* t : {&host_, &gpu_}) {
      t->ndim = static_cast<std::int32_t>(shape_.size());
      t->shape = shape_.data();
      t->dtype = kind == Kind::f32 ? DLDataType{kDLFloat, 32, 1}
                                   : kind == Kind::bf16 ? DLDataType{kDLBfloat, 16, 1} : DLDataType{kDLInt, 64, 1};
    }
    host_.data = bytes_.data();
    host_.device = {kDLCPU, 0};
    gpu_.data = device_;
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    gpu_.device = {kDLCUDA, device};
  }
  // rows x cols of f32 from a dense test matrix.
  explicit Twin(const dtrain::testing::Dense& d, Kind kind = Kind::f32) : Twin(kind, {d.rows, d.cols}, d.v) {}
  ~Twin() { cudaFree(device_); }
  Twin(const Twin&) = delete;
  Twin& operator=(const Twin&) = delete;

  DLTensor* on(bool gpu) { return gpu ? &gpu_ : &host_; }
  std::vector<double> host_values() const { return values(bytes_); }
  std::vector<double> gpu_values() const {
    std::vector<unsigned char> copy(bytes_.size());
    check(cudaMemcpy(copy.data(), device_, copy.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return values(copy);
  }
  double tolerance() const { return kind_ == Kind::bf16 ? 1e-2 : 1e-5; }

 private:
  std::size_t element() const { return kind_ == Kind::bf16 ? 2 : kind_ == Kind::f32 ? 4 : 8; }
  void store(std::size_t i, double value) {
    unsigned char* at = bytes_.data() + i * element();
    if (kind_ == Kind::f32) {
      const float f = static_cast<float>(value);
      std::memcpy(at, &f, 4);
    } else if (kind_ == Kind::bf16) {
      const std::uint16_t h = to_bf16(static_cast<float>(value));
      std::memcpy(at, &h, 2);
    } else {
      const auto n = static_cast<std::int64_t>(value);
      std::memcpy(at, &n, 8);
    }
  }
  std::vector<double> values(const std::vector<unsigned char>& bytes) const {
    std::vector<double> out(bytes.size() / element());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const unsigned char* at = bytes.data() + i * element();
      if (kind_ == Kind::f32) {
        float f;
        std::memcpy(&f, at, 4);
        out[i] = f;
      } else if (kind_ == Kind::bf16) {
        std::uint16_t h;
        std::memcpy(&h, at, 2);
        out[i] = from_bf16(h);
      } else {
        std::int64_t n;
        std::memcpy(&n, at, 8);
        out[i] = static_cast<double>(n);
      }
    }
    return out;
  }

  Kind kind_;
  std::vector<std::int64_t> shape_;
  std::vector<unsigned char> bytes_;
  void* device_ = nullptr;
  DLTensor host_{}, gpu_{};
};

// Zeroed f32 (or bf16) outputs of rows x cols.
Twin output(std::int64_t rows, std::int64_t cols, Kind kind = Kind::f32) {
  return Twin(kind, {rows, cols}, std::vector<double>(static_cast<std::size_t>(rows * cols), 0.0));
}

class GpuTp : public dtrain::testing::WorldFixture {
 protected:
  static constexpr std::int64_t T = 12, H = 8, F = 24, V = 24;

  void SetUp() override {
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    const char* local = std::getenv("DTRAIN_LOCAL_RANK");
    check(cudaSetDevice((local ? std::atoi(local) : 0) % devices), "cudaSetDevice");
    WorldFixture::SetUp();
  }

  // Runs `calls` on host tensors, then on the GPU copies, and compares `outputs`.
  void expect_same(const std::function<void(bool gpu)>& calls, std::initializer_list<const Twin*> outputs,
                   const std::string& what) {
    calls(false);
    calls(true);
    int index = 0;
    for (const Twin* out : outputs) {
      const std::vector<double> want = out->host_values(), got = out->gpu_values();
      double diff = 0, scale = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        diff = std::max(diff, std::abs(got[i] - want[i]));
        scale = std::max(scale, std::abs(want[i]));
      }
      EXPECT_LE(scale == 0 ? diff : diff / scale, out->tolerance())
          << what << ": output " << index << " on rank " << rank_ << " of " << size_;
      ++index;
    }
  }
};

#define CALL(expr) ASSERT_EQ((expr), DT_OK) << dt_error_last() << " (" << (gpu ? "GPU" : "host") << ")"

TEST_F(GpuTp, ColumnParallelLinearAgreesWithTheHost) {
  for (Kind kind : {Kind::f32, Kind::bf16}) {
    for (unsigned flags : {0u, DT_TP_GATHER_OUTPUT, DT_TP_SEQUENCE_PARALLEL,
                           DT_TP_SEQUENCE_PARALLEL | DT_TP_GATHER_OUTPUT}) {
      const bool sp = flags & DT_TP_SEQUENCE_PARALLEL, gather = flags & DT_TP_GATHER_OUTPUT;
      Twin x(random_dense(sp ? T / size_ : T, H, 1), kind), w(random_dense(F / size_, H, 2 + rank_), kind),
          b(kind, {F / size_}, random_dense(F / size_, 1, 3 + rank_).v),
          dy(random_dense(T, gather ? F : F / size_, 4), kind);
      Twin y = output(T, gather ? F : F / size_, kind), dx = output(sp ? T / size_ : T, H, kind),
           dw = output(F / size_, H, kind), db = output(F / size_, 1, kind);
      expect_same(
          [&](bool gpu) {
            CALL(dt_tp_column_linear_forward(comm_, x.on(gpu), w.on(gpu), b.on(gpu), y.on(gpu), flags));
            CALL(dt_tp_column_linear_backward(comm_, x.on(gpu), w.on(gpu), dy.on(gpu), dx.on(gpu), dw.on(gpu),
                                              db.on(gpu), flags));
          },
          {&y, &dx, &dw, &db}, "column flags " + std::to_string(flags) + (kind == Kind::bf16 ? " bf16" : " f32"));
    }
  }
}

TEST_F(GpuTp, RowParallelLinearAgreesWithTheHost) {
  for (unsigned flags : {0u, DT_TP_SEQUENCE_PARALLEL, DT_TP_ACCUMULATE}) {
    const bool sp = flags & DT_TP_SEQUENCE_PARALLEL;
    Twin x(random_dense(T, F / size_, 5 + rank_)), w(random_dense(H, F / size_, 6 + rank_)),
        b(Kind::f32, {H}, random_dense(H, 1, 7).v), dy(random_dense(sp ? T / size_ : T, H, 8 + rank_));
    Twin y = output(sp ? T / size_ : T, H), dx = output(T, F / size_), dw(random_dense(H, F / size_, 9)),
         db = output(H, 1);
    expect_same(
        [&](bool gpu) {
          CALL(dt_tp_row_linear_forward(comm_, x.on(gpu), w.on(gpu), b.on(gpu), y.on(gpu), flags & ~DT_TP_ACCUMULATE));
          CALL(dt_tp_row_linear_backward(comm_, x.on(gpu), w.on(gpu), dy.on(gpu), dx.on(gpu), dw.on(gpu), db.on(gpu),
                                         flags));
        },
        {&y, &dx, &dw, &db}, "row flags " + std::to_string(flags));
  }
}

TEST_F(GpuTp, MappingsAgreeWithTheHost) {
  const struct {
    dt_tp_region region;
    std::int64_t in_rows, in_cols, out_rows, out_cols;
  } cases[] = {
      {DT_TP_COPY, T, H, T, H},
      {DT_TP_REDUCE, T, H, T, H},
      {DT_TP_SCATTER, T, F, T, F / size_},
      {DT_TP_GATHER, T, H, T, H * size_},
      {DT_TP_SEQ_GATHER, T, H, T * size_, H},
      {DT_TP_SEQ_REDUCE_SCATTER, T, H, T / size_, H},
  };
  for (const auto& c : cases) {
    Twin in(random_dense(c.in_rows, c.in_cols, 30 + rank_)), out = output(c.out_rows, c.out_cols),
        grad_out(random_dense(c.out_rows, c.out_cols, 40 + rank_)), grad_in = output(c.in_rows, c.in_cols);
    expect_same(
        [&](bool gpu) {
          CALL(dt_tp_region_forward(comm_, c.region, in.on(gpu), out.on(gpu)));
          CALL(dt_tp_region_backward(comm_, c.region, grad_out.on(gpu), grad_in.on(gpu)));
        },
        {&out, &grad_in}, "region " + std::to_string(c.region));
  }
}

TEST_F(GpuTp, EmbeddingAndCrossEntropyAgreeWithTheHost) {
  std::vector<double> ids(T), targets(T);
  for (std::int64_t t = 0; t < T; ++t) {
    ids[t] = static_cast<double>((t * 7 + 3) % V);
    targets[t] = static_cast<double>((t * 5 + 1) % V);
  }
  ids[1] = ids[0];      // a repeated id sums its gradients
  targets[3] = -100;    // ignored
  for (unsigned flags : {0u, DT_TP_SEQUENCE_PARALLEL}) {
    const bool sp = flags & DT_TP_SEQUENCE_PARALLEL;
    Twin table(random_dense(V / size_, H, 50 + rank_)), id(Kind::i64, {T}, ids), out = output(sp ? T / size_ : T, H),
        dout(random_dense(sp ? T / size_ : T, H, 51 + rank_)), dtable(random_dense(V / size_, H, 52));
    expect_same(
        [&](bool gpu) {
          CALL(dt_tp_embedding_forward(comm_, table.on(gpu), id.on(gpu), out.on(gpu), flags));
          CALL(dt_tp_embedding_backward(comm_, id.on(gpu), dout.on(gpu), dtable.on(gpu), flags | DT_TP_ACCUMULATE));
        },
        {&out, &dtable}, "embedding flags " + std::to_string(flags));
  }
  for (float smoothing : {0.0f, 0.1f}) {
    Twin logits(random_dense(T, V / size_, 60 + rank_, 3.0)), target(Kind::i64, {T}, targets),
        loss(Kind::f32, {T}, std::vector<double>(T, 0.0)), lse(Kind::f32, {T}, std::vector<double>(T, 0.0)),
        dloss(Kind::f32, {T}, random_dense(T, 1, 61).v), dlogits = output(T, V / size_);
    expect_same(
        [&](bool gpu) {
          CALL(dt_tp_cross_entropy_forward(comm_, logits.on(gpu), target.on(gpu), loss.on(gpu), lse.on(gpu),
                                           smoothing, -100));
          CALL(dt_tp_cross_entropy_backward(comm_, logits.on(gpu), target.on(gpu), lse.on(gpu), dloss.on(gpu),
                                            dlogits.on(gpu), smoothing, -100));
        },
        {&loss, &lse, &dlogits}, "cross-entropy smoothing " + std::to_string(smoothing));
  }
}

TEST_F(GpuTp, ShardsAgreeWithTheHost) {
  const int q = 2 * size_, kv = size_, d = 2;
  for (dt_tp_shard_kind kind : {DT_TP_SHARD_ROWS, DT_TP_SHARD_COLUMNS, DT_TP_SHARD_QKV}) {
    const bool columns = kind == DT_TP_SHARD_COLUMNS;
    const std::int64_t rows = columns ? H : (q + 2 * kv) * d, cols = columns ? F : H;
    Twin full(random_dense(rows, cols, 70)),
        local = output(columns ? rows : rows / size_, columns ? cols / size_ : cols),
        back = output(rows, cols);
    expect_same(
        [&](bool gpu) {
          CALL(dt_tp_shard(kind, full.on(gpu), local.on(gpu), rank_, size_, q, kv));
          CALL(dt_tp_unshard(comm_, kind, local.on(gpu), back.on(gpu), q, kv));
        },
        {&local, &back}, "shard kind " + std::to_string(kind));
  }
}

void CUDART_CB sleep_a_while(void*) { usleep(200 * 1000); }

TEST_F(GpuTp, InputsWrittenOnTheLegacyDefaultStreamAreWaitedFor) {
  Twin x(random_dense(T, H, 80)), w(random_dense(F / size_, H, 81 + rank_)), y = output(T, F / size_);
  expect_same(
      [&](bool gpu) {
        if (gpu) {
          // x on the device is zeros until a copy (from pinned memory, so that
          // it is queued, not done at once) that waits behind a sleep on stream 0.
          const std::vector<double> values = x.host_values();
          float* pinned = nullptr;
          const std::size_t bytes = values.size() * sizeof(float);
          check(cudaMallocHost(reinterpret_cast<void**>(&pinned), bytes), "cudaMallocHost");
          std::copy(values.begin(), values.end(), pinned);
          DLTensor* on_device = x.on(true);
          check(cudaMemset(on_device->data, 0, bytes), "cudaMemset");
          check(cudaLaunchHostFunc(cudaStreamLegacy, sleep_a_while, nullptr), "cudaLaunchHostFunc");
          check(cudaMemcpyAsync(on_device->data, pinned, bytes, cudaMemcpyHostToDevice, cudaStreamLegacy),
                "cudaMemcpyAsync");
          const dt_status status = dt_tp_column_linear_forward(comm_, x.on(true), w.on(true), nullptr, y.on(true), 0);
          check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
          cudaFreeHost(pinned);
          ASSERT_EQ(status, DT_OK) << dt_error_last();
          return;
        }
        CALL(dt_tp_column_linear_forward(comm_, x.on(false), w.on(false), nullptr, y.on(false), 0));
      },
      {&y}, "column forward after a late write on stream 0");
}

TEST_F(GpuTp, TensorsInTwoPlacesAreRefused) {
  Twin x(random_dense(T, H, 90)), w(random_dense(F / size_, H, 91)), y = output(T, F / size_);
  EXPECT_EQ(dt_tp_column_linear_forward(comm_, x.on(false), w.on(true), nullptr, y.on(false), 0),
            DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("weight is on CUDA device"), std::string::npos) << dt_error_last();
  EXPECT_NE(std::string(dt_error_last()).find("x is in host memory"), std::string::npos) << dt_error_last();
  EXPECT_EQ(y.gpu_values(), std::vector<double>(y.gpu_values().size(), 0.0));
}

}  // namespace

int main(int argc, char** argv) { return dtrain::testing::gpu_test_main(argc, argv); }
