// A client of the rendezvous store (store_server.hpp).
//
//   auto client = StoreClient::connect("127.0.0.1", 29500, token, std::chrono::seconds(300));
//   client->set("nccl/uid", uid);
//   client->wait({"nccl/uid"}, std::chrono::seconds(300));
//   std::optional<std::string> uid = client->get("nccl/uid");
//
// Every call is bounded: `timeout` given to connect() (changed with
// set_timeout()) bounds each call, and wait() has its own. Errors are
// dtrain::Error with
//   DT_ERR_TIMEOUT           the deadline passed (the message says what was awaited),
//   DT_ERR_AUTH              the store refused this process's token, or could not prove it has it,
//   DT_ERR_TRANSPORT         the connection failed or dropped; the client is unusable afterwards,
//   DT_ERR_INVALID_ARGUMENT  an empty or oversized key or value (the store's limits are
//                            learnt at connect), refused before anything is sent,
//   DT_ERR_OUT_OF_MEMORY     the store is full (its key or byte limit),
//   DT_ERR_INVALID_USAGE     add() on a key that does not hold a counter,
//   DT_ERR_ABORTED           abort() was called.
// A wait whose keys did not all come in time leaves the client usable. Any
// other DT_ERR_TIMEOUT (the store did not answer in time) or DT_ERR_TRANSPORT
// leaves it unusable: every later call fails with DT_ERR_TRANSPORT, since a
// late reply could otherwise be taken for the answer to the next request.
//
// One call at a time runs; calls from several threads are serialised.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::bootstrap {

struct CasResult {
  bool swapped = false;
  std::optional<std::string> value;  // what the key holds afterwards; nullopt: absent
};

class StoreClient {
 public:
  // Connects to the store at host:port and authenticates with `token`. It
  // retries, with exponential backoff (10 ms doubling up to 1 s, each pause
  // drawn between half and all of that so that ranks spread out) until
  // `timeout` has passed, whenever the attempt may succeed later: nothing
  // listens there yet (the host rank may start later), the store is at its
  // limit of authenticated connections (it answers DT_ERR_OUT_OF_MEMORY
  // instead of its challenge), or the connection drops during the handshake
  // (a store under a flood of connections pushes out the oldest handshakes).
  // Then it throws DT_ERR_TIMEOUT naming the address, the number of attempts
  // and the last error. A store that refuses the token gives DT_ERR_AUTH at
  // once, as does a server that cannot prove it knows the token.
  static std::unique_ptr<StoreClient> connect(const std::string& host, int port, const std::string& token,
                                              std::chrono::milliseconds timeout);
  ~StoreClient();

  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  void set(std::string_view key, std::string_view value);
  // nullopt when the key is absent.
  std::optional<std::string> get(std::string_view key);
  // Several keys in as few round trips as frames allow; in the order asked.
  std::vector<std::optional<std::string>> get(const std::vector<std::string>& keys);
  // Adds to a counter (decimal text; an absent key counts from 0), atomically; returns the sum.
  std::int64_t add(std::string_view key, std::int64_t delta);
  // Sets `desired` if the key holds `expected` (nullopt: if it is absent), atomically.
  CasResult compare_and_set(std::string_view key, std::optional<std::string_view> expected,
                            std::string_view desired);
  // Waits until every key has been set, at most `timeout`; returns the keys
  // still missing then (empty: all there). Zero `timeout` only checks.
  std::vector<std::string> wait_for(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // wait_for that throws DT_ERR_TIMEOUT naming the missing keys.
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Returns whether the key was there.
  bool remove(std::string_view key);
  // Returns how many of the keys were there.
  std::size_t remove(const std::vector<std::string>& keys);
  // Keys in the store.
  std::size_t count();

  // Makes a call running in another thread, and every later call, fail with
  // DT_ERR_ABORTED. Safe from any thread; never blocks.
  void abort();

  std::chrono::milliseconds timeout() const;
  void set_timeout(std::chrono::milliseconds timeout);
  // "host:port" as given to connect().
  const std::string& address() const;
  // The store's limits, as it announced them.
  std::size_t max_key_bytes() const;
  std::size_t max_value_bytes() const;

 private:
  struct Impl;
  explicit StoreClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dtrain::bootstrap
