#include "compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "command_line.hpp"
#include "timing.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

struct Row {
  std::string op;
  int64_t bytes = 0;
  int64_t count = 0;
  int iters = 0;
  double time_us = NAN;
  double algbw = NAN;
  double busbw = NAN;
};

struct Run {
  std::string implementation;
  std::string library;
  std::string dtype;
  int world = 0;
  double memcpy_gbps = NAN;
  std::vector<Row> rows;
};

// `key` of `object`, which must be there and have the type `is` checks.
const Json& member(const Json& object, const char* key, bool (Json::*is)() const noexcept) {
  const auto it = object.find(key);
  if (it == object.end() || !((*it).*is)()) {
    throw std::runtime_error(std::string("missing or mistyped \"") + key + "\"");
  }
  return *it;
}

// Bandwidths are null where they are undefined (a world of one has no bus).
double number_or_nan(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : NAN;
}

Run load(const std::string& path) {
  try {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read it");
    const Json doc = Json::parse(in);
    if (!doc.is_object()) throw std::runtime_error("not a JSON object");
    if (member(doc, "benchmark", &Json::is_string) != "collectives") {
      throw std::runtime_error("not a collectives benchmark");
    }
    Run run;
    run.implementation = member(doc, "implementation", &Json::is_string).get<std::string>();
    run.library = member(doc, "library", &Json::is_string).get<std::string>();
    run.dtype = member(doc, "dtype", &Json::is_string).get<std::string>();
    run.world = member(doc, "world_size", &Json::is_number_integer).get<int>();
    run.memcpy_gbps = number_or_nan(doc, "memcpy_GBps");
    for (const Json& r : member(doc, "results", &Json::is_array)) {
      if (!r.is_object()) throw std::runtime_error("a result that is not an object");
      Row row;
      row.op = member(r, "op", &Json::is_string).get<std::string>();
      row.bytes = member(r, "bytes", &Json::is_number_integer).get<int64_t>();
      row.count = member(r, "count", &Json::is_number_integer).get<int64_t>();
      row.iters = member(r, "iters", &Json::is_number_integer).get<int>();
      row.time_us = number_or_nan(r, "time_us");
      row.algbw = number_or_nan(r, "algbw_GBps");
      row.busbw = number_or_nan(r, "busbw_GBps");
      run.rows.push_back(row);
    }
    return run;
  } catch (const std::exception& e) {
    // nlohmann's parse errors name the line and column.
    throw std::runtime_error(path + ": " + e.what());
  }
}

// Every round of one side's sweep, the first as read and the later ones
// checked to be rounds of the same sweep.
std::vector<Run> load_rounds(const std::vector<std::string>& paths) {
  std::vector<Run> rounds;
  for (const std::string& path : paths) {
    rounds.push_back(load(path));
    const Run& first = rounds.front();
    const Run& run = rounds.back();
    if (run.world != first.world || run.dtype != first.dtype || run.implementation != first.implementation) {
      throw std::runtime_error(path + ": not another round of " + paths[0]);
    }
  }
  return rounds;
}

using Key = std::pair<std::string, int64_t>;  // operation and size

// Several rounds of one side's sweep as one run: for each operation and size,
// the round with the lowest time (the one the machine disturbed least), taken
// from the rounds that have that row. memcpy is the best of the rounds too.
Run best_of(const std::vector<Run>& rounds) {
  Run best = rounds.at(0);
  std::map<Key, size_t> index;
  for (size_t i = 0; i < best.rows.size(); ++i) index[{best.rows[i].op, best.rows[i].bytes}] = i;
  for (size_t k = 1; k < rounds.size(); ++k) {
    const Run& run = rounds[k];
    if (run.memcpy_gbps > best.memcpy_gbps || std::isnan(best.memcpy_gbps)) best.memcpy_gbps = run.memcpy_gbps;
    for (const Row& r : run.rows) {
      auto [it, added] = index.try_emplace({r.op, r.bytes}, best.rows.size());
      if (added) {
        best.rows.push_back(r);
      } else if (r.time_us < best.rows[it->second].time_us || std::isnan(best.rows[it->second].time_us)) {
        best.rows[it->second] = r;
      }
    }
  }
  // A row only later rounds have goes back among its operation's sizes.
  std::map<std::string, size_t> op_order;
  for (const Row& r : best.rows) op_order.try_emplace(r.op, op_order.size());
  std::stable_sort(best.rows.begin(), best.rows.end(), [&](const Row& x, const Row& y) {
    return std::pair(op_order.at(x.op), x.bytes) < std::pair(op_order.at(y.op), y.bytes);
  });
  return best;
}

double ratio(double a, double b) { return b > 0 && std::isfinite(a) ? a / b : NAN; }

// The spread of one row's per-round ratios; NAN where no round has the row
// on both sides.
struct Spread {
  double median = NAN;
  double min = NAN;
  double max = NAN;
};

// For each operation and size, the second side's time over the first's in
// each round alone (round k of one side against round k of the other, which
// ran right after it, in the same phase of a shared machine), and the spread
// of those ratios over the rounds. Best-of-rounds can set one side's luckiest
// round against the other's; a ratio within a round cannot.
std::map<Key, Spread> round_ratios(const std::vector<Run>& first, const std::vector<Run>& second) {
  std::map<Key, std::vector<double>> ratios;
  for (size_t k = 0; k < std::min(first.size(), second.size()); ++k) {
    std::map<Key, double> second_times;
    for (const Row& r : second[k].rows) second_times[{r.op, r.bytes}] = r.time_us;
    for (const Row& r : first[k].rows) {
      const auto it = second_times.find({r.op, r.bytes});
      const double x = it == second_times.end() ? NAN : ratio(it->second, r.time_us);
      if (std::isfinite(x)) ratios[{r.op, r.bytes}].push_back(x);
    }
  }
  std::map<Key, Spread> spreads;
  for (const auto& [key, values] : ratios) {
    const auto [min, max] = std::minmax_element(values.begin(), values.end());
    spreads[key] = {median(values), *min, *max};
  }
  return spreads;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// A table cell: the value, or "-" where there is none.
std::string cell(double v, int width, int decimals) {
  char buf[64];
  if (std::isfinite(v)) {
    std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, v);
  } else {
    std::snprintf(buf, sizeof buf, "%*s", width, "-");
  }
  return buf;
}

struct Pair {
  const Row* a;
  const Row* b;  // nullptr when the second run has no such row
  Spread rounds;  // b's time / a's time per round, with more than one round
};

void print_table(const Run& a, const Run& b, const std::vector<Pair>& pairs, size_t rounds) {
  std::printf("#\n# %s vs %s: %d rank%s, %s; x = %s / %s (time x below 1, busbw x above 1: %s is faster)\n",
              a.implementation.c_str(), b.implementation.c_str(), a.world, a.world == 1 ? "" : "s",
              a.dtype.c_str(), a.implementation.c_str(), b.implementation.c_str(), a.implementation.c_str());
  std::printf("# %s: %s\n", a.implementation.c_str(), first_line(a.library).c_str());
  std::printf("# %s: %s\n", b.implementation.c_str(), first_line(b.library).c_str());
  if (rounds > 1) {
    std::printf("# best of %zu alternating rounds: for each size and each side, the round with the lowest time\n",
                rounds);
    std::printf("# r = %s(us) / %s(us) within one round (above 1: %s is faster): its median, min and max over "
                "the rounds\n",
                b.implementation.c_str(), a.implementation.c_str(), a.implementation.c_str());
  }
  std::printf("# memcpy %.2f GB/s (one thread, %s's run%s): the ceiling of busbw\n", a.memcpy_gbps,
              a.implementation.c_str(), rounds > 1 ? ", best round" : "");
  std::string op;
  for (const Pair& p : pairs) {
    if (p.a->op != op) {
      op = p.a->op;
      std::printf("#\n# %s\n# %12s %12s %12s %8s %12s %12s %8s %13s", op.c_str(), "size(B)",
                  (a.implementation + "(us)").c_str(), (b.implementation + "(us)").c_str(), "time x",
                  (a.implementation + " busbw").c_str(), (b.implementation + " busbw").c_str(), "busbw x",
                  "busbw/memcpy");
      if (rounds > 1) std::printf(" %8s %8s %8s", "r median", "r min", "r max");
      std::printf("\n");
    }
    const double b_time = p.b ? p.b->time_us : NAN;
    const double b_busbw = p.b ? p.b->busbw : NAN;
    std::printf("  %12lld %s %s %s %s %s %s %s", static_cast<long long>(p.a->bytes),
                cell(p.a->time_us, 12, 2).c_str(), cell(b_time, 12, 2).c_str(),
                cell(ratio(p.a->time_us, b_time), 8, 2).c_str(), cell(p.a->busbw, 12, 3).c_str(),
                cell(b_busbw, 12, 3).c_str(), cell(ratio(p.a->busbw, b_busbw), 8, 2).c_str(),
                cell(ratio(p.a->busbw, a.memcpy_gbps), 13, 3).c_str());
    if (rounds > 1) {
      std::printf(" %s %s %s", cell(p.rounds.median, 8, 2).c_str(), cell(p.rounds.min, 8, 2).c_str(),
                  cell(p.rounds.max, 8, 2).c_str());
    }
    std::printf("\n");
  }
}

Json side(const Row* r) {
  if (r == nullptr) return nullptr;
  return {{"iters", r->iters}, {"time_us", r->time_us}, {"algbw_GBps", r->algbw}, {"busbw_GBps", r->busbw}};
}

bool write_merged(const std::string& path, const Run& a, const Run& b, const std::vector<Pair>& pairs, size_t rounds) {
  // Each side is keyed by its implementation's name; the same name twice
  // (two runs of one implementation) gets a suffix on the second.
  const std::string key_a = a.implementation;
  const std::string key_b = b.implementation == a.implementation ? b.implementation + "_2" : b.implementation;
  Json runs = Json::array();
  for (const auto& [key, run] : {std::pair(&key_a, &a), std::pair(&key_b, &b)}) {
    runs.push_back({{"key", *key},
                    {"implementation", run->implementation},
                    {"library", run->library},
                    {"memcpy_GBps", run->memcpy_gbps}});
  }
  Json results = Json::array();
  for (const Pair& p : pairs) {
    Json row = {{"op", p.a->op},
                {"bytes", p.a->bytes},
                {"count", p.a->count},
                {key_a, side(p.a)},
                {key_b, side(p.b)},
                {"time_ratio", p.b ? ratio(p.a->time_us, p.b->time_us) : NAN},
                {"busbw_ratio", p.b ? ratio(p.a->busbw, p.b->busbw) : NAN},
                {"busbw_vs_memcpy", ratio(p.a->busbw, a.memcpy_gbps)}};
    if (rounds > 1) {
      row["round_ratio_median"] = p.rounds.median;
      row["round_ratio_min"] = p.rounds.min;
      row["round_ratio_max"] = p.rounds.max;
    }
    results.push_back(row);
  }
  Json doc = {{"benchmark", "collectives"},
              {"world_size", a.world},
              {"dtype", a.dtype},
              {"memcpy_GBps", a.memcpy_gbps},
              {"rounds", rounds},
              {"ratio", key_a + " / " + key_b}};
  if (rounds > 1) doc["round_ratio"] = key_b + " / " + key_a + " time, within one round";
  doc["runs"] = runs;
  doc["results"] = results;
  return write_results("compare", path, doc);
}

}  // namespace

int compare_files(const std::vector<std::string>& first, const std::vector<std::string>& second,
                  const char* merged_json) {
  std::vector<Run> a_rounds, b_rounds;
  try {
    a_rounds = load_rounds(first);
    b_rounds = load_rounds(second);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "dtbench compare: %s\n", e.what());
    return 1;
  }
  const Run a = best_of(a_rounds);
  const Run b = best_of(b_rounds);
  if (a.world != b.world || a.dtype != b.dtype) {
    std::fprintf(stderr, "dtbench compare: %s has world size %d and %s, %s has world size %d and %s\n",
                 first[0].c_str(), a.world, a.dtype.c_str(), second[0].c_str(), b.world, b.dtype.c_str());
    return 1;
  }
  std::map<Key, const Row*> second_rows;
  for (const Row& r : b.rows) second_rows[{r.op, r.bytes}] = &r;
  const std::map<Key, Spread> spreads = round_ratios(a_rounds, b_rounds);
  std::vector<Pair> pairs;
  for (const Row& r : a.rows) {
    auto it = second_rows.find({r.op, r.bytes});
    auto spread = spreads.find({r.op, r.bytes});
    pairs.push_back({&r, it == second_rows.end() ? nullptr : it->second,
                     spread == spreads.end() ? Spread{} : spread->second});
  }
  const size_t rounds = std::max(first.size(), second.size());
  print_table(a, b, pairs, rounds);
  if (merged_json != nullptr && !write_merged(merged_json, a, b, pairs, rounds)) return 1;
  return 0;
}

int run_compare(int argc, char** argv) {
  const Usage cli{"compare", "usage: dtbench compare A.json B.json [--json MERGED.json]",
                  "Prints the rows of two results files (dtbench collectives, the MPI peer) side\n"
                  "by side with the ratios A / B of time and busbw, and optionally writes them\n"
                  "as one JSON file."};
  auto app = cli.app();
  std::string first, second, merged;
  app->add_option("A", first, "the first results file")->required()->type_name("A.json");
  app->add_option("B", second, "the second results file")->required()->type_name("B.json");
  app->add_option("--json", merged, "also write the rows of both as one JSON file")->type_name("MERGED.json");
  dtrain::command_line::parse(*app, argc, argv);
  return compare_files({first}, {second}, merged.empty() ? nullptr : merged.c_str());
}

}  // namespace dtbench
