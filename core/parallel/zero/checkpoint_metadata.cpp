#include "parallel/zero/checkpoint_metadata.hpp"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "base/error.hpp"
#include "parallel/zero/checkpoint_files.hpp"

namespace dtrain::parallel::zero {

namespace {

constexpr const char* kFormatLine = "dtrain-zero-checkpoint 2";
constexpr DType kParameterDtypes[] = {DType::f32, DType::f16, DType::bf16};

const char* kind_name(optim::Kind kind) { return kind == optim::Kind::sgd ? "sgd" : "adamw"; }

std::string hex_float(float value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", static_cast<double>(value));
  return text;
}

std::string join_shape(const std::vector<std::int64_t>& shape) {
  if (shape.empty()) return "-";
  std::string text;
  for (std::size_t d = 0; d < shape.size(); ++d) text += (d ? "," : "") + std::to_string(shape[d]);
  return text;
}

// Reads the lines of a metadata file, each a keyword and its values,
// refusing anything unexpected with the line it was found on.
class LineReader {
 public:
  LineReader(const std::string& body, const std::string& path) : path_(path) {
    std::istringstream in(body);
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
  }

  // The next line, split into words; its first word must be `keyword`.
  std::vector<std::string> expect(const std::string& keyword, std::size_t min_words) {
    if (next_ >= lines_.size()) fail("ends before '" + keyword + "'");
    std::istringstream in(lines_[next_++]);
    std::vector<std::string> words;
    for (std::string word; in >> word;) words.push_back(word);
    if (words.empty() || words[0] != keyword) fail("expected '" + keyword + "'");
    if (words.size() < min_words + 1) fail("'" + keyword + "' has too few values");
    return words;
  }

  std::int64_t integer(const std::string& word, std::int64_t min, std::int64_t max) {
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(word.c_str(), &end, 10);
    if (errno != 0 || end == word.c_str() || *end != '\0' || value < min || value > max) {
      fail("'" + word + "' is not an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return value;
  }

  std::int64_t single(const std::string& keyword, std::int64_t min, std::int64_t max) {
    const auto words = expect(keyword, 1);
    return integer(words[1], min, max);
  }

  bool at_end() const { return next_ == lines_.size(); }

  [[noreturn]] void fail(const std::string& what) const {
    raise(DT_ERR_INVALID_ARGUMENT,
          "checkpoint metadata " + path_ + ": line " + std::to_string(next_) + ": " + what);
  }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  std::size_t next_ = 0;
};

constexpr std::int64_t kMaxCount = std::int64_t{1} << 50;

std::vector<std::int64_t> parse_shape(LineReader& reader, const std::string& text) {
  std::vector<std::int64_t> shape;
  if (text == "-") return shape;
  std::istringstream in(text);
  for (std::string extent; std::getline(in, extent, ',');) shape.push_back(reader.integer(extent, 0, kMaxCount));
  return shape;
}

// Every element in [0, elements) belongs to exactly one run of one shard.
void check_coverage(const Metadata& metadata, const LineReader& reader) {
  std::vector<ElementRun> runs;
  for (const ShardRecord& shard : metadata.shards) runs.insert(runs.end(), shard.runs.begin(), shard.runs.end());
  std::sort(runs.begin(), runs.end(), [](const ElementRun& a, const ElementRun& b) { return a.first < b.first; });
  std::int64_t covered = 0;
  for (const ElementRun& run : runs) {
    if (run.first != covered) reader.fail("shard runs leave a gap or overlap at element " + std::to_string(covered));
    covered += run.count;
  }
  if (covered != metadata.elements()) {
    reader.fail("shard runs cover " + std::to_string(covered) + " of " + std::to_string(metadata.elements()) +
                " elements");
  }
}

}  // namespace

std::int64_t Metadata::elements() const {
  std::int64_t total = 0;
  for (const auto& shape : shapes) {
    std::int64_t count = 1;
    for (std::int64_t extent : shape) count *= extent;
    total += count;
  }
  return total;
}

std::string format_metadata(const Metadata& metadata) {
  std::ostringstream out;
  out << kFormatLine << '\n'
      << "generation " << metadata.generation << '\n'
      << "world " << metadata.world << '\n'
      << "stage " << metadata.stage << '\n'
      << "dtype " << dtype_name(metadata.dtype) << '\n'
      << "optimizer " << kind_name(metadata.kind) << '\n'
      << "state_buffers " << metadata.state_buffers << '\n'
      << "steps " << metadata.steps << '\n'
      << "loss_scale " << hex_float(metadata.scaler.scale) << '\n'
      << "clean_steps " << metadata.scaler.clean_steps << '\n'
      << "elements " << metadata.elements() << '\n'
      << "parameters " << metadata.shapes.size() << '\n';
  for (std::size_t i = 0; i < metadata.shapes.size(); ++i) {
    out << "parameter " << i << ' ' << join_shape(metadata.shapes[i]) << '\n';
  }
  for (std::size_t r = 0; r < metadata.shards.size(); ++r) {
    const ShardRecord& shard = metadata.shards[r];
    out << "shard " << r << ' ' << shard.bytes << ' ' << shard.sha256 << ' ' << shard.runs.size();
    for (const ElementRun& run : shard.runs) out << ' ' << run.first << ' ' << run.count;
    out << '\n';
  }
  const std::string body = out.str();
  return body + "sha256 " + sha256_hex(body) + "\n";
}

Metadata parse_metadata(const std::string& text, const std::string& path) {
  // The checksum line covers everything before it.
  const std::size_t tail = text.rfind("sha256 ");
  if (tail == std::string::npos || (tail != 0 && text[tail - 1] != '\n')) {
    raise(DT_ERR_INVALID_ARGUMENT, "checkpoint metadata " + path + " has no checksum line (truncated?)");
  }
  const std::string body = text.substr(0, tail);
  std::string recorded = text.substr(tail + 7);
  while (!recorded.empty() && (recorded.back() == '\n' || recorded.back() == '\r')) recorded.pop_back();
  if (recorded != sha256_hex(body)) {
    raise(DT_ERR_INVALID_ARGUMENT, "checkpoint metadata " + path + " does not match its checksum (corrupt or edited)");
  }

  LineReader reader(body, path);
  const auto format = reader.expect("dtrain-zero-checkpoint", 1);
  if (format[1] != "1" && format[1] != "2") {
    reader.fail("format version " + format[1] + " is not one this library reads (1, 2)");
  }

  Metadata metadata;
  if (format[1] == "2") {
    metadata.generation = reader.expect("generation", 1)[1];
    const bool hex = std::all_of(metadata.generation.begin(), metadata.generation.end(),
                                 [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
    if (!hex) reader.fail("generation '" + metadata.generation + "' is not hexadecimal");
  }
  metadata.world = static_cast<int>(reader.single("world", 1, 1 << 24));
  metadata.stage = static_cast<int>(reader.single("stage", 0, 3));

  const std::string dtype = reader.expect("dtype", 1)[1];
  const auto* known = std::find_if(std::begin(kParameterDtypes), std::end(kParameterDtypes),
                                   [&](DType d) { return dtype == dtype_name(d); });
  if (known == std::end(kParameterDtypes)) reader.fail("unknown parameter dtype '" + dtype + "'");
  metadata.dtype = *known;

  const std::string kind = reader.expect("optimizer", 1)[1];
  if (kind != "sgd" && kind != "adamw") reader.fail("unknown optimizer '" + kind + "'");
  metadata.kind = kind == "sgd" ? optim::Kind::sgd : optim::Kind::adamw;

  metadata.state_buffers = static_cast<int>(reader.single("state_buffers", 0, device::kMaxStateBuffers));
  metadata.steps = reader.single("steps", 0, INT64_MAX);

  const std::string scale = reader.expect("loss_scale", 1)[1];
  char* end = nullptr;
  metadata.scaler.scale = std::strtof(scale.c_str(), &end);
  if (end == scale.c_str() || *end != '\0' || !std::isfinite(metadata.scaler.scale) || metadata.scaler.scale <= 0) {
    reader.fail("loss scale '" + scale + "' is not a finite number > 0");
  }
  metadata.scaler.clean_steps = static_cast<int>(reader.single("clean_steps", 0, INT32_MAX));
  const std::int64_t elements = reader.single("elements", 0, kMaxCount);

  const std::int64_t parameters = reader.single("parameters", 1, kMaxCount);
  for (std::int64_t i = 0; i < parameters; ++i) {
    const auto words = reader.expect("parameter", 2);
    if (reader.integer(words[1], 0, kMaxCount) != i) reader.fail("parameters out of order");
    metadata.shapes.push_back(parse_shape(reader, words[2]));
  }
  if (metadata.elements() != elements) reader.fail("parameter shapes do not add up to 'elements'");

  for (int r = 0; r < metadata.world; ++r) {
    const auto words = reader.expect("shard", 4);
    if (reader.integer(words[1], 0, metadata.world) != r) reader.fail("shards out of order");
    ShardRecord shard;
    shard.bytes = reader.integer(words[2], 0, INT64_MAX);
    shard.sha256 = words[3];
    const std::int64_t runs = reader.integer(words[4], 0, kMaxCount);
    if (words.size() != 5 + 2 * static_cast<std::size_t>(runs)) reader.fail("shard " + std::to_string(r) + " lists the wrong number of runs");
    for (std::int64_t k = 0; k < runs; ++k) {
      const std::int64_t first = reader.integer(words[5 + 2 * k], 0, elements);
      const std::int64_t count = reader.integer(words[6 + 2 * k], 1, elements - first);
      shard.runs.push_back({first, count});
    }
    metadata.shards.push_back(std::move(shard));
  }
  if (!reader.at_end()) reader.fail("unexpected lines after the last shard");
  check_coverage(metadata, reader);
  return metadata;
}

}  // namespace dtrain::parallel::zero
