#include "bootstrap/store/store_server.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/env.hpp"
#include "base/error.hpp"
#include "base/log.hpp"
#include "bootstrap/store/auth.hpp"
#include "bootstrap/store/kv_table.hpp"
#include "bootstrap/store/protocol.hpp"
#include "bootstrap/store/refusal_log.hpp"
#include "bootstrap/store/socket.hpp"
#include "bootstrap/store/wire.hpp"

namespace dtrain::bootstrap {

namespace {

using Clock = std::chrono::steady_clock;

// Longer waits are cut to this, which keeps deadline arithmetic from overflowing.
constexpr std::chrono::hours kMaxWait{24 * 7};
// How long a refused client has to read the error before it is closed.
constexpr std::chrono::milliseconds kLinger{1000};
// How long accepting pauses when the process runs out of descriptors.
constexpr std::chrono::milliseconds kAcceptPause{100};
constexpr int kBacklog = 1024;
// Connections accepted per turn of the loop, so that a flood of new ones
// cannot keep the clients already connected (and the handshake answers
// they have sent) from being served.
constexpr int kAcceptBatch = 64;
// Descriptors the process needs beside the store's connections: the
// listener, the wake-up eventfd, and whatever else the host program has open.
constexpr std::size_t kSpareDescriptors = 64;
constexpr std::size_t kReadChunk = 64 * 1024;

struct Client {
  net::Fd fd;
  std::string peer;
  bool authenticated = false;
  std::string nonce;
  Clock::time_point handshake_deadline;

  // Set when the connection is to end: no more reading, and closed once
  // `out` has been sent or `close_at` has passed.
  bool closing = false;
  Clock::time_point close_at;
  bool dead = false;

  std::string in;
  std::string out;
  std::size_t out_sent = 0;

  // A parked wait: the keys still missing, and the order they were asked in.
  bool parked = false;
  std::vector<std::string> wait_keys;
  std::unordered_set<std::string> missing;
  Clock::time_point wait_deadline;

  std::size_t pending_out() const { return out.size() - out_sent; }
};

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

std::string default_store_bind_host() { return env::get("DTRAIN_STORE_BIND").value_or("127.0.0.1"); }

struct StoreServer::Impl {
  Impl(const std::string& host, int port, std::string token_in, const StoreLimits& limits_in)
      : token(std::move(token_in)), limits(limits_in), table(limits_in) {
    check_store_limits(limits);
    if (token.empty()) {
      raise(DT_ERR_INVALID_ARGUMENT,
            "the rendezvous store needs the job's auth token (dt_comm_options.auth_token or DTRAIN_AUTH_TOKEN); "
            "it is empty");
    }
    if (port < 0 || port > 65535) {
      raise(DT_ERR_INVALID_ARGUMENT, "store port " + std::to_string(port) + " is not in 0..65535");
    }
    const bool from_env = host.empty();
    const std::string bind_host = from_env ? default_store_bind_host() : host;
    listener = net::listen_tcp(bind_host, port, kBacklog);
    bound_port = net::local_port(listener.get());
    bound_address = net::local_address(listener.get());
    is_wildcard = net::bound_to_wildcard(listener.get());
    connect_host = net::local_connect_host(listener.get());
    if (is_wildcard) {
      DT_LOG(warn) << "the rendezvous store listens on every interface (" << bound_address << ") because "
                   << (from_env ? "DTRAIN_STORE_BIND=" : "it was asked to bind to ") << bind_host
                   << "; any host that can reach this port may try to connect (clients still need the auth token)";
    }
    wake.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake.valid()) raise(DT_ERR_TRANSPORT, "the rendezvous store cannot create an eventfd: " + errno_text(errno));
    key_limits = wire::KeyLimits{limits.max_key_bytes, limits.max_value_bytes};
    refusals = std::make_unique<RefusalLog>(bound_address, limits.refusal_log_period);
    const std::size_t wanted = limits.max_connections + limits.max_handshakes + kSpareDescriptors;
    const std::size_t allowed = net::raise_descriptor_limit(wanted);
    if (allowed < wanted) {
      DT_LOG(info) << "the rendezvous store at " << bound_address << " would serve " << limits.max_connections
                   << " clients and " << limits.max_handshakes << " handshakes, but this process may open only "
                   << allowed << " descriptors; when they run out it drops the oldest handshake";
    }
    thread = std::thread([this] { serve(); });
    DT_LOG(info) << "rendezvous store listening on " << bound_address;
  }

  // Serving thread -----------------------------------------------------------

  void serve() {
    try {
      loop();
    } catch (const std::exception& e) {
      DT_LOG(error) << "the rendezvous store at " << bound_address << " stopped serving: " << e.what();
    }
    refusals->flush(Clock::now());
    clients.clear();
    authenticated = 0;
    handshaking = 0;
    listener.reset();
    publish_counts();
  }

  void loop() {
    std::vector<pollfd> fds;
    std::vector<Client*> owners;
    while (!stopping.load(std::memory_order_acquire)) {
      fds.clear();
      owners.clear();
      fds.push_back({wake.get(), POLLIN, 0});
      const bool accepting = Clock::now() >= accept_resume;
      if (accepting) fds.push_back({listener.get(), POLLIN, 0});
      const std::size_t first_client = fds.size();
      for (auto& c : clients) {
        short events = POLLRDHUP;
        if (wants_read(*c)) events |= POLLIN;
        if (c->pending_out() > 0) events |= POLLOUT;
        fds.push_back({c->fd.get(), events, 0});
        owners.push_back(c.get());
      }

      int rc = poll(fds.data(), fds.size(), next_timer_ms());
      if (rc < 0) {
        if (errno == EINTR) continue;
        raise(DT_ERR_TRANSPORT, "poll failed: " + errno_text(errno));
      }
      if (fds[0].revents != 0) {
        std::uint64_t count = 0;
        (void)!read(wake.get(), &count, sizeof count);
      }
      // Clients first: a handshake answer that has arrived is read before
      // new connections could push its connection out.
      for (std::size_t i = first_client; i < fds.size(); ++i) {
        Client& c = *owners[i - first_client];
        short revents = fds[i].revents;
        if (revents == 0 || c.dead) continue;
        if (revents & POLLERR) {
          drop(c, "connection error");
          continue;
        }
        if (revents & POLLIN) {
          read_from(c);
        } else if (revents & (POLLHUP | POLLRDHUP)) {
          drop(c, "closed the connection");
          continue;
        }
        if (!c.dead && (revents & POLLOUT)) {
          flush(c);
          // Frames held back while the client's replies piled up can go now.
          if (!c.dead && !c.in.empty()) process(c);
        }
      }
      if (accepting && (fds[1].revents & POLLIN)) accept_batch();
      run_woken();
      expire(Clock::now());
      clients.remove_if([](const std::unique_ptr<Client>& c) { return c->dead; });
      publish_counts();
    }
  }

  void publish_counts() {
    open_handshakes.store(handshaking, std::memory_order_release);
    open_connections.store(handshaking + authenticated, std::memory_order_release);
  }

  std::size_t max_body(const Client& c) const {
    return c.authenticated ? limits.max_frame_bytes : wire::kMaxHandshakeBody;
  }

  // Backpressure: a client that does not read its replies gets no more served.
  bool backed_up(const Client& c) const { return c.pending_out() > 2 * limits.max_frame_bytes; }

  bool wants_read(const Client& c) const {
    return !c.closing && !backed_up(c) && c.in.size() < wire::kHeaderBytes + max_body(c);
  }

  int next_timer_ms() const {
    Clock::time_point next = refusals->next_due();
    if (Clock::now() < accept_resume) next = std::min(next, accept_resume);
    for (const auto& c : clients) {
      if (c->closing) next = std::min(next, c->close_at);
      else if (!c->authenticated) next = std::min(next, c->handshake_deadline);
      if (c->parked) next = std::min(next, c->wait_deadline);
    }
    if (next == Clock::time_point::max()) return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1000 * 3600));
  }

  void accept_batch() {
    for (int accepted = 0; accepted < kAcceptBatch;) {
      sockaddr_storage address{};
      socklen_t length = sizeof address;
      int fd = accept4(listener.get(), reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK) return;
        if (err == EINTR || err == ECONNABORTED) continue;
        if ((err == EMFILE || err == ENFILE) &&
            drop_oldest_handshake("dropped to make room: the process ran out of descriptors")) {
          continue;
        }
        DT_LOG(error) << "the rendezvous store at " << bound_address << " cannot accept connections: "
                      << errno_text(err) << "; retrying in " << kAcceptPause.count() << " ms";
        accept_resume = Clock::now() + kAcceptPause;
        return;
      }
      ++accepted;
      net::Fd owned(fd);
      std::string peer = net::describe(reinterpret_cast<sockaddr*>(&address), length);
      if (authenticated >= limits.max_connections) {
        refusals->record(full_kind(), "refused a connection from " + peer + ": " + full_text(), Clock::now());
        std::string frame = wire::encode_error(DT_ERR_OUT_OF_MEMORY, full_text());
        // A fresh socket has room for this small frame; if not, closing says enough.
        (void)!send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        continue;
      }
      if (handshaking >= limits.max_handshakes) {
        drop_oldest_handshake("dropped to make room for newer connections (" +
                              std::to_string(limits.max_handshakes) + " handshakes at once)");
      }
      auto c = std::make_unique<Client>();
      c->fd = std::move(owned);
      c->peer = std::move(peer);
      c->nonce = auth::random_nonce();
      c->handshake_deadline = Clock::now() + limits.handshake_timeout;
      net::set_nodelay(c->fd.get());
      DT_LOG(debug) << "rendezvous store: connection from " << c->peer;
      ++handshaking;
      clients.push_back(std::move(c));
      queue(*clients.back(), wire::encode_frame(wire::Op::challenge, {clients.back()->nonce}));
      flush(*clients.back());
    }
  }

  // What a client refused for want of a slot is told, and how the log counts it.
  std::string full_text() const {
    return "the store serves its limit of " + std::to_string(limits.max_connections) +
           " authenticated connections; retry later";
  }
  std::string full_kind() const {
    return "refused at the limit of " + std::to_string(limits.max_connections) + " authenticated connections";
  }

  // Drops the connection that has waited longest in its handshake; false
  // when there is none.
  bool drop_oldest_handshake(const std::string& kind) {
    for (auto& owned : clients) {
      Client& c = *owned;
      if (c.dead || c.authenticated) continue;
      refusals->record(kind, c.peer + " " + kind, Clock::now());
      drop(c, "");
      return true;
    }
    return false;
  }

  void read_from(Client& c) {
    char buffer[kReadChunk];
    while (wants_read(c)) {
      std::size_t room = wire::kHeaderBytes + max_body(c) - c.in.size();
      ssize_t n = recv(c.fd.get(), buffer, std::min(room, sizeof buffer), 0);
      if (n > 0) {
        c.in.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) {
        drop(c, "closed the connection");
        return;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      drop(c, errno_text(errno));
      return;
    }
    process(c);
  }

  // Handles the complete frames in c.in, in order, until the client parks,
  // ends or backs up.
  void process(Client& c) {
    std::size_t offset = 0;
    while (!c.dead && !c.closing && !c.parked && !backed_up(c)) {
      wire::Frame frame;
      auto result = wire::parse_frame(reinterpret_cast<const std::uint8_t*>(c.in.data()) + offset,
                                      c.in.size() - offset, max_body(c), &frame);
      if (result.status == wire::ParseStatus::incomplete) break;
      if (result.status == wire::ParseStatus::invalid) {
        reject(c, DT_ERR_TRANSPORT, "malformed frame: " + result.error, "sent a malformed frame");
        break;
      }
      handle(c, frame);
      offset += result.frame_bytes;
    }
    if (!c.dead) {
      c.in.erase(0, offset);
      flush(c);
    }
  }

  void handle(Client& c, const wire::Frame& frame) {
    if (!c.authenticated) {
      authenticate(c, frame);
      return;
    }
    wire::Request request;
    try {
      request = wire::decode_request(frame, key_limits);
    } catch (const wire::ProtocolError& e) {
      reject(c, DT_ERR_TRANSPORT, std::string("malformed request: ") + e.what(), "sent a malformed frame");
      return;
    }
    try {
      execute(c, request);
    } catch (const Error& e) {
      queue(c, wire::encode_error(e.status(), e.what()));
    } catch (const std::bad_alloc&) {
      queue(c, wire::encode_error(DT_ERR_OUT_OF_MEMORY, "the store ran out of memory"));
    }
  }

  void authenticate(Client& c, const wire::Frame& frame) {
    wire::AuthAnswer answer;
    try {
      answer = wire::decode_auth(frame);
    } catch (const wire::ProtocolError& e) {
      reject(c, DT_ERR_AUTH, std::string("authentication failed: ") + e.what(), "failed authentication");
      return;
    }
    std::string expected = auth::client_proof(token, c.nonce, answer.client_nonce);
    if (!auth::equal_constant_time(expected, answer.proof)) {
      reject(c, DT_ERR_AUTH,
             "authentication failed: the client's auth token does not match the store's (give every rank the "
             "job's token in DTRAIN_AUTH_TOKEN or dt_comm_options.auth_token)",
             "failed authentication");
      return;
    }
    // Clients that authenticate at once can outnumber the slots left when
    // their connections came; the late ones are refused as if they had come
    // when the store was full, and retry.
    if (authenticated >= limits.max_connections) {
      reject(c, DT_ERR_OUT_OF_MEMORY, full_text(), full_kind());
      return;
    }
    c.authenticated = true;
    --handshaking;
    ++authenticated;
    std::string proof = auth::server_proof(token, c.nonce, answer.client_nonce);
    std::string key = wire::encode_u64(limits.max_key_bytes);
    std::string value = wire::encode_u64(limits.max_value_bytes);
    std::string frame_limit = wire::encode_u64(limits.max_frame_bytes);
    queue(c, wire::encode_frame(wire::Op::welcome, {proof, key, value, frame_limit}));
    DT_LOG(debug) << "rendezvous store: " << c.peer << " authenticated";
  }

  void execute(Client& c, const wire::Request& r) {
    using wire::Op;
    switch (r.op) {
      case Op::set: {
        bool created = table.set(r.keys[0], r.value);
        queue(c, wire::encode_frame(Op::reply, {}));
        if (created) key_created(r.keys[0]);
        break;
      }
      case Op::get:
        queue(c, get_reply(r.keys));
        break;
      case Op::add: {
        bool created = false;
        std::int64_t sum = table.add(r.keys[0], r.delta, &created);
        queue(c, wire::encode_frame(Op::reply, {wire::encode_i64(sum)}));
        if (created) key_created(r.keys[0]);
        break;
      }
      case Op::compare_and_set: {
        auto outcome = table.compare_and_set(
            r.keys[0], r.has_expected ? std::optional<std::string_view>(r.expected) : std::nullopt, r.value);
        std::string swapped = wire::encode_u8(outcome.swapped ? 1 : 0);
        std::string present = wire::encode_u8(outcome.value ? 1 : 0);
        queue(c, wire::encode_frame(Op::reply, {swapped, present, outcome.value.value_or("")}));
        if (outcome.created) key_created(r.keys[0]);
        break;
      }
      case Op::wait:
        start_wait(c, r);
        break;
      case Op::remove: {
        std::uint64_t removed = 0;
        for (std::string_view key : r.keys) removed += table.remove(key) ? 1 : 0;
        queue(c, wire::encode_frame(Op::reply, {wire::encode_u64(removed)}));
        break;
      }
      case Op::count:
        queue(c, wire::encode_frame(Op::reply, {wire::encode_u64(table.size())}));
        break;
      default:
        raise(DT_ERR_INTERNAL, "unexpected request");
    }
  }

  // Answers as many of `keys` as fit in one frame, at least one.
  std::string get_reply(const std::vector<std::string_view>& keys) {
    std::string present;
    std::vector<std::string_view> values;
    std::size_t body = wire::kFieldHeaderBytes;
    for (std::string_view key : keys) {
      const std::string* value = table.find(key);
      std::size_t size = value ? value->size() : 0;
      std::size_t need = 1 + wire::kFieldHeaderBytes + size;
      if (!values.empty() && body + need > limits.max_frame_bytes) break;
      body += need;
      present.push_back(value ? '\1' : '\0');
      values.push_back(value ? std::string_view(*value) : std::string_view());
    }
    std::vector<std::string_view> fields;
    fields.reserve(values.size() + 1);
    fields.push_back(present);
    fields.insert(fields.end(), values.begin(), values.end());
    return wire::encode_frame(wire::Op::reply, fields);
  }

  void start_wait(Client& c, const wire::Request& r) {
    std::vector<std::string_view> absent;
    for (std::string_view key : r.keys) {
      if (table.find(key) == nullptr) absent.push_back(key);
    }
    if (absent.empty() || r.timeout_ms == 0) {
      queue(c, wire::encode_frame(wire::Op::reply, absent));
      return;
    }
    c.parked = true;
    c.wait_keys.assign(absent.begin(), absent.end());
    c.missing = std::unordered_set<std::string>(c.wait_keys.begin(), c.wait_keys.end());
    const auto longest = static_cast<std::uint64_t>(std::chrono::milliseconds(kMaxWait).count());
    c.wait_deadline = Clock::now() + std::chrono::milliseconds(std::min(r.timeout_ms, longest));
  }

  // Ends c's parked wait, answering with the keys still missing.
  void finish_wait(Client& c) {
    std::vector<std::string_view> still_missing;
    for (const std::string& key : c.wait_keys) {
      if (c.missing.count(key) != 0) still_missing.push_back(key);
    }
    queue(c, wire::encode_frame(wire::Op::reply, still_missing));
    c.parked = false;
    c.wait_keys.clear();
    c.missing.clear();
    woken.push_back(&c);
  }

  void key_created(std::string_view key) {
    std::string k(key);
    for (auto& other : clients) {
      Client& w = *other;
      if (!w.parked || w.dead) continue;
      if (w.missing.erase(k) != 0 && w.missing.empty()) finish_wait(w);
    }
  }

  // Sends the replies of woken waiters and serves the frames they queued
  // behind their wait; serving them may wake more.
  void run_woken() {
    while (!woken.empty()) {
      Client* c = woken.back();
      woken.pop_back();
      if (!c->dead) process(*c);
    }
  }

  void expire(Clock::time_point now) {
    for (auto& owned : clients) {
      Client& c = *owned;
      if (c.dead) continue;
      if (c.closing) {
        if (now >= c.close_at) drop(c, "");
      } else if (!c.authenticated && now >= c.handshake_deadline) {
        const std::string kind =
            "did not authenticate within " + std::to_string(limits.handshake_timeout.count()) + " ms";
        refusals->record(kind, "dropped " + c.peer + ": it " + kind, now);
        drop(c, "");
      } else if (c.parked && now >= c.wait_deadline) {
        finish_wait(c);
      }
    }
    run_woken();
    refusals->tick(now);
  }

  void queue(Client& c, std::string frame) {
    if (c.out_sent == c.out.size()) {
      c.out = std::move(frame);
      c.out_sent = 0;
    } else {
      c.out += frame;
    }
  }

  void flush(Client& c) {
    while (c.pending_out() > 0) {
      ssize_t n = send(c.fd.get(), c.out.data() + c.out_sent, c.pending_out(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out_sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      drop(c, n < 0 ? errno_text(errno) : "send failed");
      return;
    }
    if (c.pending_out() == 0) {
      c.out.clear();
      c.out_sent = 0;
      if (c.closing) {
        shutdown(c.fd.get(), SHUT_WR);
        drop(c, "");
      }
    }
  }

  // Refuses c: logs why, sends it an error and closes the connection. A
  // client that has not authenticated is logged through `refusals`, counted
  // under `kind`, since anyone who can reach the port can make many.
  void reject(Client& c, dt_status status, const std::string& why, const std::string& kind) {
    if (c.authenticated) {
      DT_LOG(warn) << "rendezvous store: refused " << c.peer << ": " << why;
    } else {
      refusals->record(kind, "refused " + c.peer + ": " + why, Clock::now());
    }
    queue(c, wire::encode_error(status, why));
    c.closing = true;
    c.parked = false;
    c.close_at = Clock::now() + kLinger;
    flush(c);
  }

  void drop(Client& c, const std::string& why) {
    if (c.dead) return;
    if (!why.empty()) DT_LOG(debug) << "rendezvous store: " << c.peer << ": " << why;
    --(c.authenticated ? authenticated : handshaking);
    c.dead = true;
    c.parked = false;
    c.fd.reset();
  }

  // Owner's side -------------------------------------------------------------

  void stop() {
    std::lock_guard<std::mutex> lock(stop_mutex);
    if (!thread.joinable()) return;
    stopping.store(true, std::memory_order_release);
    std::uint64_t one = 1;
    (void)!write(wake.get(), &one, sizeof one);
    thread.join();
  }

  const std::string token;
  const StoreLimits limits;
  wire::KeyLimits key_limits;
  KvTable table;
  net::Fd listener;
  net::Fd wake;
  int bound_port = 0;
  std::string bound_address;
  std::string connect_host;
  bool is_wildcard = false;

  std::unique_ptr<RefusalLog> refusals;
  // Oldest first, which is the order drop_oldest_handshake looks in.
  std::list<std::unique_ptr<Client>> clients;
  // Live connections (not dropped) by whether they have authenticated.
  std::size_t authenticated = 0;
  std::size_t handshaking = 0;
  std::vector<Client*> woken;
  Clock::time_point accept_resume{};

  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> open_connections{0};
  std::atomic<std::size_t> open_handshakes{0};
  std::mutex stop_mutex;
  std::thread thread;
};

StoreServer::StoreServer(const std::string& bind_host, int port, std::string token, StoreLimits limits)
    : impl_(std::make_unique<Impl>(bind_host, port, std::move(token), limits)) {}

StoreServer::~StoreServer() { stop(); }

int StoreServer::port() const { return impl_->bound_port; }
std::string StoreServer::address() const { return impl_->bound_address; }
std::string StoreServer::local_host() const { return impl_->connect_host; }
bool StoreServer::wildcard() const { return impl_->is_wildcard; }
std::size_t StoreServer::connections() const { return impl_->open_connections.load(std::memory_order_acquire); }
std::size_t StoreServer::handshakes() const { return impl_->open_handshakes.load(std::memory_order_acquire); }
void StoreServer::stop() { impl_->stop(); }

}  // namespace dtrain::bootstrap
