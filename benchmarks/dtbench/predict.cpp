// dtbench predict. Reads the configuration each results file records (the
// model, batch and ranks of ddp and zero, the block of tp, the stages, unit
// and micro-batches of pipeline), predicts its step time from a cluster
// file with step_model.hpp, and prints both with measured / predicted.
#include "predict.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "step_model.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const Usage kCli{"predict", "usage: dtbench predict --cluster-file PATH [--json PATH] RESULTS.json...",
                 "Predicts the step times of the runs that dtbench ddp, zero, tp and pipeline\n"
                 "wrote to RESULTS.json with the planner's model (docs/planner.md) on the cluster\n"
                 "file (dtrain/plan.h; tools/dtplan/calibrate.py fits one to this machine), and\n"
                 "prints them beside the measured ones."};

struct Row {
  std::string benchmark;
  std::string name;  // the case within the benchmark
  double measured = 0;  // seconds
  model::Terms predicted;
};

// `key` of `parent`, which must be there and have the type `is` checks
// (`what` says which type, for the error).
const Json& member(const Json& parent, const char* key, bool (Json::*is)() const noexcept, const char* what) {
  const auto it = parent.find(key);
  if (it == parent.end()) throw std::runtime_error(std::string("no \"") + key + "\"");
  if (!((*it).*is)()) throw std::runtime_error(std::string("\"") + key + "\" is not " + what);
  return *it;
}

const Json& object(const Json& parent, const char* key) {
  return member(parent, key, &Json::is_object, "an object");
}

const Json& array(const Json& parent, const char* key) { return member(parent, key, &Json::is_array, "an array"); }

double number(const Json& parent, const char* key) {
  return member(parent, key, &Json::is_number, "a number").get<double>();
}

bool flag(const Json& parent, const char* key) {
  return member(parent, key, &Json::is_boolean, "true or false").get<bool>();
}

std::string text(const Json& parent, const char* key) {
  return member(parent, key, &Json::is_string, "a string").get<std::string>();
}

// The example MLP of a ddp or zero run, with the busiest rank's samples.
model::Mlp mlp_of(const Json& doc, int ranks) {
  model::Mlp mlp;
  for (const Json& d : array(object(doc, "model"), "dims")) {
    if (!d.is_number()) throw std::runtime_error("\"dims\" holds something that is not a number");
    mlp.dims.push_back(d.get<int>());
  }
  const auto batch = static_cast<std::int64_t>(number(doc, "batch"));
  mlp.rows = (batch + ranks - 1) / ranks;
  return mlp;
}

void ddp_rows(const Json& doc, const dt_plan_cluster& c, std::vector<Row>& rows) {
  const int ranks = static_cast<int>(number(doc, "world_size"));
  const model::Mlp mlp = mlp_of(doc, ranks);
  const struct {
    const char* name;
    model::DdpMode mode;
  } modes[] = {{"compute", model::DdpMode::compute},
               {"serial", model::DdpMode::serial},
               {"overlap", model::DdpMode::overlap}};
  for (const auto& m : modes) {
    const double measured = number(object(object(doc, "modes"), m.name), "step_ms") * 1e-3;
    rows.push_back({"ddp", m.name, measured, model::ddp_step(mlp, ranks, m.mode, c)});
  }
}

void zero_rows(const Json& doc, const dt_plan_cluster& c, std::vector<Row>& rows) {
  const int ranks = static_cast<int>(number(doc, "world_size"));
  const model::Mlp mlp = mlp_of(doc, ranks);
  for (const Json& s : array(doc, "stages")) {
    const int stage = static_cast<int>(number(s, "stage"));
    rows.push_back({"zero", "stage " + std::to_string(stage), number(s, "step_ms") * 1e-3,
                    model::zero_step(mlp, ranks, stage, c)});
  }
}

void tp_rows(const Json& doc, const dt_plan_cluster& c, std::vector<Row>& rows) {
  const bool sp = flag(doc, "sequence_parallel");
  rows.push_back({"tp", sp ? "block, sequence parallel" : "block", number(doc, "step_ms") * 1e-3,
                  model::tp_step(static_cast<std::int64_t>(number(doc, "tokens")),
                                 static_cast<std::int64_t>(number(doc, "hidden")),
                                 static_cast<std::int64_t>(number(doc, "ffn")), static_cast<int>(number(doc, "ranks")),
                                 sp, c)});
}

// dtbench pipeline's names of the schedule kinds.
const std::map<std::string, dt_pipeline_schedule_kind> kSchedules{{"gpipe", DT_PIPELINE_GPIPE},
                                                                   {"1f1b", DT_PIPELINE_1F1B},
                                                                   {"interleaved_1f1b", DT_PIPELINE_INTERLEAVED_1F1B},
                                                                   {"zb_h1", DT_PIPELINE_ZB_H1}};

// Chunks per rank: dtbench pipeline leaves them at the schedule's default,
// two for interleaved 1F1B and one otherwise.
void pipeline_rows(const Json& doc, const dt_plan_cluster& c, std::vector<Row>& rows) {
  const int stages = static_cast<int>(number(doc, "stages"));
  const double unit = number(doc, "unit_us") * 1e-6;
  const double bytes = number(doc, "elements") * 4.0;
  for (const Json& k : array(doc, "cases")) {
    const std::string kind = text(k, "kind");
    const auto schedule = kSchedules.find(kind);
    if (schedule == kSchedules.end()) throw std::runtime_error("pipeline kind \"" + kind + "\" is unknown");
    const auto m = static_cast<std::int64_t>(number(k, "microbatches"));
    const int chunks = schedule->second == DT_PIPELINE_INTERLEAVED_1F1B ? 2 : 1;
    rows.push_back({"pipeline", kind + " m=" + std::to_string(m), number(k, "step_ms") * 1e-3,
                    model::pipeline_step(schedule->second, stages, chunks, m, unit, bytes, c)});
  }
}

void add_rows(const std::string& path, const dt_plan_cluster& c, std::vector<Row>& rows) {
  try {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read it");
    const Json doc = Json::parse(in);
    if (!doc.is_object()) throw std::runtime_error("not a JSON object");
    const std::string benchmark = text(doc, "benchmark");
    if (benchmark == "ddp") ddp_rows(doc, c, rows);
    else if (benchmark == "zero") zero_rows(doc, c, rows);
    else if (benchmark == "tp") tp_rows(doc, c, rows);
    else if (benchmark == "pipeline") pipeline_rows(doc, c, rows);
    else throw std::runtime_error("benchmark \"" + benchmark + "\" is not ddp, zero, tp or pipeline");
  } catch (const std::exception& e) {  // the fields above, or nlohmann's parse error
    throw std::runtime_error(path + ": " + e.what());
  }
}

void print(const std::vector<Row>& rows) {
  std::printf("%-9s %-26s %11s %12s %9s %11s %9s %10s %12s\n", "benchmark", "case", "measured_ms", "predicted_ms",
              "ratio", "compute_ms", "comm_ms", "bubble_ms", "optimizer_ms");
  for (const Row& r : rows) {
    const model::Terms& t = r.predicted;
    std::printf("%-9s %-26s %11.3f %12.3f %9.3f %11.3f %9.3f %10.3f %12.3f\n", r.benchmark.c_str(), r.name.c_str(),
                r.measured * 1e3, t.step() * 1e3, r.measured / t.step(), t.compute * 1e3, t.comm * 1e3,
                t.bubble * 1e3, t.optimizer * 1e3);
  }
  std::printf("# ratio = measured / predicted\n");
}

int write_json(const std::string& path, const std::string& cluster, const std::vector<Row>& rows) {
  Json out = Json::array();
  for (const Row& r : rows) {
    const model::Terms& t = r.predicted;
    out.push_back({{"benchmark", r.benchmark},
                   {"case", r.name},
                   {"measured_ms", r.measured * 1e3},
                   {"predicted_ms", t.step() * 1e3},
                   {"ratio", r.measured / t.step()},
                   {"compute_ms", t.compute * 1e3},
                   {"comm_ms", t.comm * 1e3},
                   {"bubble_ms", t.bubble * 1e3},
                   {"optimizer_ms", t.optimizer * 1e3}});
  }
  const Json doc = {{"benchmark", "predict"}, {"cluster_file", cluster}, {"rows", out}};
  return write_results(kCli.command, path, doc) ? 0 : 1;
}

}  // namespace

int run_predict(int argc, char** argv) {
  std::string cluster_path, json_path;
  std::vector<std::string> results;
  auto app = kCli.app();
  app->add_option("--cluster-file", cluster_path,
                  "the machine: peak_flops x gemm_efficiency, memory_bandwidth,\n"
                  "intra_bandwidth and intra_latency are used")
      ->type_name("PATH");
  app->add_option("--json", json_path, "also write the rows as JSON")->type_name("PATH");
  app->add_option("RESULTS.json", results, "results files of dtbench ddp, zero, tp and pipeline");
  dtrain::command_line::parse(*app, argc, argv);
  // Checked here rather than by CLI11, which would report them before an
  // unknown option.
  if (cluster_path.empty()) kCli.error("--cluster-file is required");
  if (results.empty()) kCli.error("no RESULTS.json given");
  dt_plan_cluster cluster = DT_PLAN_CLUSTER_INIT;
  if (dt_plan_cluster_load(&cluster, cluster_path.c_str()) != DT_OK) {
    std::fprintf(stderr, "dtbench predict: %s\n", dt_error_last());
    return 1;
  }
  std::vector<Row> rows;
  try {
    for (const std::string& path : results) add_rows(path, cluster, rows);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "dtbench predict: %s\n", e.what());
    return 1;
  }
  std::printf("# dtbench predict: %s; GEMMs at %.2f GFLOP/s, memory %.2f GB/s, link %.3f GB/s and %.2f us\n",
              cluster_path.c_str(), cluster.peak_flops * cluster.gemm_efficiency / 1e9,
              cluster.memory_bandwidth / 1e9, cluster.intra_bandwidth / 1e9, cluster.intra_latency * 1e6);
  print(rows);
  return json_path.empty() ? 0 : write_json(json_path, cluster_path, rows);
}

}  // namespace dtbench
