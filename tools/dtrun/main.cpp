// dtrun: starts the ranks of a libdtrain job on this machine.
#include <sys/random.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bootstrap/store/store_server.hpp"
#include "cli.hpp"
#include "rank_process.hpp"
#include "supervisor.hpp"

namespace {

// A fresh secret for the job: 32 random bytes as hex.
std::string random_token() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) throw std::runtime_error("getrandom failed");
    got += static_cast<std::size_t>(n);
  }
  static const char hex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += hex[b >> 4];
    token += hex[b & 15];
  }
  return token;
}

int run(const dtrun::Options& options) {
  const char* given_token = std::getenv("DTRAIN_AUTH_TOKEN");
  const std::string token = given_token && *given_token ? given_token : random_token();

  // Host the store unless the job uses an external one. It lives as long as
  // the job: ranks may use it after start-up (splits, checkpoints).
  std::unique_ptr<dtrain::bootstrap::StoreServer> store;
  std::string store_address;
  if (options.store) {
    store_address = *options.store;
  } else {
    store = std::make_unique<dtrain::bootstrap::StoreServer>("", 0, token);
    store_address = store->address();
  }

  dtrun::install_signal_handlers();
  std::vector<dtrun::RankProcess> ranks;
  for (int rank = 0; rank < options.ranks; ++rank) {
    std::vector<std::string> env = {
        "DTRAIN_RANK=" + std::to_string(rank),
        "DTRAIN_WORLD_SIZE=" + std::to_string(options.ranks),
        "DTRAIN_LOCAL_RANK=" + std::to_string(rank),
        "DTRAIN_LOCAL_WORLD_SIZE=" + std::to_string(options.ranks),
        "DTRAIN_STORE=" + store_address,
        "DTRAIN_AUTH_TOKEN=" + token,
        // Output goes through a pipe; keep Python's line by line.
        "PYTHONUNBUFFERED=1",
    };
    if (options.timeout_seconds) {
      env.push_back("DTRAIN_TIMEOUT_MS=" + std::to_string(*options.timeout_seconds * 1000LL));
    }
    ranks.push_back(dtrun::spawn_rank(rank, options.command, env, options.tag_output));
  }
  int status = dtrun::supervise(ranks, options.grace_seconds);
  if (store) store->stop();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  dtrun::Options options = dtrun::parse_command_line(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrun: %s\n", e.what());
    return 1;
  }
}
