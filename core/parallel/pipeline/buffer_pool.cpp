#include "parallel/pipeline/buffer_pool.hpp"

#include <utility>

namespace dtrain::parallel::pipeline {

Buffer BufferPool::acquire() {
  if (free_.empty()) return std::make_unique<std::byte[]>(bytes_);
  Buffer buffer = std::move(free_.back());
  free_.pop_back();
  return buffer;
}

void BufferPool::release(Buffer buffer) {
  if (buffer) free_.push_back(std::move(buffer));
}

}  // namespace dtrain::parallel::pipeline
