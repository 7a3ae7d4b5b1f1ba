#include "trace_merge.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dtrun {

namespace {

// Whether `line` is one whole JSON object: its braces balance outside strings.
bool whole_object(const std::string& line) {
  if (line.size() < 2 || line.front() != '{' || line.back() != '}') return false;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (in_string) {
      if (ch == '\\') ++i;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{') {
      ++depth;
    } else if (ch == '}' && --depth == 0 && i + 1 != line.size()) {
      return false;
    }
  }
  return depth == 0 && !in_string;
}

}  // namespace

int merge_traces(const std::string& path, int world_size) {
  std::ostringstream merged;
  merged << "{\"traceEvents\":[";
  bool first = true;
  int files = 0;
  for (int rank = 0; rank < world_size; ++rank) {
    std::ifstream in(path + ".rank" + std::to_string(rank));
    if (!in) continue;
    ++files;
    // One event per line: lines of a complete object, without the array's
    // brackets and the commas between them.
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == ',') line.pop_back();
      if (!whole_object(line)) continue;
      merged << (first ? "\n" : ",\n") << line;
      first = false;
    }
  }
  merged << "\n],\"displayTimeUnit\":\"ms\"}\n";
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << merged.str();
    if (!out.flush()) throw std::runtime_error("cannot write the merged trace " + partial);
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write the merged trace " + path);
  return files;
}

}  // namespace dtrun
