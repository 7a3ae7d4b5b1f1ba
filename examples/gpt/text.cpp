#include "text.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace gpt {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

Corpus load_corpus(const std::string &path, int64_t window, int64_t pad) {
  Corpus c;
  c.source = path;
  std::string text;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(path, ec)) {
      fs::path p = e.path();
      // A fortune database is the text file beside its strfile index.
      if (e.is_regular_file() && p.extension().empty() && fs::exists(p.string() + ".dat")) files.push_back(p);
    }
    std::sort(files.begin(), files.end());
    for (const auto &p : files) text += read_file(p);
    c.files = (int64_t)files.size();
  } else if (fs::is_regular_file(path, ec)) {
    text = read_file(path);
    c.files = 1;
  } else {
    throw std::runtime_error(path + ": no such file or directory (the fortunes package installs "
                             "/usr/share/games/fortunes; --data names another text)");
  }
  const int64_t n = (int64_t)text.size();
  int64_t held = std::max<int64_t>(n / 10, window + 1);
  if (n - held < 2 * (window + 1))
    throw std::runtime_error(path + ": " + std::to_string(n) + " bytes is too little text for windows of " +
                             std::to_string(window));
  std::array<int32_t, 256> id{};
  id.fill(-1);
  for (unsigned char b : text) id[b] = 0;
  for (int b = 0; b < 256; ++b)
    if (id[b] == 0) {
      id[b] = (int32_t)c.bytes.size();
      c.bytes.push_back((unsigned char)b);
    }
  c.vocab = ((int64_t)c.bytes.size() + pad - 1) / pad * pad;
  c.train.reserve((size_t)(n - held));
  c.val.reserve((size_t)held);
  for (int64_t i = 0; i < n; ++i) (i < n - held ? c.train : c.val).push_back(id[(unsigned char)text[(size_t)i]]);
  return c;
}

double unigram_entropy(const Corpus &c) {
  std::vector<double> count((size_t)c.vocab, 0.0);
  for (int32_t t : c.train) count[(size_t)t] += 1.0;
  double h = 0.0, n = (double)c.train.size();
  for (double k : count)
    if (k > 0) h -= k / n * std::log(k / n);
  return h;
}

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int64_t window_start(uint64_t seed, int64_t step, int64_t index, int64_t tokens, int64_t window) {
  uint64_t h = mix64(mix64(mix64(seed) ^ (uint64_t)step) ^ (uint64_t)index);
  return (int64_t)(h % (uint64_t)(tokens - window - 1));
}

}  // namespace gpt
