#include "comm/backends/ucx/process_memory.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/cpu/stream_copy.hpp"

namespace dtrain::comm::ucx {

namespace {

// The kernel takes at most this many pieces a side per call (IOV_MAX).
constexpr std::size_t kPiecesPerCall = 1024;

// A position in a list of pieces: the next byte to copy.
class Cursor {
 public:
  explicit Cursor(std::span<const iovec> pieces) : pieces_(pieces) { skip_empty(); }

  bool done() const { return index_ == pieces_.size(); }

  // The pieces from here on, at most kPiecesPerCall of them and `limit`
  // bytes in all, into `batch`; returns their bytes.
  std::size_t peek(std::size_t limit, std::vector<iovec>& batch) const {
    batch.clear();
    std::size_t bytes = 0;
    std::size_t offset = offset_;
    for (std::size_t i = index_; i < pieces_.size() && batch.size() < kPiecesPerCall && bytes < limit; ++i) {
      const std::size_t take = std::min(pieces_[i].iov_len - offset, limit - bytes);
      if (take > 0) batch.push_back({static_cast<std::byte*>(pieces_[i].iov_base) + offset, take});
      bytes += take;
      offset = 0;
    }
    return bytes;
  }

  void advance(std::size_t bytes) {
    while (bytes > 0) {
      const std::size_t take = std::min(pieces_[index_].iov_len - offset_, bytes);
      offset_ += take;
      bytes -= take;
      skip_empty();
    }
  }

 private:
  void skip_empty() {
    while (index_ < pieces_.size() && offset_ == pieces_[index_].iov_len) {
      ++index_;
      offset_ = 0;
    }
  }

  std::span<const iovec> pieces_;
  std::size_t index_ = 0;
  std::size_t offset_ = 0;
};

// Copies the pieces `from` to the pieces `to`, all in this process, by
// `copy`.
void copy_here(std::span<const iovec> from, std::span<const iovec> to, void (*copy)(void*, const void*, std::size_t)) {
  Cursor source(from);
  std::vector<iovec> batch;
  for (const iovec& piece : to) {
    auto* into = static_cast<std::byte*>(piece.iov_base);
    std::size_t filled = 0;
    while (filled < piece.iov_len && !source.done()) {
      const std::size_t bytes = source.peek(piece.iov_len - filled, batch);
      for (const iovec& part : batch) {
        copy(into + filled, part.iov_base, part.iov_len);
        filled += part.iov_len;
      }
      source.advance(bytes);
    }
  }
}

}  // namespace

void ProcessMemory::write(int peer, std::span<const iovec> from, std::span<const iovec> to) const {
  copy(peer, Direction::to_peer, from, to);
}

void ProcessMemory::read(int peer, std::span<const iovec> from, std::span<const iovec> to) const {
  copy(peer, Direction::from_peer, to, from);
}

void ProcessMemory::copy(int peer, Direction direction, std::span<const iovec> local,
                         std::span<const iovec> remote) const {
  auto bytes_of = [](std::span<const iovec> pieces) {
    std::size_t bytes = 0;
    for (const iovec& piece : pieces) bytes += piece.iov_len;
    return bytes;
  };
  const std::size_t here_bytes = bytes_of(local);
  const std::size_t there_bytes = bytes_of(remote);
  if (here_bytes != there_bytes) {
    raise(DT_ERR_INVALID_ARGUMENT, "a copy with " + describe_rank(group_, peer) + ": the pieces hold " +
                                       std::to_string(here_bytes) + " bytes here and " + std::to_string(there_bytes) +
                                       " bytes there");
  }
  if (peer == group_.rank) {
    // Written rows are for a later reader, as a peer's would be: streamed
    // around this core's caches; read rows are for this rank's next pass.
    if (direction == Direction::to_peer) {
      copy_here(local, remote, device::cpu::stream_copy);
    } else {
      copy_here(remote, local, [](void* to, const void* from, std::size_t bytes) { std::memcpy(to, from, bytes); });
    }
    return;
  }
  const auto pid = static_cast<pid_t>(group_.mailboxes->pid(peer));
  Cursor here(local);
  Cursor there(remote);
  std::vector<iovec> here_batch;
  std::vector<iovec> there_batch;
  while (!here.done() && !there.done()) {
    // As many bytes as both sides' next batches hold.
    const std::size_t bytes = there.peek(here.peek(SIZE_MAX, here_batch), there_batch);
    here.peek(bytes, here_batch);
    ssize_t moved = 0;
    if (direction == Direction::to_peer) {
      moved = ::process_vm_writev(pid, here_batch.data(), here_batch.size(), there_batch.data(), there_batch.size(), 0);
    } else {
      moved = ::process_vm_readv(pid, here_batch.data(), here_batch.size(), there_batch.data(), there_batch.size(), 0);
    }
    if (moved <= 0) {
      const int error = moved == 0 ? EFAULT : errno;
      raise(error == ESRCH ? DT_ERR_REMOTE : DT_ERR_TRANSPORT,
            std::string(direction == Direction::to_peer ? "writing to " : "reading from ") +
                describe_rank(group_, peer) + "'s memory: " + std::strerror(error));
    }
    here.advance(static_cast<std::size_t>(moved));
    there.advance(static_cast<std::size_t>(moved));
  }
}

}  // namespace dtrain::comm::ucx
