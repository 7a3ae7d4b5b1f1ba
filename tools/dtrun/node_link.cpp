#include "node_link.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <vector>

#include "base/error.hpp"

namespace dtrun {

namespace {

const std::string kKey = "dtrun/failure";

}  // namespace

NodeLink::NodeLink(std::string host, int port, std::string token, int node_rank)
    : host_(std::move(host)), port_(port), token_(std::move(token)), node_rank_(node_rank) {
  thread_ = std::thread([this] { watch(); });
}

NodeLink::~NodeLink() {
  stopping_ = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (watcher_) watcher_->abort();
  }
  thread_.join();
}

std::unique_ptr<dtrain::bootstrap::StoreClient> NodeLink::connect(std::chrono::milliseconds timeout) {
  return dtrain::bootstrap::StoreClient::connect(host_, port_, token_, timeout);
}

void NodeLink::watch() {
  using namespace std::chrono_literals;
  try {
    // Short connection attempts, so that stopping is never held up long.
    std::unique_ptr<dtrain::bootstrap::StoreClient> client;
    while (!client && !stopping_) {
      try {
        client = connect(1s);
      } catch (const dtrain::Error& e) {
        if (e.status() != DT_ERR_TIMEOUT) throw;
      }
    }
    if (!client) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      watcher_ = std::move(client);
    }
    while (!stopping_) {
      if (!watcher_->wait_for({kKey}, 1000ms).empty()) continue;
      // "<node> <exit code> <what>"
      std::istringstream value(watcher_->get(kKey).value_or(""));
      int node = -1, exit_code = 1;
      value >> node >> exit_code;
      if (node == node_rank_) return;  // our own failure
      std::string what;
      std::getline(value >> std::ws, what);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        failure_ = RemoteFailure{exit_code, "node " + std::to_string(node) + ": " + what};
      }
      const unsigned char wake = 0;
      (void)!write(wake_fd(), &wake, 1);
      return;
    }
  } catch (const std::exception&) {
    // The store is gone (node 0's job ended) or we were stopped: nothing
    // more can come.
  }
}

void NodeLink::post(int exit_code, const std::string& what) {
  try {
    auto client = connect(std::chrono::seconds(5));
    std::string value = std::to_string(node_rank_) + " " + std::to_string(exit_code) + " " + what;
    client->compare_and_set(kKey, std::nullopt, value);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrun: could not tell the other nodes that %s: %s\n", what.c_str(), e.what());
  }
}

void NodeLink::finished() {
  try {
    connect(std::chrono::seconds(5))->set("dtrun/finished/" + std::to_string(node_rank_), "1");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrun: could not tell the other nodes that node %d finished: %s\n", node_rank_, e.what());
  }
}

void NodeLink::wait_for_nodes(int nnodes, std::chrono::milliseconds timeout) {
  std::vector<std::string> keys;
  for (int node = 0; node < nnodes; ++node) keys.push_back("dtrun/finished/" + std::to_string(node));
  try {
    std::vector<std::string> missing = connect(std::chrono::seconds(5))->wait_for(keys, timeout);
    for (const std::string& key : missing) {
      std::fprintf(stderr, "dtrun: node %s did not finish within %lld s; closing the store anyway\n",
                   key.substr(key.rfind('/') + 1).c_str(), static_cast<long long>(timeout.count() / 1000));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrun: could not learn whether the other nodes finished: %s\n", e.what());
  }
}

std::optional<RemoteFailure> NodeLink::failure() {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

}  // namespace dtrun
