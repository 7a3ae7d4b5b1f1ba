#include "compare.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bench.h"
#include "json.hpp"

namespace dtbench {

namespace {

using json::Value;

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

const Value& member(const Value& object, const char* key, Value::Kind kind) {
  const Value* v = object.find(key);
  if (v == nullptr || v->kind != kind) throw std::runtime_error(std::string("missing or mistyped \"") + key + "\"");
  return *v;
}

// Bandwidths are null where they are undefined (a world of one has no bus).
double number_or_nan(const Value& object, const char* key) {
  const Value* v = object.find(key);
  return v != nullptr && v->kind == Value::Kind::Number ? v->number : NAN;
}

Run load(const std::string& path) {
  const Value doc = json::parse_file(path);
  try {
    if (member(doc, "benchmark", Value::Kind::String).string != "collectives") {
      throw std::runtime_error("not a collectives benchmark");
    }
    Run run;
    run.implementation = member(doc, "implementation", Value::Kind::String).string;
    run.library = member(doc, "library", Value::Kind::String).string;
    run.dtype = member(doc, "dtype", Value::Kind::String).string;
    run.world = static_cast<int>(member(doc, "world_size", Value::Kind::Number).number);
    run.memcpy_gbps = number_or_nan(doc, "memcpy_GBps");
    for (const Value& r : member(doc, "results", Value::Kind::Array).array) {
      Row row;
      row.op = member(r, "op", Value::Kind::String).string;
      row.bytes = static_cast<int64_t>(member(r, "bytes", Value::Kind::Number).number);
      row.count = static_cast<int64_t>(member(r, "count", Value::Kind::Number).number);
      row.iters = static_cast<int>(member(r, "iters", Value::Kind::Number).number);
      row.time_us = number_or_nan(r, "time_us");
      row.algbw = number_or_nan(r, "algbw_GBps");
      row.busbw = number_or_nan(r, "busbw_GBps");
      run.rows.push_back(row);
    }
    return run;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

// Several rounds of one side's sweep as one run: for each operation and size,
// the round with the lowest time (the one the machine disturbed least), taken
// from the rounds that have that row. memcpy is the best of the rounds too.
Run best_of(const std::vector<std::string>& paths) {
  Run best = load(paths.at(0));
  std::map<std::pair<std::string, int64_t>, size_t> index;
  for (size_t i = 0; i < best.rows.size(); ++i) index[{best.rows[i].op, best.rows[i].bytes}] = i;
  for (size_t k = 1; k < paths.size(); ++k) {
    const Run run = load(paths[k]);
    if (run.world != best.world || run.dtype != best.dtype || run.implementation != best.implementation) {
      throw std::runtime_error(paths[k] + ": not another round of " + paths[0]);
    }
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

void number(FILE* f, double v) {
  if (std::isfinite(v)) {
    std::fprintf(f, "%.6g", v);
  } else {
    std::fputs("null", f);
  }
}

struct Pair {
  const Row* a;
  const Row* b;  // nullptr when the second run has no such row
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
  }
  std::printf("# memcpy %.2f GB/s (one thread, %s's run%s): the ceiling of busbw\n", a.memcpy_gbps,
              a.implementation.c_str(), rounds > 1 ? ", best round" : "");
  std::string op;
  for (const Pair& p : pairs) {
    if (p.a->op != op) {
      op = p.a->op;
      std::printf("#\n# %s\n# %12s %12s %12s %8s %12s %12s %8s %13s\n", op.c_str(), "size(B)",
                  (a.implementation + "(us)").c_str(), (b.implementation + "(us)").c_str(), "time x",
                  (a.implementation + " busbw").c_str(), (b.implementation + " busbw").c_str(), "busbw x",
                  "busbw/memcpy");
    }
    const double b_time = p.b ? p.b->time_us : NAN;
    const double b_busbw = p.b ? p.b->busbw : NAN;
    std::printf("  %12lld %s %s %s %s %s %s %s\n", static_cast<long long>(p.a->bytes),
                cell(p.a->time_us, 12, 2).c_str(), cell(b_time, 12, 2).c_str(),
                cell(ratio(p.a->time_us, b_time), 8, 2).c_str(), cell(p.a->busbw, 12, 3).c_str(),
                cell(b_busbw, 12, 3).c_str(), cell(ratio(p.a->busbw, b_busbw), 8, 2).c_str(),
                cell(ratio(p.a->busbw, a.memcpy_gbps), 13, 3).c_str());
  }
}

void write_side(FILE* f, const char* key, const Row* r) {
  std::fprintf(f, ", ");
  dtb_json_string(f, key);
  if (r == nullptr) {
    std::fputs(": null", f);
    return;
  }
  std::fprintf(f, ": {\"iters\": %d, \"time_us\": ", r->iters);
  number(f, r->time_us);
  std::fputs(", \"algbw_GBps\": ", f);
  number(f, r->algbw);
  std::fputs(", \"busbw_GBps\": ", f);
  number(f, r->busbw);
  std::fputs("}", f);
}

int write_merged(const char* path, const Run& a, const Run& b, const std::vector<Pair>& pairs, size_t rounds) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return -1;
  // Each side is keyed by its implementation's name; the same name twice
  // (two runs of one implementation) gets a suffix on the second.
  const std::string key_a = a.implementation;
  const std::string key_b = b.implementation == a.implementation ? b.implementation + "_2" : b.implementation;
  std::fprintf(f, "{\n  \"benchmark\": \"collectives\",\n  \"world_size\": %d,\n  \"dtype\": ", a.world);
  dtb_json_string(f, a.dtype.c_str());
  std::fputs(",\n  \"memcpy_GBps\": ", f);
  number(f, a.memcpy_gbps);
  std::fprintf(f, ",\n  \"rounds\": %zu", rounds);
  std::fputs(",\n  \"ratio\": ", f);
  dtb_json_string(f, (key_a + " / " + key_b).c_str());
  std::fputs(",\n  \"runs\": [", f);
  const std::pair<const std::string*, const Run*> runs[] = {{&key_a, &a}, {&key_b, &b}};
  for (size_t i = 0; i < 2; ++i) {
    std::fprintf(f, "%s\n    {\"key\": ", i ? "," : "");
    dtb_json_string(f, runs[i].first->c_str());
    std::fputs(", \"implementation\": ", f);
    dtb_json_string(f, runs[i].second->implementation.c_str());
    std::fputs(", \"library\": ", f);
    dtb_json_string(f, runs[i].second->library.c_str());
    std::fputs(", \"memcpy_GBps\": ", f);
    number(f, runs[i].second->memcpy_gbps);
    std::fputs("}", f);
  }
  std::fputs("\n  ],\n  \"results\": [", f);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Pair& p = pairs[i];
    std::fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
    dtb_json_string(f, p.a->op.c_str());
    std::fprintf(f, ", \"bytes\": %lld, \"count\": %lld", static_cast<long long>(p.a->bytes),
                 static_cast<long long>(p.a->count));
    write_side(f, key_a.c_str(), p.a);
    write_side(f, key_b.c_str(), p.b);
    std::fputs(", \"time_ratio\": ", f);
    number(f, p.b ? ratio(p.a->time_us, p.b->time_us) : NAN);
    std::fputs(", \"busbw_ratio\": ", f);
    number(f, p.b ? ratio(p.a->busbw, p.b->busbw) : NAN);
    std::fputs(", \"busbw_vs_memcpy\": ", f);
    number(f, ratio(p.a->busbw, a.memcpy_gbps));
    std::fputs("}", f);
  }
  std::fputs("\n  ]\n}\n", f);
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed) return -1;
  return 0;
}

}  // namespace

int compare_files(const std::vector<std::string>& first, const std::vector<std::string>& second,
                  const char* merged_json) {
  Run a, b;
  try {
    a = best_of(first);
    b = best_of(second);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "dtbench compare: %s\n", e.what());
    return 1;
  }
  if (a.world != b.world || a.dtype != b.dtype) {
    std::fprintf(stderr, "dtbench compare: %s has world size %d and %s, %s has world size %d and %s\n",
                 first[0].c_str(), a.world, a.dtype.c_str(), second[0].c_str(), b.world, b.dtype.c_str());
    return 1;
  }
  std::map<std::pair<std::string, int64_t>, const Row*> second_rows;
  for (const Row& r : b.rows) second_rows[{r.op, r.bytes}] = &r;
  std::vector<Pair> pairs;
  for (const Row& r : a.rows) {
    auto it = second_rows.find({r.op, r.bytes});
    pairs.push_back({&r, it == second_rows.end() ? nullptr : it->second});
  }
  const size_t rounds = std::max(first.size(), second.size());
  print_table(a, b, pairs, rounds);
  if (merged_json != nullptr) {
    if (write_merged(merged_json, a, b, pairs, rounds) != 0) {
      std::fprintf(stderr, "dtbench compare: cannot write %s: %s\n", merged_json, std::strerror(errno));
      return 1;
    }
    std::printf("# merged results written to %s\n", merged_json);
  }
  return 0;
}

int run_compare(int argc, char** argv) {
  static const char usage[] =
      "usage: dtbench compare A.json B.json [--json MERGED.json]\n\n"
      "Prints the rows of two results files (dtbench collectives, the MPI peer) side\n"
      "by side with the ratios A / B of time and busbw, and optionally writes them\n"
      "as one JSON file.\n";
  std::vector<std::string> files;
  const char* merged = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (arg == "--json" && i + 1 < argc) {
      merged = argv[++i];
    } else if (arg.rfind('-', 0) == 0) {
      std::fprintf(stderr, "dtbench compare: unknown option '%s'\n\n%s", arg.c_str(), usage);
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2) {
    std::fputs(usage, stderr);
    return 2;
  }
  return compare_files({files[0]}, {files[1]}, merged);
}

}  // namespace dtbench
