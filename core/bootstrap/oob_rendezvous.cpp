#include "bootstrap/oob_rendezvous.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "base/error.hpp"
#include "bootstrap/rank_list.hpp"

namespace dtrain::bootstrap {

namespace {

constexpr std::size_t kHeaderBytes = 16;  // length u64, key hash u64

// FNV-1a: only needs to tell keys apart, not resist an adversary (every
// rank is part of the same job).
std::uint64_t key_hash(const std::string& key) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void put_u64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

OobRendezvous::OobRendezvous(int rank, int size, dt_oob_allgather_fn fn, void* user)
    : rank_(rank), size_(size), fn_(fn), user_(user) {
  if (fn == nullptr) raise(DT_ERR_INVALID_ARGUMENT, "the out-of-band allgather callback is NULL");
  if (size < 1 || rank < 0 || rank >= size) {
    raise(DT_ERR_INVALID_ARGUMENT, "out-of-band rendezvous: rank " + std::to_string(rank) + " is not in a world of " +
                                       std::to_string(size));
  }
}

void OobRendezvous::call(const std::string& key, const char* step, const void* send, void* recv, std::size_t bytes) {
  dt_status status = fn_(user_, send, recv, bytes);
  if (status == DT_OK) return;
  std::string message = "the out-of-band allgather callback returned status " + std::to_string(status) + " (" +
                        step + " of rendezvous '" + key + "', rank " + std::to_string(rank_) + " of " +
                        std::to_string(size_) + ")";
  raise(status < 0 ? status : DT_ERR_REMOTE, message);
}

std::vector<std::string> OobRendezvous::allgather(const std::string& key, const std::string& local) {
  const auto n = static_cast<std::size_t>(size_);
  const std::uint64_t hash = key_hash(key);

  unsigned char header[kHeaderBytes];
  put_u64(header, local.size());
  put_u64(header + 8, hash);
  std::vector<unsigned char> headers(n * kHeaderBytes);
  call(key, "exchanging lengths", header, headers.data(), kHeaderBytes);

  std::vector<std::size_t> lengths(n);
  std::vector<int> strangers;
  std::size_t longest = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const unsigned char* h = headers.data() + r * kHeaderBytes;
    std::uint64_t length = get_u64(h);
    if (get_u64(h + 8) != hash) strangers.push_back(static_cast<int>(r));
    if (length > std::numeric_limits<std::size_t>::max() / n) {
      raise(DT_ERR_MISMATCH, "out-of-band rendezvous '" + key + "': rank " + std::to_string(r) +
                                 " announced a contribution of " + std::to_string(length) + " bytes");
    }
    lengths[r] = static_cast<std::size_t>(length);
    longest = std::max(longest, lengths[r]);
  }
  if (!strangers.empty()) {
    raise(DT_ERR_MISMATCH, "out-of-band rendezvous '" + key + "': " + describe_ranks(strangers, size_) +
                               " joined a different exchange at the same time");
  }
  if (lengths[static_cast<std::size_t>(rank_)] != local.size()) {
    raise(DT_ERR_REMOTE, "out-of-band rendezvous '" + key +
                             "': the allgather callback did not put this rank's length in its place");
  }

  std::vector<std::string> all(n);
  if (longest == 0) return all;  // every rank sees the same lengths, so every rank stops here

  std::vector<char> padded;
  std::vector<char> gathered;
  try {
    padded.assign(longest, '\0');
    gathered.assign(longest * n, '\0');
  } catch (const std::bad_alloc&) {
    raise(DT_ERR_OUT_OF_MEMORY, "out-of-band rendezvous '" + key + "': cannot hold " + std::to_string(n) +
                                    " contributions of " + std::to_string(longest) + " bytes");
  }
  if (!local.empty()) std::memcpy(padded.data(), local.data(), local.size());
  call(key, "exchanging contributions", padded.data(), gathered.data(), longest);
  for (std::size_t r = 0; r < n; ++r) all[r].assign(gathered.data() + r * longest, lengths[r]);
  return all;
}

}  // namespace dtrain::bootstrap
