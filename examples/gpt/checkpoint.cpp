#include "checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>

#include "tensor.hpp"

namespace gpt {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'D', 'T', 'G', 'P', 'T', 'U', '0', '1'};
constexpr const char *kFirstLine = "dtrain-gpt-checkpoint 1";

uint64_t fnv1a(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
  return h;
}

std::string hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016" PRIx64, v);
  return b;
}

std::string model_line(const Config &c) {
  std::ostringstream s;
  s << "model vocab " << c.vocab << " seq " << c.seq << " hidden " << c.hidden << " heads " << c.heads << " layers "
    << c.layers << " experts " << c.moe.experts << " top-k " << c.moe.top_k;
  return s.str();
}

std::vector<std::string> all_units(const Config &c) {
  std::vector<std::string> u{"embed"};
  for (int64_t l = 0; l < c.layers; ++l) u.push_back("layer" + std::to_string(l));
  u.push_back("head");
  return u;
}

// The units this rank holds, each with its parameters, in model order.
std::vector<std::pair<std::string, std::vector<Param *>>> units_of(const std::vector<Param *> &params) {
  std::vector<std::pair<std::string, std::vector<Param *>>> out;
  for (Param *p : params) {
    std::string u = unit_of(p->name);
    if (out.empty() || out.back().first != u) out.push_back({u, {}});
    out.back().second.push_back(p);
  }
  return out;
}

template <typename T>
void put(std::string &b, T v) {
  b.append(reinterpret_cast<const char *>(&v), sizeof v);
}

void put_floats(std::string &b, const std::vector<float> &v) {
  b.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

// Writes `bytes` to `path` through a temporary name, synced, so that `path`
// is either absent or whole.
void write_file(const fs::path &path, const std::string &bytes) {
  fs::path tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp.string() + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    }
    done += (size_t)n;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw std::runtime_error("cannot sync " + tmp.string());
  fs::rename(tmp, path);
}

void sync_dir(const fs::path &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

std::string read_all(const fs::path &p, bool &ok) {
  std::ifstream in(p, std::ios::binary);
  ok = (bool)in;
  return ok ? std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) : std::string();
}

// Reads the tensors of unit file `bytes` (already checked against its
// checksum) into `found`: name -> (dims, weight, m, v).
struct Whole {
  std::vector<int64_t> dims;
  std::vector<float> w, m, v;
};

std::string parse_unit(const std::string &file, const std::string &bytes, std::map<std::string, Whole> &found) {
  size_t at = 0;
  auto take = [&](void *dst, size_t n) {
    if (at + n > bytes.size() - 8) return false;
    std::memcpy(dst, bytes.data() + at, n);
    at += n;
    return true;
  };
  char magic[8];
  uint64_t count = 0;
  if (!take(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return file + " is not a GPT checkpoint unit (bad magic)";
  if (!take(&count, 8)) return file + " is truncated";
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t len = 0, ndim = 0;
    if (!take(&len, 8) || len > 256) return file + ": a tensor name is malformed";
    std::string name(len, '\0');
    if (!take(name.data(), len) || !take(&ndim, 8) || ndim > 4) return file + ": tensor " + name + " is malformed";
    Whole t;
    t.dims.resize(ndim);
    int64_t n = 1;
    for (auto &d : t.dims) {
      if (!take(&d, 8) || d < 1 || d > (1 << 30)) return file + ": tensor " + name + " has a bad shape";
      n *= d;
    }
    for (auto *v : {&t.w, &t.m, &t.v}) {
      v->resize((size_t)n);
      if (!take(v->data(), (size_t)n * sizeof(float))) return file + ": tensor " + name + " is cut short";
    }
    found[name] = std::move(t);
  }
  if (at != bytes.size() - 8) return file + ": bytes after the last tensor";
  return "";
}

std::string dims_text(const std::vector<int64_t> &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

void save_checkpoint(const CheckpointContext &c, const std::string &dir, int64_t step, int64_t adam_steps) {
  const int heads = (int)c.cfg->heads;
  if (c.world_rank == 0) fs::create_directories(dir);
  check(dt_barrier(c.world), "dt_barrier");
  for (auto &[unit, params] : units_of(c.params)) {
    std::string bytes(kMagic, 8);
    put<uint64_t>(bytes, params.size());
    for (Param *p : params) {
      // Every holder takes part in the gathers; only the writer keeps the result.
      std::vector<float> w = unshard(*p, p->w, c.tp, c.ep, heads), m = unshard(*p, p->m, c.tp, c.ep, heads),
                         v = unshard(*p, p->v, c.tp, c.ep, heads);
      put<uint64_t>(bytes, p->name.size());
      bytes += p->name;
      put<uint64_t>(bytes, p->full.size());
      for (int64_t d : p->full) put<int64_t>(bytes, d);
      put_floats(bytes, w);
      put_floats(bytes, m);
      put_floats(bytes, v);
    }
    put<uint64_t>(bytes, fnv1a(bytes.data(), bytes.size()));
    if (c.writer) write_file(fs::path(dir) / (unit + "-" + std::to_string(step) + ".bin"), bytes);
  }
  check(dt_barrier(c.world), "dt_barrier");
  if (c.world_rank == 0) {
    std::ostringstream m;
    m << kFirstLine << "\nstep " << step << "\nadam-steps " << adam_steps << "\n" << model_line(*c.cfg) << "\n";
    std::vector<std::string> keep{"manifest"};
    for (const std::string &unit : all_units(*c.cfg)) {
      std::string file = unit + "-" + std::to_string(step) + ".bin";
      bool ok = false;
      std::string bytes = read_all(fs::path(dir) / file, ok);
      if (!ok) throw std::runtime_error("checkpoint " + dir + ": " + file + " was not written");
      m << "unit " << unit << " " << file << " " << bytes.size() << " " << hex(fnv1a(bytes.data(), bytes.size()))
        << "\n";
      keep.push_back(file);
    }
    write_file(fs::path(dir) / "manifest", m.str());
    sync_dir(dir);
    for (const auto &e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      if (std::find(keep.begin(), keep.end(), name) == keep.end() && name.find(".bin") != std::string::npos)
        fs::remove(e.path());
    }
  }
  check(dt_barrier(c.world), "dt_barrier");
}

namespace {

std::string load_mine(const CheckpointContext &c, const std::string &dir, int64_t &step, int64_t &adam_steps,
                      std::vector<std::vector<float>> &w, std::vector<std::vector<float>> &m,
                      std::vector<std::vector<float>> &v) {
  bool ok = false;
  std::string text = read_all(fs::path(dir) / "manifest", ok);
  if (!ok) return "no checkpoint in " + dir + " (no manifest)";
  std::istringstream in(text);
  std::string line, model;
  std::map<std::string, std::vector<std::string>> units;  // unit -> file, bytes, checksum
  if (!std::getline(in, line) || line != kFirstLine)
    return dir + "/manifest is not a GPT checkpoint of this format (its first line is '" + line.substr(0, 40) + "')";
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string key;
    f >> key;
    if (key == "step")
      f >> step;
    else if (key == "adam-steps")
      f >> adam_steps;
    else if (key == "model")
      model = line;
    else if (key == "unit") {
      std::string name, file, bytes, sum;
      f >> name >> file >> bytes >> sum;
      units[name] = {file, bytes, sum};
    }
  }
  if (model != model_line(*c.cfg))
    return dir + " was written for another model ('" + model + "'; this run's is '" + model_line(*c.cfg) + "')";
  if (step < 1 || adam_steps < 0) return dir + "/manifest has no valid step";
  size_t index = 0;
  for (auto &[unit, params] : units_of(c.params)) {
    auto entry = units.find(unit);
    if (entry == units.end()) return dir + "/manifest lists no file for " + unit + " (truncated?)";
    const std::string &file = entry->second[0];
    std::string bytes = read_all(fs::path(dir) / file, ok);
    if (!ok) return dir + "/" + file + " is missing";
    if (std::to_string(bytes.size()) != entry->second[1])
      return dir + "/" + file + " is truncated or extended: " + std::to_string(bytes.size()) +
             " bytes, the manifest says " + entry->second[1];
    uint64_t trailer = 0;
    if (bytes.size() >= 8) std::memcpy(&trailer, bytes.data() + bytes.size() - 8, 8);
    uint64_t sum = fnv1a(bytes.data(), bytes.size());
    if (bytes.size() < 8 || fnv1a(bytes.data(), bytes.size() - 8) != trailer)
      return dir + "/" + file + " is corrupt: its checksum does not match its contents";
    if (hex(sum) != entry->second[2])
      return dir + "/" + file + " is not the file the manifest names (checksum " + hex(sum) + ", expected " +
             entry->second[2] + ")";
    std::map<std::string, Whole> found;
    std::string bad = parse_unit(dir + "/" + file, bytes, found);
    if (!bad.empty()) return bad;
    for (Param *p : params) {
      auto t = found.find(p->name);
      if (t == found.end()) return dir + "/" + file + " has no tensor " + p->name;
      if (t->second.dims != p->full)
        return dir + "/" + file + ": " + p->name + " is " + dims_text(t->second.dims) + ", the model's is " +
               dims_text(p->full);
      shard(*p, t->second.w, w[index], c.tp, c.ep, (int)c.cfg->heads);
      shard(*p, t->second.m, m[index], c.tp, c.ep, (int)c.cfg->heads);
      shard(*p, t->second.v, v[index], c.tp, c.ep, (int)c.cfg->heads);
      ++index;
    }
  }
  return "";
}

}  // namespace

std::string load_checkpoint(const CheckpointContext &c, const std::string &dir, int64_t &step, int64_t &adam_steps) {
  std::vector<std::vector<float>> w(c.params.size()), m(c.params.size()), v(c.params.size());
  int64_t s = 0, t = -1;
  std::string why = load_mine(c, dir, s, t, w, m, v);
  double failed = why.empty() ? 0.0 : 1.0;
  int64_t one = 1;
  DLTensor flag{&failed, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, &one, nullptr, 0};
  check(dt_allreduce(c.world, &flag, &flag, DT_MAX, nullptr, nullptr), "dt_allreduce");
  if (!why.empty()) return why;
  if (failed > 0) return "another rank refused the checkpoint in " + dir + " (its message says why)";
  for (size_t i = 0; i < c.params.size(); ++i) {
    c.params[i]->w = std::move(w[i]);
    c.params[i]->m = std::move(m[i]);
    c.params[i]->v = std::move(v[i]);
  }
  step = s;
  adam_steps = t;
  return "";
}

}  // namespace gpt
