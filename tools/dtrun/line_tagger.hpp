// Copies a rank's output to dtrun's own, one whole line at a time, each
// prefixed with the rank ("[3] "), so lines of different ranks never mix.
#pragma once

#include <string>

namespace dtrun {

class LineTagger {
 public:
  LineTagger(int rank, int out_fd) : prefix_("[" + std::to_string(rank) + "] "), out_fd_(out_fd) {}

  // Appends bytes read from the rank and writes every completed line.
  void feed(const char* data, std::size_t size);
  // Writes a last, unterminated line (the rank's output ended).
  void finish();

 private:
  void write_line(const std::string& line);

  const std::string prefix_;
  const int out_fd_;
  std::string pending_;
};

}  // namespace dtrun
