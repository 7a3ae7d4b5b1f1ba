#include "arguments.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

namespace dtplan {

namespace {

const char* const kUsage = R"(usage: dtplan [model] [cluster] --batch B [search] [output]

Ranks every way of training the model on the cluster by estimated step time.

model (a preset, and/or the shape; sizes override the preset's):
  --model NAME          gpt3-175b, gpt-1t (Megatron-LM's 1T GPT)
  --layers N --hidden N --heads N [--kv-heads N] [--ffn N] --vocab N --seq N
  [--experts N --top-k N]
cluster:
  --cluster NAME        a100, h100 or h200 nodes of 8 GPUs (default h100)
  --nodes N             (default 1)
  --cluster-file PATH   "key = value" lines (see dtrain/plan.h)
search:
  --batch B             global batch in sequences (required)
  --dims LIST           searched among tp,pp,cp,ep (default all)
  --zero LIST           ZeRO stages among 0,1,2,3 (default all)
  --schedules LIST      among gpipe,1f1b,interleaved (default all)
  --recompute LIST      among none,selective,full (default all)
  --max-micro-batch N   (default 8)
  --max-virtual N       interleaved chunks per rank, 2..N (default 4)
  --no-sp               no sequence parallelism with tp
  --memory-fraction F   share of GPU memory usable (default 0.9)
output:
  --top N               rows of the table (default 10)
  --json PATH, --svg PATH
  --compare CONFIG      e.g. tp=8,pp=4,dp=32,zero=1,schedule=1f1b,mb=1,recompute=full:
                        evaluate it and explain how it differs from the fastest
)";

[[noreturn]] void usage(const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "dtplan: %s\n\n", error.c_str());
  std::fputs(kUsage, error.empty() ? stdout : stderr);
  std::exit(error.empty() ? 0 : 2);
}

long long integer(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') usage(what + ": \"" + text + "\" is not a whole number");
  return value;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, ',')) parts.push_back(part);
  return parts;
}

unsigned bits(const std::string& text, const std::map<std::string, unsigned>& names, const std::string& what) {
  unsigned mask = 0;
  for (const std::string& part : split(text)) {
    const auto it = names.find(part);
    if (it == names.end()) usage(what + ": unknown value \"" + part + "\"");
    mask |= it->second;
  }
  return mask;
}

const std::map<std::string, unsigned> kSchedules{{"gpipe", 1u << DT_PIPELINE_GPIPE},
                                                 {"1f1b", 1u << DT_PIPELINE_1F1B},
                                                 {"interleaved", 1u << DT_PIPELINE_INTERLEAVED_1F1B}};
const std::map<std::string, unsigned> kRecompute{{"none", 1u << DT_PLAN_RECOMPUTE_NONE},
                                                 {"selective", 1u << DT_PLAN_RECOMPUTE_SELECTIVE},
                                                 {"full", 1u << DT_PLAN_RECOMPUTE_FULL}};

void preset_model(const std::string& name, dt_plan_model& m) {
  // GPT-3 175B (Brown et al. 2020) and Megatron-LM's 1T GPT (Narayanan et al. 2021, table 1).
  if (name == "gpt3-175b") {
    m.layers = 96, m.hidden = 12288, m.heads = 96, m.vocab = 51200, m.seq_len = 2048;
  } else if (name == "gpt-1t") {
    m.layers = 128, m.hidden = 25600, m.heads = 160, m.vocab = 51200, m.seq_len = 2048;
  } else {
    usage("unknown model \"" + name + "\"; the presets are gpt3-175b and gpt-1t");
  }
}

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
    if (equals == std::string::npos) usage("--compare: \"" + part + "\" is not key=value");
    const std::string key = part.substr(0, equals);
    const std::string value = part.substr(equals + 1);
    if (numbers.count(key) != 0) {
      *numbers[key] = static_cast<int>(integer(value, "--compare " + key));
    } else if (key == "schedule" && kSchedules.count(value) != 0) {
      c.schedule = static_cast<dt_pipeline_schedule_kind>(__builtin_ctz(kSchedules.at(value)));
    } else if (key == "recompute" && kRecompute.count(value) != 0) {
      c.recompute = static_cast<dt_plan_recompute>(__builtin_ctz(kRecompute.at(value)));
    } else {
      usage("--compare: unknown \"" + part + "\"");
    }
  }
  return c;
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  std::string cluster = "h100", cluster_file;
  int nodes = 1;
  std::map<std::string, int*> model_sizes{
      {"--layers", &a.model.layers},     {"--hidden", &a.model.hidden},   {"--heads", &a.model.heads},
      {"--kv-heads", &a.model.kv_heads}, {"--ffn", &a.model.ffn_hidden},  {"--vocab", &a.model.vocab},
      {"--seq", &a.model.seq_len},       {"--experts", &a.model.experts}, {"--top-k", &a.model.top_k}};
  // The preset first, so that sizes given anywhere override it.
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--model") preset_model(argv[i + 1], a.model);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") usage("");
    if (flag == "--no-sp") {
      a.options.sequence_parallel = 0;
      continue;
    }
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (model_sizes.count(flag) != 0) {
      *model_sizes[flag] = static_cast<int>(integer(value, flag));
    } else if (flag == "--model") {
      continue;
    } else if (flag == "--cluster") {
      cluster = value;
    } else if (flag == "--nodes") {
      nodes = static_cast<int>(integer(value, flag));
    } else if (flag == "--cluster-file") {
      cluster_file = value;
    } else if (flag == "--batch") {
      a.options.global_batch = integer(value, flag);
    } else if (flag == "--dims") {
      a.options.dimensions =
          bits(value, {{"tp", DT_PLAN_DIM_TP}, {"pp", DT_PLAN_DIM_PP}, {"cp", DT_PLAN_DIM_CP}, {"ep", DT_PLAN_DIM_EP}},
               flag);
    } else if (flag == "--zero") {
      a.options.zero_stages = bits(value, {{"0", 1u}, {"1", 2u}, {"2", 4u}, {"3", 8u}}, flag);
    } else if (flag == "--schedules") {
      a.options.schedules = bits(value, kSchedules, flag);
    } else if (flag == "--recompute") {
      a.options.recompute = bits(value, kRecompute, flag);
    } else if (flag == "--max-micro-batch") {
      a.options.max_micro_batch = static_cast<int>(integer(value, flag));
    } else if (flag == "--max-virtual") {
      a.options.max_virtual_stages = static_cast<int>(integer(value, flag));
    } else if (flag == "--memory-fraction") {
      a.options.memory_fraction = std::atof(value.c_str());
    } else if (flag == "--top") {
      a.top = static_cast<int>(integer(value, flag));
    } else if (flag == "--json") {
      a.json = value;
    } else if (flag == "--svg") {
      a.svg = value;
    } else if (flag == "--compare") {
      a.compare = value;
    } else {
      usage("unknown option " + flag);
    }
  }
  if (a.options.global_batch < 1) usage("--batch is required");
  if (cluster_file.empty()) {
    fail(dt_plan_cluster_preset(&a.cluster, cluster.c_str(), nodes), "--cluster");
  } else {
    fail(dt_plan_cluster_load(&a.cluster, cluster_file.c_str()), "--cluster-file");
  }
  if (a.options.keep < static_cast<size_t>(a.top)) a.options.keep = static_cast<size_t>(a.top);
  return a;
}

}  // namespace dtplan
