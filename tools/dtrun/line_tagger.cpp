#include "line_tagger.hpp"

#include <unistd.h>

#include <cerrno>

namespace dtrun {

namespace {

// Writes all of `text` to fd; a closed or failing output drops the rest.
void write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (fd >= 0 && left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

void LineTagger::feed(const char* data, std::size_t size) {
  pending_.append(data, size);
  std::size_t start = 0;
  for (std::size_t end; (end = pending_.find_first_of("\n\r", start)) != std::string::npos; start = end + 1) {
    if (pending_[end] == '\r' && end + 1 < pending_.size() && pending_[end + 1] == '\n') ++end;  // one line end
    write_piece(pending_.substr(start, end + 1 - start));
  }
  pending_.erase(0, start);
}

void LineTagger::finish() {
  if (!pending_.empty()) write_piece(pending_ + "\n");
  pending_.clear();
}

void LineTagger::write_piece(const std::string& piece) {
  // One write per piece keeps lines whole when several ranks share a terminal.
  write_all(out_fd_, prefix_ + piece);
  write_all(log_fd_, piece);
}

}  // namespace dtrun
