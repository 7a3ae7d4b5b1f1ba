#include "line_tagger.hpp"

#include <unistd.h>

#include <cerrno>

namespace dtrun {

void LineTagger::feed(const char* data, std::size_t size) {
  pending_.append(data, size);
  std::size_t start = 0;
  for (std::size_t newline; (newline = pending_.find('\n', start)) != std::string::npos; start = newline + 1) {
    write_line(pending_.substr(start, newline + 1 - start));
  }
  pending_.erase(0, start);
}

void LineTagger::finish() {
  if (!pending_.empty()) write_line(pending_ + "\n");
  pending_.clear();
}

void LineTagger::write_line(const std::string& line) {
  // One write per line keeps lines whole when several ranks share a terminal.
  std::string tagged = prefix_ + line;
  const char* p = tagged.data();
  std::size_t left = tagged.size();
  while (left > 0) {
    ssize_t n = write(out_fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone (a closed pipe): drop the line
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace dtrun
