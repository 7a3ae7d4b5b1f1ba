#include "trace_merge.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace dtrun {

namespace {

// Whether `line` is one whole JSON object (a rank killed mid-write leaves a
// partial last line).
bool whole_object(const std::string& line) {
  return !line.empty() && line.front() == '{' && nlohmann::json::accept(line);
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
