#include "bootstrap/store_rendezvous.hpp"

#include <charconv>

#include "base/error.hpp"
#include "base/log.hpp"
#include "bootstrap/deadline.hpp"
#include "bootstrap/rank_list.hpp"

namespace dtrain::bootstrap {

namespace {

std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

bool is_loopback_name(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

std::unique_ptr<StoreRendezvous> StoreRendezvous::open(const Options& options) {
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size) {
    raise(DT_ERR_INVALID_ARGUMENT, "store rendezvous: rank " + std::to_string(options.rank) +
                                       " is not in a world of " + std::to_string(options.size));
  }
  std::unique_ptr<StoreServer> server;
  std::string host = options.store.host;
  int port = options.store.port;
  if (options.rank0_hosts && options.rank == 0) {
    server = std::make_unique<StoreServer>("", options.store.port, options.token, options.limits);
    if (!server->wildcard() && is_loopback_name(server->local_host()) && !is_loopback_name(options.store.host)) {
      DT_LOG(warn) << "rank 0 runs the rendezvous store on " << server->address() << " but the job's store address is "
                   << options.store.to_string()
                   << "; ranks on other hosts cannot reach it: set DTRAIN_STORE_BIND on rank 0 to that address";
    }
    // Rank 0 reaches its own store wherever it listens, whatever name the others use.
    host = server->local_host();
    port = server->port();
  }
  auto client = StoreClient::connect(host, port, options.token, options.timeout);
  auto rdzv = std::make_unique<StoreRendezvous>(std::shared_ptr<StoreClient>(std::move(client)), options.rank,
                                                options.size, options.timeout, options.prefix);
  rdzv->server_ = std::move(server);
  rdzv->rank0_hosts_ = options.rank0_hosts;
  return rdzv;
}

StoreRendezvous::StoreRendezvous(std::shared_ptr<StoreClient> client, int rank, int size,
                                 std::chrono::milliseconds timeout, std::string prefix)
    : client_(std::move(client)), rank_(rank), size_(size), timeout_(timeout), prefix_(std::move(prefix)) {
  if (!client_) raise(DT_ERR_INVALID_ARGUMENT, "store rendezvous: the client is null");
  if (size < 1 || rank < 0 || rank >= size) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "store rendezvous: rank " + std::to_string(rank) + " is not in a world of " + std::to_string(size));
  }
  if (timeout.count() <= 0) raise(DT_ERR_INVALID_ARGUMENT, "store rendezvous: the timeout is not positive");
}

StoreRendezvous::~StoreRendezvous() {
  // The client goes first so that its connection closes before the store stops.
  client_.reset();
  server_.reset();
}

std::vector<std::string> StoreRendezvous::allgather(const std::string& key, const std::string& local) {
  if (key.empty()) raise(DT_ERR_INVALID_ARGUMENT, "store rendezvous: the exchange's key is empty");
  const Deadline deadline = Deadline::after(timeout_);
  const std::string base = prefix_ + key + "/";
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) keys.push_back(base + std::to_string(r));

  client_->set(keys[static_cast<std::size_t>(rank_)], local);

  std::vector<std::string> missing = client_->wait_for(keys, deadline.remaining());
  if (!missing.empty()) {
    std::vector<int> ranks;
    for (const std::string& k : missing) {
      int r = -1;
      const char* first = k.data() + base.size();
      std::from_chars(first, k.data() + k.size(), r);
      ranks.push_back(r);
    }
    raise(DT_ERR_TIMEOUT, "rendezvous '" + key + "' through the store at " + client_->address() + " timed out after " +
                              ms_text(timeout_) + ": no contribution from " + describe_ranks(ranks, size_));
  }

  std::vector<std::optional<std::string>> values = client_->get(keys);
  std::vector<std::string> all;
  all.reserve(values.size());
  for (int r = 0; r < size_; ++r) {
    auto& v = values[static_cast<std::size_t>(r)];
    if (!v) {
      raise(DT_ERR_INVALID_USAGE, "rendezvous '" + key + "': the contribution of rank " + std::to_string(r) +
                                      " vanished before it was read; is the key used twice in this job?");
    }
    all.push_back(std::move(*v));
  }

  // Tidy up: the last rank to finish reading removes the exchange's keys.
  const std::string done = base + "done";
  const std::string complete = base + "complete";
  std::int64_t finished = client_->add(done, 1);
  if (finished == size_) {
    std::vector<std::string> spent = keys;
    spent.push_back(done);
    client_->remove(spent);
    if (rank0_hosts_ && rank_ != 0) client_->set(complete, "");
  } else if (server_) {
    std::vector<std::string> unconfirmed = client_->wait_for({complete}, deadline.remaining());
    if (!unconfirmed.empty()) {
      std::string count = client_->get(done).value_or("?");
      raise(DT_ERR_TIMEOUT, "rendezvous '" + key + "': only " + count + " of " + std::to_string(size_) +
                                " ranks had read every contribution after " + ms_text(timeout_) +
                                "; rank 0 keeps the store it runs until they have");
    }
    client_->remove(complete);
  }
  return all;
}

}  // namespace dtrain::bootstrap
