// The executor's activation buffers: blocks of one size, handed out and
// taken back, so that a step allocates only when more micro-batches are in
// flight than in any step before.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace dtrain::parallel::pipeline {

using Buffer = std::unique_ptr<std::byte[]>;

class BufferPool {
 public:
  explicit BufferPool(std::size_t bytes) : bytes_(bytes) {}

  std::size_t bytes() const { return bytes_; }
  Buffer acquire();
  void release(Buffer buffer);

 private:
  std::size_t bytes_;
  std::vector<Buffer> free_;
};

}  // namespace dtrain::parallel::pipeline
