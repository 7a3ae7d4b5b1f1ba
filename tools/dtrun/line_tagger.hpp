// Copies a rank's output to dtrun's own, one whole line at a time, each
// prefixed with the rank ("[3] "), so lines of different ranks never mix.
// A carriage return ends a piece too: a progress bar that redraws its line
// with '\r' is passed on at once, each redraw tagged, instead of waiting for
// a newline that may never come. With a log file, each piece is also written
// there, untagged.
#pragma once

#include <string>

namespace dtrun {

class LineTagger {
 public:
  // out_fd or log_fd may be -1: not written.
  LineTagger(std::string prefix, int out_fd, int log_fd)
      : prefix_(std::move(prefix)), out_fd_(out_fd), log_fd_(log_fd) {}

  // Appends bytes read from the rank and writes every completed piece.
  void feed(const char* data, std::size_t size);
  // Writes a last, unterminated line (the rank's output ended).
  void finish();

 private:
  void write_piece(const std::string& piece);

  const std::string prefix_;
  const int out_fd_;
  const int log_fd_;
  std::string pending_;
};

}  // namespace dtrun
