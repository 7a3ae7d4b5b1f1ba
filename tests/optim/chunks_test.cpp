// How the fused CUDA kernels' chunk table cuts tensors: host code, so it runs
// on every machine of a CUDA build (the pointers are never dereferenced).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "base/error.hpp"
#include "device/cuda/optim_kernels.hpp"

namespace dtrain::device::cuda::optim {
namespace {

char* at(std::uintptr_t address) { return reinterpret_cast<char*>(address); }

TEST(FusedChunks, CutEveryTensorInOrderAndSkipEmptyOnes) {
  constexpr std::int64_t kChunk = kChunkElements;
  std::vector<Tensor> tensors(3);
  tensors[0].dtype = DType::bf16;
  tensors[0].param = at(0x10000);
  tensors[0].grad = at(0x20000);
  tensors[0].master = reinterpret_cast<float*>(at(0x30000));
  tensors[0].state[0] = reinterpret_cast<float*>(at(0x40000));
  tensors[0].count = 2 * kChunk + 3;
  tensors[1].count = 0;  // no chunk
  tensors[2].dtype = DType::f32;
  tensors[2].param = at(0x50000);
  tensors[2].grad = at(0x60000);
  tensors[2].state[0] = reinterpret_cast<float*>(at(0x70000));
  tensors[2].state[1] = reinterpret_cast<float*>(at(0x80000));
  tensors[2].count = 5;

  const std::vector<Chunk> chunks = make_chunks(tensors);
  ASSERT_EQ(chunks.size(), 4u);
  for (int k = 0; k < 3; ++k) {
    const Chunk& c = chunks[static_cast<std::size_t>(k)];
    const std::uintptr_t first = static_cast<std::uintptr_t>(k * kChunk);
    EXPECT_EQ(c.dtype, static_cast<std::int32_t>(DType::bf16));
    EXPECT_EQ(c.count, k < 2 ? kChunk : 3);
    EXPECT_EQ(c.param, at(0x10000 + 2 * first));
    EXPECT_EQ(c.grad, at(0x20000 + 2 * first));
    EXPECT_EQ(c.master, reinterpret_cast<float*>(at(0x30000 + 4 * first)));
    EXPECT_EQ(c.state0, reinterpret_cast<float*>(at(0x40000 + 4 * first)));
    EXPECT_EQ(c.state1, nullptr);
  }
  const Chunk& last = chunks[3];
  EXPECT_EQ(last.dtype, static_cast<std::int32_t>(DType::f32));
  EXPECT_EQ(last.count, 5);
  EXPECT_EQ(last.param, at(0x50000));
  EXPECT_EQ(last.master, nullptr);
  EXPECT_EQ(last.state1, reinterpret_cast<float*>(at(0x80000)));
}

TEST(FusedChunks, OnlyFloatingParamDtypes) {
  std::vector<Tensor> tensors(1);
  tensors[0].dtype = DType::f64;
  tensors[0].count = 1;
  try {
    make_chunks(tensors);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
  }
}

}  // namespace
}  // namespace dtrain::device::cuda::optim
