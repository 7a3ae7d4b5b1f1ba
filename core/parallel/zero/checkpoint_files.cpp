#include "parallel/zero/checkpoint_files.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include <openssl/evp.h>

#include "base/error.hpp"
#include "base/log.hpp"

namespace dtrain::parallel::zero {

namespace {

constexpr char kMagic[8] = {'D', 'T', 'Z', 'S', 'H', 'R', 'D', '1'};

struct Header {
  char magic[8];
  std::uint32_t rank;
  std::uint32_t world;
  std::uint32_t state_buffers;
  std::uint32_t reserved;
  std::uint64_t run_count;
};
static_assert(sizeof(Header) == 32, "the shard header has no padding");

template <typename T>
void append(std::string& out, const T* data, std::size_t count) {
  out.append(reinterpret_cast<const char*>(data), count * sizeof(T));
}

// Reads consecutive values out of a shard file, refusing to run past its end.
class Cursor {
 public:
  Cursor(std::string_view bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  template <typename T>
  void read(T* out, std::size_t count) {
    const std::size_t size = count * sizeof(T);
    if (count > bytes_.size() / sizeof(T) || bytes_.size() - offset_ < size) fail("is truncated");
    std::memcpy(out, bytes_.data() + offset_, size);
    offset_ += size;
  }
  bool at_end() const { return offset_ == bytes_.size(); }

  [[noreturn]] void fail(const std::string& what) const {
    raise(DT_ERR_INVALID_ARGUMENT, "checkpoint shard " + path_ + " " + what);
  }

 private:
  std::string_view bytes_;
  const std::string& path_;
  std::size_t offset_ = 0;
};

}  // namespace

std::string metadata_path(const std::string& dir) { return dir + "/metadata"; }

std::string shard_path(const std::string& dir, int rank, const std::string& generation) {
  return dir + "/shard-" + std::to_string(rank) + (generation.empty() ? "" : "-" + generation) + ".bin";
}

std::string new_generation() {
  std::random_device source;
  const std::uint64_t value = (std::uint64_t{source()} << 32) ^ source();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

namespace {

// Whether `name` is a shard file (shard-<rank>[-<generation>].bin), and of
// the given generation.
bool is_shard(const std::string& name) { return name.starts_with("shard-") && name.ends_with(".bin"); }
bool of_generation(const std::string& name, const std::string& generation) {
  std::size_t end = 6;  // after "shard-"
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])) != 0) ++end;
  return end > 6 && name.substr(end) == (generation.empty() ? "" : "-" + generation) + ".bin";
}

}  // namespace

int remove_stale_files(const std::string& dir, const std::string& generation) {
  int removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const bool shard = is_shard(name) && !of_generation(name, generation);
    const bool temporary = name.starts_with("metadata.tmp-");
    if (!shard && !temporary) continue;
    std::error_code failure;
    if (std::filesystem::remove(entry.path(), failure)) {
      ++removed;
    } else if (failure) {
      DT_LOG(warn) << "checkpoint " << dir << ": cannot remove stale file " << name << ": " << failure.message();
    }
  }
  return removed;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    raise(DT_ERR_INTERNAL, "OpenSSL SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(DT_ERR_INVALID_ARGUMENT, "cannot read checkpoint file " + path + ": " + std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) raise(DT_ERR_INVALID_ARGUMENT, "cannot read checkpoint file " + path);
  return content.str();
}

std::string encode_shard(const ShardData& shard) {
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.rank = static_cast<std::uint32_t>(shard.rank);
  header.world = static_cast<std::uint32_t>(shard.world);
  header.state_buffers = static_cast<std::uint32_t>(shard.state_buffers);
  header.run_count = shard.runs.size();

  std::string out;
  append(out, &header, 1);
  for (const ElementRun& run : shard.runs) {
    const std::int64_t words[2] = {run.first, run.count};
    append(out, words, 2);
  }
  append(out, shard.weights.data(), shard.weights.size());
  for (const auto& buffer : shard.state) append(out, buffer.data(), buffer.size());
  return out;
}

ShardData decode_shard(std::string_view bytes, const std::string& path, int rank, int world, int state_buffers,
                       const ShardRecord& expected) {
  Cursor cursor(bytes, path);
  if (static_cast<std::int64_t>(bytes.size()) != expected.bytes) {
    cursor.fail("has " + std::to_string(bytes.size()) + " bytes where the metadata says " +
                std::to_string(expected.bytes) + " (truncated or from another checkpoint)");
  }
  if (sha256_hex(bytes) != expected.sha256) {
    cursor.fail("does not match the checksum in the metadata (corrupt or from another checkpoint)");
  }

  Header header{};
  cursor.read(&header, 1);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) cursor.fail("is not a libdtrain shard file");
  if (header.rank != static_cast<std::uint32_t>(rank) || header.world != static_cast<std::uint32_t>(world) ||
      header.state_buffers != static_cast<std::uint32_t>(state_buffers) || header.run_count != expected.runs.size()) {
    cursor.fail("describes another shard than the metadata lists");
  }

  ShardData shard;
  shard.rank = rank;
  shard.world = world;
  shard.state_buffers = state_buffers;
  std::int64_t total = 0;
  for (std::uint64_t k = 0; k < header.run_count; ++k) {
    std::int64_t words[2];
    cursor.read(words, 2);
    const ElementRun run{words[0], words[1]};
    if (!(run == expected.runs[k])) cursor.fail("lists other elements than the metadata");
    shard.runs.push_back(run);
    total += run.count;
  }
  shard.weights.resize(static_cast<std::size_t>(total));
  cursor.read(shard.weights.data(), shard.weights.size());
  shard.state.assign(static_cast<std::size_t>(state_buffers), std::vector<float>(static_cast<std::size_t>(total)));
  for (auto& buffer : shard.state) cursor.read(buffer.data(), buffer.size());
  if (!cursor.at_end()) cursor.fail("has bytes after its data");
  return shard;
}

}  // namespace dtrain::parallel::zero
