#include "arguments.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "command_line.hpp"

namespace dtplan {

namespace {

const char kDescription[] = "Ranks every way of training the model on the cluster by estimated step time.";

const char kFooter[] =
    "The model is a preset, and/or its shape: sizes given override the preset's.\n"
    "--compare takes e.g. tp=8,pp=4,dp=32,zero=1,schedule=1f1b,mb=1,recompute=full:\n"
    "dtplan evaluates it and explains how it differs from the fastest.\n";

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  for (std::size_t begin = 0;;) {
    const std::size_t comma = text.find(',', begin);
    parts.push_back(text.substr(begin, comma - begin));
    if (comma == std::string::npos) return parts;
    begin = comma + 1;
  }
}

int whole_number(const std::string& text, const std::string& what) {
  int value = 0;
  if (!CLI::detail::lexical_cast(text, value))
    throw std::invalid_argument(what + ": \"" + text + "\" is not a whole number");
  return value;
}

using Names = std::map<std::string, unsigned>;

const Names kDims{{"tp", DT_PLAN_DIM_TP}, {"pp", DT_PLAN_DIM_PP}, {"cp", DT_PLAN_DIM_CP}, {"ep", DT_PLAN_DIM_EP}};
const Names kZero{{"0", 1u}, {"1", 2u}, {"2", 4u}, {"3", 8u}};
const Names kSchedules{{"gpipe", 1u << DT_PIPELINE_GPIPE},
                       {"1f1b", 1u << DT_PIPELINE_1F1B},
                       {"interleaved", 1u << DT_PIPELINE_INTERLEAVED_1F1B},
                       {"zb_h1", 1u << DT_PIPELINE_ZB_H1}};
const Names kRecompute{{"none", 1u << DT_PLAN_RECOMPUTE_NONE},
                       {"selective", 1u << DT_PLAN_RECOMPUTE_SELECTIVE},
                       {"full", 1u << DT_PLAN_RECOMPUTE_FULL}};

// A comma-separated list of `names` as the union of their bits.
void add_list(CLI::App& app, const std::string& flag, const Names& names, unsigned& mask, const std::string& help) {
  app.add_option_function<std::vector<std::string>>(
         flag,
         [&mask, &names](const std::vector<std::string>& values) {
           mask = 0;
           for (const std::string& v : values) mask |= names.at(v);
         },
         help)
      ->delimiter(',')
      ->check(CLI::IsMember(names))
      ->group("search")
      ->type_name("LIST");
}

// The model's sizes, each an option of its name.
struct Size {
  const char* flag;
  int dt_plan_model::*field;
  const char* help;
};
const Size kSizes[] = {{"--layers", &dt_plan_model::layers, "transformer blocks"},
                       {"--hidden", &dt_plan_model::hidden, "model width"},
                       {"--heads", &dt_plan_model::heads, "attention (query) heads"},
                       {"--kv-heads", &dt_plan_model::kv_heads, "key/value heads (default: --heads)"},
                       {"--ffn", &dt_plan_model::ffn_hidden, "MLP width (default: 4 x --hidden)"},
                       {"--vocab", &dt_plan_model::vocab, "vocabulary size"},
                       {"--seq", &dt_plan_model::seq_len, "tokens per sequence"},
                       {"--experts", &dt_plan_model::experts, "experts of every MLP (default: dense)"},
                       {"--top-k", &dt_plan_model::top_k, "experts per token (default 1)"}};

// GPT-3 175B (Brown et al. 2020) and Megatron-LM's 1T GPT (Narayanan et al. 2021, table 1).
const std::map<std::string, dt_plan_model> kPresets{
    {"gpt3-175b",
     [] {
       dt_plan_model m = DT_PLAN_MODEL_INIT;
       m.layers = 96, m.hidden = 12288, m.heads = 96, m.vocab = 51200, m.seq_len = 2048;
       return m;
     }()},
    {"gpt-1t", [] {
       dt_plan_model m = DT_PLAN_MODEL_INIT;
       m.layers = 128, m.hidden = 25600, m.heads = 160, m.vocab = 51200, m.seq_len = 2048;
       return m;
     }()}};

void fail(dt_status status, const char* what) {
  if (status == DT_OK) return;
  std::fprintf(stderr, "dtplan: %s: %s\n", what, dt_error_last());
  std::exit(1);
}

}  // namespace

dt_plan_config parse_config(const std::string& text) {
  dt_plan_config c = DT_PLAN_CONFIG_INIT;
  std::map<std::string, int*> numbers{{"dp", &c.dp},
                                      {"tp", &c.tp},
                                      {"pp", &c.pp},
                                      {"cp", &c.cp},
                                      {"ep", &c.ep},
                                      {"zero", &c.zero_stage},
                                      {"v", &c.virtual_stages},
                                      {"mb", &c.micro_batch}};
  for (const std::string& part : split(text)) {
    const auto equals = part.find('=');
    if (equals == std::string::npos) throw std::invalid_argument("\"" + part + "\" is not key=value");
    const std::string key = part.substr(0, equals);
    const std::string value = part.substr(equals + 1);
    if (numbers.count(key) != 0) {
      *numbers[key] = whole_number(value, key);
    } else if (key == "schedule" && kSchedules.count(value) != 0) {
      c.schedule = static_cast<dt_pipeline_schedule_kind>(__builtin_ctz(kSchedules.at(value)));
    } else if (key == "recompute" && kRecompute.count(value) != 0) {
      c.recompute = static_cast<dt_plan_recompute>(__builtin_ctz(kRecompute.at(value)));
    } else {
      throw std::invalid_argument("unknown \"" + part + "\"");
    }
  }
  return c;
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  std::string model, cluster = "h100", cluster_file;
  int nodes = 1;
  CLI::App app(kDescription, "dtplan");
  dtrain::command_line::set_usage(app, "usage: dtplan [model] [cluster] --batch B [search] [output]");
  app.footer(kFooter);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  app.add_option("--model", model, "a preset: gpt3-175b, gpt-1t (Megatron-LM's 1T GPT)")
      ->group("model")
      ->check(CLI::IsMember(kPresets));
  // The sizes go to a model of their own, to override the preset's after parsing.
  dt_plan_model sizes = DT_PLAN_MODEL_INIT;
  for (const Size& size : kSizes)
    app.add_option(size.flag, sizes.*size.field, size.help)->group("model")->type_name("N");
  app.add_option("--cluster", cluster, "a100, h100 or h200 nodes of 8 GPUs (default h100)")
      ->group("cluster")
      ->type_name("NAME");
  app.add_option("--nodes", nodes, "(default 1)")->group("cluster")->type_name("N");
  app.add_option("--cluster-file", cluster_file, "\"key = value\" lines (see dtrain/plan.h)")
      ->group("cluster")
      ->type_name("PATH");
  app.add_option("--batch", a.options.global_batch, "global batch in sequences (required)")
      ->group("search")
      ->type_name("B")
      ->required();
  add_list(app, "--dims", kDims, a.options.dimensions, "searched among tp,pp,cp,ep (default all)");
  add_list(app, "--zero", kZero, a.options.zero_stages, "ZeRO stages among 0,1,2,3 (default all)");
  add_list(app, "--schedules", kSchedules, a.options.schedules, "among gpipe,1f1b,interleaved,zb_h1 (default gpipe,1f1b,interleaved)");
  add_list(app, "--recompute", kRecompute, a.options.recompute, "among none,selective,full (default all)");
  app.add_option("--max-micro-batch", a.options.max_micro_batch, "(default 8)")->group("search")->type_name("N");
  app.add_option("--max-virtual", a.options.max_virtual_stages, "interleaved chunks per rank, 2..N (default 4)")
      ->group("search")
      ->type_name("N");
  app.add_flag_callback(
         "--no-sp", [&a] { a.options.sequence_parallel = 0; }, "no sequence parallelism with tp")
      ->group("search");
  app.add_option("--memory-fraction", a.options.memory_fraction, "share of GPU memory usable (default 0.9)")
      ->group("search")
      ->type_name("F");
  app.add_option("--top", a.top, "rows of the table (default 10)")->group("output")->type_name("N");
  app.add_option("--json", a.json, "write the plan as JSON")->group("output")->type_name("PATH");
  app.add_option("--svg", a.svg, "draw the plan as SVG")->group("output")->type_name("PATH");
  app.add_option("--compare", a.compare, "evaluate this configuration and explain how it differs from the fastest")
      ->group("output")
      ->type_name("CONFIG")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              parse_config(text);
              return "";
            } catch (const std::invalid_argument& e) {
              return e.what();
            }
          },
          ""));
  dtrain::command_line::parse(app, argc, argv);

  if (!model.empty()) a.model = kPresets.at(model);
  for (const Size& size : kSizes) {
    if (app.count(size.flag) != 0) a.model.*size.field = sizes.*size.field;
  }
  if (a.options.global_batch < 1) dtrain::command_line::fail(app, "--batch must be at least 1");
  if (cluster_file.empty()) {
    fail(dt_plan_cluster_preset(&a.cluster, cluster.c_str(), nodes), "--cluster");
  } else {
    fail(dt_plan_cluster_load(&a.cluster, cluster_file.c_str()), "--cluster-file");
  }
  if (a.options.keep < static_cast<size_t>(a.top)) a.options.keep = static_cast<size_t>(a.top);
  return a;
}

}  // namespace dtplan
