#include "parallel/cp/agreement.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "parallel/common/agreement.hpp"

namespace dtrain::parallel::cp {

namespace {

// The scale compared bit for bit: ranks must scale identically.
std::int64_t bits_of(double value) {
  std::int64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace

void agree_on_attention(comm::Communicator& comm, const std::string& context, SequenceLayout layout,
                        const AttentionShape& shape, bool on_device, const std::exception_ptr& local_failure) {
  const std::vector<common::Setting> settings = {
      {"layout", static_cast<std::int64_t>(layout)},
      {"causal", shape.causal ? 1 : 0},
      {"the bits of scale", bits_of(shape.scale)},
      {"the local sequence length of q", shape.q_rows},
      {"the number of query heads", shape.q_heads},
      {"the local sequence length of k and v", shape.kv_rows},
      {"the number of key/value heads", shape.kv_heads},
      {"the head dimension", shape.head_dim},
      {"CUDA memory (1) or host memory (0)", on_device ? 1 : 0},
  };
  common::agree_on_layout(comm, {context, "tensor"}, {}, settings, local_failure);
}

}  // namespace dtrain::parallel::cp
