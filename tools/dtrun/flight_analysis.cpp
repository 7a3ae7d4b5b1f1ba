#include "flight_analysis.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

namespace dtrun {

namespace {

// One line of a record: a flat JSON object of strings and integers.
using Fields = nlohmann::json;

// Parses `line`; false for anything but an object (a line the writer did not
// finish).
bool parse_flat(const std::string& line, Fields* out) {
  *out = Fields::parse(line, nullptr, /*allow_exceptions=*/false);
  return out->is_object();
}

long long number(const Fields& f, const char* key) {
  auto it = f.find(key);
  return it != f.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

std::string text(const Fields& f, const char* key) {
  auto it = f.find(key);
  return it != f.end() && it->is_string() ? it->get<std::string>() : "";
}

// One rank's part of one communicator.
struct RankView {
  int world_rank = -1;
  std::string reason;   // why the process wrote its record
  std::string failure;  // why the communicator broke
  std::vector<Fields> ops;
  const Fields* last_collective() const {
    const Fields* last = nullptr;
    for (const Fields& op : ops) {
      if (number(op, "seq") > 0 && (last == nullptr || number(op, "seq") > number(*last, "seq"))) last = &op;
    }
    return last;
  }
};

struct CommView {
  int size = 0;
  std::map<int, RankView> ranks;  // by rank in the communicator
};

// "allreduce(2 float32, sum)": what a collective was, without its number.
std::string signature(const Fields& op) {
  const std::string what = text(op, "what");
  std::string out;
  for (std::size_t i = 0; i < what.size(); ++i) {
    // " #<digits>" is the number: skipped.
    if (what.compare(i, 2, " #") == 0 && i + 2 < what.size() && std::isdigit(static_cast<unsigned char>(what[i + 2]))) {
      i += 2;
      while (i + 1 < what.size() && std::isdigit(static_cast<unsigned char>(what[i + 1]))) ++i;
      continue;
    }
    out += what[i];
  }
  return out;
}

std::string join(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

// The first collective number at which the ranks that recorded it called
// different things, with what each called; "" when none.
std::string first_disagreement(const CommView& comm) {
  std::map<long long, std::map<int, std::string>> by_seq;
  for (const auto& [rank, view] : comm.ranks) {
    for (const Fields& op : view.ops) {
      if (number(op, "seq") > 0) by_seq[number(op, "seq")][rank] = signature(op);
    }
  }
  for (const auto& [seq, calls] : by_seq) {
    std::set<std::string> distinct;
    for (const auto& [rank, call] : calls) distinct.insert(call);
    if (distinct.size() < 2) continue;
    std::string out = "collective #" + std::to_string(seq) + ":";
    for (const std::string& call : distinct) {
      std::vector<int> who;
      for (const auto& [rank, c] : calls) {
        if (c == call) who.push_back(rank);
      }
      out += " " + join(who) + " called " + call + ";";
    }
    out.pop_back();
    return out;
  }
  return "";
}

void analyze_comm(const std::string& label, const CommView& comm, std::ostringstream& out) {
  out << "communicator " << label << " (" << comm.size << " ranks):\n";
  long long furthest = 0;
  for (const auto& [rank, view] : comm.ranks) {
    const Fields* last = view.last_collective();
    if (last != nullptr) furthest = std::max(furthest, number(*last, "seq"));
  }
  std::vector<int> missing, behind, waiting;
  for (int rank = 0; rank < comm.size; ++rank) {
    auto it = comm.ranks.find(rank);
    out << "  rank " << rank;
    if (it == comm.ranks.end()) {
      out << ": no record (the process wrote none: stopped, killed, hung, or without DTRAIN_FLIGHT_RECORDER_DIR)\n";
      missing.push_back(rank);
      continue;
    }
    const RankView& view = it->second;
    if (view.world_rank != rank) out << " (world rank " << view.world_rank << ")";
    const Fields* last = view.last_collective();
    if (last == nullptr) {
      out << ": no collective recorded";
    } else {
      out << ": last collective " << text(*last, "what") << ", " << text(*last, "state");
      if (text(*last, "state") != "completed") waiting.push_back(rank);
      if (number(*last, "seq") < furthest) behind.push_back(rank);
    }
    out << "\n";
    if (!view.failure.empty()) out << "    broke: " << view.failure << "\n";
    if (!view.reason.empty() && view.reason.find(view.failure) == std::string::npos) {
      out << "    record written: " << view.reason << "\n";
    }
  }
  const std::string disagreement = first_disagreement(comm);
  if (!disagreement.empty()) {
    out << "  verdict: the ranks diverge at " << disagreement << "\n";
    return;
  }
  std::vector<std::string> verdict;
  if (!behind.empty()) verdict.push_back(join(behind) + " behind, short of collective #" + std::to_string(furthest));
  if (!missing.empty()) verdict.push_back(join(missing) + " wrote no record (likely behind: stopped or dead)");
  if (!waiting.empty() && (!behind.empty() || !missing.empty())) {
    verdict.push_back(join(waiting) + " stuck in collective #" + std::to_string(furthest));
  }
  if (verdict.empty()) {
    verdict.push_back(waiting.empty() ? "no rank is behind" : "every rank is in collective #" + std::to_string(furthest) +
                                                                  "; none is behind (see why each broke)");
  }
  out << "  verdict:";
  for (std::size_t i = 0; i < verdict.size(); ++i) out << (i == 0 ? " " : "; ") << verdict[i];
  out << "\n";
}

}  // namespace

std::string analyze_flight_records(const std::string& dir, bool* found) {
  namespace fs = std::filesystem;
  std::map<std::string, CommView> comms;
  int files = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("flight.rank", 0) != 0 || entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    Fields process;
    RankView* current = nullptr;  // the communicator of the ops that follow
    bool counted = false;
    for (std::string line; std::getline(in, line);) {
      Fields f;
      if (!parse_flat(line, &f)) continue;
      const std::string record = text(f, "record");
      if (record == "process") {
        process = f;
      } else if (record == "comm") {
        CommView& comm = comms[text(f, "comm")];
        comm.size = std::max(comm.size, static_cast<int>(number(f, "comm_size")));
        current = &comm.ranks[static_cast<int>(number(f, "comm_rank"))];
        current->world_rank = static_cast<int>(number(process, "world_rank"));
        current->reason = text(process, "reason");
        current->failure = text(f, "failure");
        if (!counted) ++files;
        counted = true;
      } else if (record == "op" && current != nullptr) {
        current->ops.push_back(f);
      }
    }
  }
  *found = files > 0;
  std::ostringstream out;
  out << "flight records in " << dir << ": " << files << (files == 1 ? " process\n" : " processes\n");
  for (const auto& [label, comm] : comms) analyze_comm(label, comm, out);
  return out.str();
}

}  // namespace dtrun
