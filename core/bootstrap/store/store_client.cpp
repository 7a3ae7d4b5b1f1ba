#include "bootstrap/store/store_client.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "base/error.hpp"
#include "base/log.hpp"
#include "bootstrap/deadline.hpp"
#include "bootstrap/host_port.hpp"
#include "bootstrap/store/auth.hpp"
#include "bootstrap/store/limits.hpp"
#include "bootstrap/store/protocol.hpp"
#include "bootstrap/store/socket.hpp"
#include "bootstrap/store/wire.hpp"

namespace dtrain::bootstrap {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kFirstBackoff = 10ms;
constexpr std::chrono::milliseconds kMaxBackoff = 1000ms;
// How long past a wait's own timeout the client waits for the store to say
// which keys are missing, before it gives up on the store itself.
constexpr std::chrono::milliseconds kReplyGrace = 1000ms;
// Error frames during the handshake carry messages longer than an auth frame.
constexpr std::size_t kMaxHandshakeReply = 4096;

// Why a connection-level step failed.
struct IoFailure {
  enum Kind { timeout, closed, protocol } kind;
  std::string what;
};

struct OwnedFrame {
  wire::Op op = wire::Op::error;
  std::vector<std::string> fields;
};

// A connected socket and the bytes read from it but not yet parsed.
class Connection {
 public:
  explicit Connection(net::Fd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }

  void send_all(std::string_view data, const Deadline& deadline) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd_.get(), data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wait_for(POLLOUT, deadline);
        continue;
      }
      throw IoFailure{IoFailure::closed, n < 0 ? std::strerror(errno) : "send failed"};
    }
  }

  OwnedFrame receive(std::size_t max_body, const Deadline& deadline) {
    for (;;) {
      wire::Frame frame;
      auto result = wire::parse_frame(reinterpret_cast<const std::uint8_t*>(in_.data()), in_.size(), max_body, &frame);
      if (result.status == wire::ParseStatus::invalid) throw IoFailure{IoFailure::protocol, result.error};
      if (result.status == wire::ParseStatus::complete) {
        OwnedFrame owned;
        owned.op = frame.op;
        owned.fields.assign(frame.fields.begin(), frame.fields.end());
        in_.erase(0, result.frame_bytes);
        return owned;
      }
      char buffer[64 * 1024];
      ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
      if (n > 0) {
        in_.append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0) {
        throw IoFailure{IoFailure::closed, "the store closed the connection"};
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_for(POLLIN, deadline);
      } else if (errno != EINTR) {
        throw IoFailure{IoFailure::closed, std::strerror(errno)};
      }
    }
  }

 private:
  void wait_for(short events, const Deadline& deadline) {
    for (;;) {
      if (deadline.expired()) throw IoFailure{IoFailure::timeout, "timed out"};
      pollfd p{fd_.get(), events, 0};
      int rc = poll(&p, 1, deadline.poll_timeout_ms());
      if (rc > 0) return;
      if (rc < 0 && errno != EINTR) throw IoFailure{IoFailure::closed, std::strerror(errno)};
    }
  }

  net::Fd fd_;
  std::string in_;
};

std::string shown_key(std::string_view key) {
  constexpr std::size_t kShown = 64;
  std::string out = "'" + std::string(key.substr(0, kShown));
  if (key.size() > kShown) out += "...";
  return out + "'";
}

std::string join_keys(const std::vector<std::string>& keys) {
  constexpr std::size_t kListed = 16;
  std::string out;
  for (std::size_t i = 0; i < keys.size() && i < kListed; ++i) {
    if (i > 0) out += ", ";
    out += shown_key(keys[i]);
  }
  if (keys.size() > kListed) out += " and " + std::to_string(keys.size() - kListed) + " more";
  return out;
}

std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

// Somewhere in [backoff / 2, backoff], so that ranks refused together do not
// all come back together.
std::chrono::milliseconds jittered(std::chrono::milliseconds backoff) {
  thread_local std::minstd_rand random(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> pick(backoff.count() / 2, backoff.count());
  return std::chrono::milliseconds(pick(random));
}

}  // namespace

struct StoreClient::Impl {
  Impl(std::string where, Connection conn, std::chrono::milliseconds timeout, const wire::Welcome& welcome)
      : address(std::move(where)),
        connection(std::move(conn)),
        call_timeout_ms(timeout.count()),
        max_key(welcome.max_key_bytes),
        max_value(welcome.max_value_bytes),
        max_frame(welcome.max_frame_bytes) {}

  const std::string address;
  Connection connection;
  std::mutex mutex;  // one call at a time
  std::atomic<std::int64_t> call_timeout_ms;
  const std::size_t max_key;
  const std::size_t max_value;
  const std::size_t max_frame;
  std::atomic<bool> aborted{false};
  bool broken = false;
  std::string broken_reason;

  // Sends `request` and returns its reply; an `error` reply is raised with
  // its status. Caller holds `mutex`.
  OwnedFrame call(wire::Op op, const std::string& request, const Deadline& deadline) {
    if (aborted.load()) raise(DT_ERR_ABORTED, "the store client for " + address + " was aborted");
    if (broken) {
      raise(DT_ERR_TRANSPORT, "the connection to the rendezvous store at " + address +
                                  " is unusable after an earlier failure: " + broken_reason);
    }
    OwnedFrame reply;
    try {
      connection.send_all(request, deadline);
      reply = connection.receive(max_frame, deadline);
    } catch (const IoFailure& f) {
      broken = true;
      shutdown(connection.fd(), SHUT_RDWR);
      if (aborted.load()) {
        broken_reason = "aborted";
        raise(DT_ERR_ABORTED, "the store client for " + address + " was aborted during " + wire::op_name(op));
      }
      if (f.kind == IoFailure::timeout) {
        broken_reason = std::string("no answer to ") + wire::op_name(op) + " in time";
        raise(DT_ERR_TIMEOUT, "the rendezvous store at " + address + " did not answer " + wire::op_name(op) +
                                  " before the deadline");
      }
      broken_reason = f.what;
      raise(DT_ERR_TRANSPORT, "lost the connection to the rendezvous store at " + address + " during " +
                                  wire::op_name(op) + ": " + f.what);
    }
    if (reply.op == wire::Op::error) {
      wire::Frame view{reply.op, {reply.fields.begin(), reply.fields.end()}};
      wire::ErrorReply e;
      try {
        e = wire::decode_error(view);
      } catch (const wire::ProtocolError& pe) {
        protocol_failure(op, pe.what());
      }
      raise(static_cast<dt_status>(e.status), "rendezvous store at " + address + ": " + std::string(e.message));
    }
    if (reply.op != wire::Op::reply) protocol_failure(op, std::string("a ") + wire::op_name(reply.op) + " frame");
    return reply;
  }

  [[noreturn]] void protocol_failure(wire::Op op, const std::string& what) {
    broken = true;
    broken_reason = "malformed reply";
    shutdown(connection.fd(), SHUT_RDWR);
    raise(DT_ERR_TRANSPORT, "the rendezvous store at " + address + " sent a malformed reply to " +
                                wire::op_name(op) + ": " + what);
  }

  void expect_fields(wire::Op op, const OwnedFrame& reply, std::size_t n) {
    if (reply.fields.size() != n) {
      protocol_failure(op, std::to_string(reply.fields.size()) + " fields instead of " + std::to_string(n));
    }
  }

  Deadline call_deadline() const { return Deadline::after(std::chrono::milliseconds(call_timeout_ms.load())); }

  void check_key(std::string_view key) const {
    if (key.empty()) raise(DT_ERR_INVALID_ARGUMENT, "a store key may not be empty");
    if (key.size() > max_key) {
      raise(DT_ERR_INVALID_ARGUMENT, "store key " + shown_key(key) + " is " + std::to_string(key.size()) +
                                         " bytes, longer than the limit of " + std::to_string(max_key) +
                                         " bytes of the store at " + address);
    }
  }

  void check_value(std::string_view key, std::string_view value) const {
    if (value.size() > max_value) {
      raise(DT_ERR_INVALID_ARGUMENT, "the value for store key " + shown_key(key) + " is " +
                                         std::to_string(value.size()) + " bytes, more than the limit of " +
                                         std::to_string(max_value) + " bytes of the store at " + address);
    }
  }

  // Splits keys[first..] into the longest run whose frame body, with
  // `overhead` bytes of other fields, fits the store's frame limit.
  std::size_t chunk_end(const std::vector<std::string>& keys, std::size_t first, std::size_t overhead) const {
    std::size_t body = overhead;
    std::size_t end = first;
    while (end < keys.size()) {
      std::size_t need = wire::kFieldHeaderBytes + keys[end].size();
      if (end > first && body + need > max_frame) break;
      body += need;
      ++end;
    }
    return end;
  }
};

namespace {

// Why one connection attempt failed in a way that a later one may not: the
// store was not listening yet, was full, or dropped the connection during the
// handshake (to make room for newer ones, or because it stopped).
struct Retry {
  std::string why;
};

wire::Welcome handshake(Connection& conn, const std::string& where, const std::string& token,
                        const Deadline& deadline) {
  auto refused = [&](const OwnedFrame& frame) {
    wire::Frame view{frame.op, {frame.fields.begin(), frame.fields.end()}};
    wire::ErrorReply e;
    try {
      e = wire::decode_error(view);
    } catch (const wire::ProtocolError&) {
      raise(DT_ERR_TRANSPORT, where + " sent a malformed error frame; it is not a dtrain rendezvous store");
    }
    std::string message = "the rendezvous store at " + where + " refused the connection: " + std::string(e.message);
    // A full store (all its authenticated slots taken) may have room soon.
    if (e.status == DT_ERR_OUT_OF_MEMORY) throw Retry{message};
    if (e.status == DT_ERR_AUTH && token.empty()) {
      message += " (this process has no auth token: set DTRAIN_AUTH_TOKEN or dt_comm_options.auth_token)";
    }
    raise(static_cast<dt_status>(e.status), message);
  };

  try {
    OwnedFrame challenge = conn.receive(kMaxHandshakeReply, deadline);
    if (challenge.op == wire::Op::error) refused(challenge);
    if (challenge.op != wire::Op::challenge || challenge.fields.size() != 1 ||
        challenge.fields[0].size() != auth::kNonceBytes) {
      raise(DT_ERR_TRANSPORT, where + " did not start the store handshake; it is not a dtrain rendezvous store");
    }
    const std::string client_nonce = auth::random_nonce();
    const std::string proof = auth::client_proof(token, challenge.fields[0], client_nonce);
    conn.send_all(wire::encode_frame(wire::Op::auth, {client_nonce, proof}), deadline);

    OwnedFrame answer = conn.receive(kMaxHandshakeReply, deadline);
    if (answer.op == wire::Op::error) refused(answer);
    wire::Frame view{answer.op, {answer.fields.begin(), answer.fields.end()}};
    wire::Welcome welcome;
    try {
      welcome = wire::decode_welcome(view);
    } catch (const wire::ProtocolError& e) {
      raise(DT_ERR_TRANSPORT, where + " broke the store handshake: " + e.what());
    }
    if (!auth::equal_constant_time(welcome.proof, auth::server_proof(token, challenge.fields[0], client_nonce))) {
      raise(DT_ERR_AUTH, "the rendezvous store at " + where +
                             " could not prove it knows the job's auth token; it belongs to another job");
    }
    if (welcome.max_key_bytes == 0 || welcome.max_value_bytes == 0 ||
        welcome.max_frame_bytes < min_frame_bytes(welcome.max_key_bytes, welcome.max_value_bytes) ||
        welcome.max_frame_bytes > 0xffffffffu) {
      raise(DT_ERR_TRANSPORT, "the rendezvous store at " + where + " announced inconsistent limits");
    }
    // The proof has been checked; only the limits are kept, and they are
    // copied before the frame goes away.
    welcome.proof = {};
    return welcome;
  } catch (const IoFailure& f) {
    if (f.kind == IoFailure::protocol) {
      raise(DT_ERR_TRANSPORT, where + " is not a dtrain rendezvous store, or speaks another version: " + f.what);
    }
    throw Retry{f.kind == IoFailure::timeout ? "the store handshake timed out" : f.what};
  }
}

}  // namespace

std::unique_ptr<StoreClient> StoreClient::connect(const std::string& host, int port, const std::string& token,
                                                  std::chrono::milliseconds timeout) {
  const std::string where = format_host_port(host, port);
  if (host.empty()) raise(DT_ERR_INVALID_ARGUMENT, "the rendezvous store's host is empty");
  if (port < 1 || port > 65535) {
    raise(DT_ERR_INVALID_ARGUMENT, "the rendezvous store's port " + std::to_string(port) + " is not in 1..65535");
  }
  if (timeout.count() <= 0) raise(DT_ERR_INVALID_ARGUMENT, "the store client's timeout is not positive");
  const Deadline deadline = Deadline::after(timeout);
  std::chrono::milliseconds backoff = kFirstBackoff;
  int attempts = 0;
  std::string last_error;
  for (;;) {
    ++attempts;
    net::Fd fd = net::connect_tcp(host, port, deadline, &last_error);
    if (fd.valid()) {
      Connection conn(std::move(fd));
      try {
        wire::Welcome welcome = handshake(conn, where, token, deadline);
        DT_LOG(debug) << "connected to the rendezvous store at " << where << " after " << attempts << " attempt(s)";
        auto impl = std::make_unique<Impl>(where, std::move(conn), timeout, welcome);
        return std::unique_ptr<StoreClient>(new StoreClient(std::move(impl)));
      } catch (const Retry& retry) {
        last_error = retry.why;
      }
    }
    if (deadline.expired()) break;
    DT_LOG(debug) << "connecting to the rendezvous store at " << where << ": attempt " << attempts
                  << " failed (" << last_error << "); retrying";
    std::this_thread::sleep_for(std::min(jittered(backoff), deadline.remaining()));
    backoff = std::min(backoff * 2, kMaxBackoff);
    // An attempt begun at the deadline could only time out, hiding why the earlier ones failed.
    if (deadline.expired()) break;
  }
  raise(DT_ERR_TIMEOUT, "could not connect to the rendezvous store at " + where + " within " + ms_text(timeout) +
                            " (" + std::to_string(attempts) + " attempts; last error: " + last_error + ")");
}

StoreClient::StoreClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreClient::~StoreClient() = default;

void StoreClient::set(std::string_view key, std::string_view value) {
  impl_->check_key(key);
  impl_->check_value(key, value);
  wire::Request r;
  r.op = wire::Op::set;
  r.keys = {key};
  r.value = value;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OwnedFrame reply = impl_->call(r.op, wire::encode_request(r), impl_->call_deadline());
  impl_->expect_fields(r.op, reply, 0);
}

std::optional<std::string> StoreClient::get(std::string_view key) {
  return get(std::vector<std::string>{std::string(key)}).at(0);
}

std::vector<std::optional<std::string>> StoreClient::get(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) impl_->check_key(key);
  std::vector<std::optional<std::string>> values;
  values.reserve(keys.size());
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Deadline deadline = impl_->call_deadline();
  std::size_t next = 0;
  while (next < keys.size()) {
    std::size_t end = impl_->chunk_end(keys, next, 0);
    wire::Request r;
    r.op = wire::Op::get;
    r.keys.assign(keys.begin() + static_cast<std::ptrdiff_t>(next), keys.begin() + static_cast<std::ptrdiff_t>(end));
    OwnedFrame reply = impl_->call(r.op, wire::encode_request(r), deadline);
    // [present bytes, value...]: at least one key answered, no more than asked.
    if (reply.fields.empty() || reply.fields[0].empty() || reply.fields[0].size() > end - next ||
        reply.fields.size() != reply.fields[0].size() + 1) {
      impl_->protocol_failure(r.op, "the answer does not match the keys asked for");
    }
    const std::string& present = reply.fields[0];
    for (std::size_t i = 0; i < present.size(); ++i) {
      if (present[i] == '\1') {
        values.emplace_back(std::move(reply.fields[i + 1]));
      } else if (present[i] == '\0' && reply.fields[i + 1].empty()) {
        values.emplace_back(std::nullopt);
      } else {
        impl_->protocol_failure(r.op, "a bad presence flag");
      }
    }
    next += present.size();
  }
  return values;
}

std::int64_t StoreClient::add(std::string_view key, std::int64_t delta) {
  impl_->check_key(key);
  wire::Request r;
  r.op = wire::Op::add;
  r.keys = {key};
  r.delta = delta;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OwnedFrame reply = impl_->call(r.op, wire::encode_request(r), impl_->call_deadline());
  impl_->expect_fields(r.op, reply, 1);
  std::int64_t sum = 0;
  if (!wire::decode_i64(reply.fields[0], &sum)) impl_->protocol_failure(r.op, "the sum is not an 8-byte integer");
  return sum;
}

CasResult StoreClient::compare_and_set(std::string_view key, std::optional<std::string_view> expected,
                                       std::string_view desired) {
  impl_->check_key(key);
  if (expected) impl_->check_value(key, *expected);
  impl_->check_value(key, desired);
  wire::Request r;
  r.op = wire::Op::compare_and_set;
  r.keys = {key};
  r.has_expected = expected.has_value();
  r.expected = expected.value_or(std::string_view());
  r.value = desired;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OwnedFrame reply = impl_->call(r.op, wire::encode_request(r), impl_->call_deadline());
  impl_->expect_fields(r.op, reply, 3);
  std::uint8_t swapped = 0;
  std::uint8_t present = 0;
  if (!wire::decode_u8(reply.fields[0], &swapped) || !wire::decode_u8(reply.fields[1], &present) || swapped > 1 ||
      present > 1 || (present == 0 && (swapped == 1 || !reply.fields[2].empty()))) {
    impl_->protocol_failure(r.op, "bad flags");
  }
  CasResult result;
  result.swapped = swapped == 1;
  if (present == 1) result.value = std::move(reply.fields[2]);
  return result;
}

std::vector<std::string> StoreClient::wait_for(const std::vector<std::string>& keys,
                                               std::chrono::milliseconds timeout) {
  for (const std::string& key : keys) impl_->check_key(key);
  if (timeout.count() < 0) raise(DT_ERR_INVALID_ARGUMENT, "a store wait's timeout is negative");
  std::vector<std::string> missing;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Deadline deadline = Deadline::after(timeout);
  const std::size_t overhead = wire::kFieldHeaderBytes + 8;  // the timeout field
  std::size_t next = 0;
  while (next < keys.size()) {
    std::size_t end = impl_->chunk_end(keys, next, overhead);
    wire::Request r;
    r.op = wire::Op::wait;
    r.keys.assign(keys.begin() + static_cast<std::ptrdiff_t>(next), keys.begin() + static_cast<std::ptrdiff_t>(end));
    // Later chunks of a wait that has run out of time only check.
    std::chrono::milliseconds left = deadline.remaining();
    r.timeout_ms = static_cast<std::uint64_t>(left.count());
    OwnedFrame reply = impl_->call(r.op, wire::encode_request(r), Deadline::after(left + kReplyGrace));
    if (reply.fields.size() > r.keys.size()) impl_->protocol_failure(r.op, "more keys missing than asked for");
    for (std::string& key : reply.fields) missing.push_back(std::move(key));
    next = end;
  }
  return missing;
}

void StoreClient::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> missing = wait_for(keys, timeout);
  if (!missing.empty()) {
    raise(DT_ERR_TIMEOUT, "waited " + ms_text(timeout) + " for " + std::to_string(keys.size()) +
                              " key(s) at the rendezvous store " + impl_->address + "; still missing: " +
                              join_keys(missing));
  }
}

bool StoreClient::remove(std::string_view key) { return remove(std::vector<std::string>{std::string(key)}) == 1; }

std::size_t StoreClient::remove(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) impl_->check_key(key);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Deadline deadline = impl_->call_deadline();
  std::size_t removed = 0;
  std::size_t next = 0;
  while (next < keys.size()) {
    std::size_t end = impl_->chunk_end(keys, next, 0);
    wire::Request r;
    r.op = wire::Op::remove;
    r.keys.assign(keys.begin() + static_cast<std::ptrdiff_t>(next), keys.begin() + static_cast<std::ptrdiff_t>(end));
    OwnedFrame reply = impl_->call(r.op, wire::encode_request(r), deadline);
    impl_->expect_fields(r.op, reply, 1);
    std::uint64_t n = 0;
    if (!wire::decode_u64(reply.fields[0], &n) || n > r.keys.size()) impl_->protocol_failure(r.op, "a bad count");
    removed += static_cast<std::size_t>(n);
    next = end;
  }
  return removed;
}

std::size_t StoreClient::count() {
  wire::Request r;
  r.op = wire::Op::count;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OwnedFrame reply = impl_->call(r.op, wire::encode_request(r), impl_->call_deadline());
  impl_->expect_fields(r.op, reply, 1);
  std::uint64_t n = 0;
  if (!wire::decode_u64(reply.fields[0], &n)) impl_->protocol_failure(r.op, "a bad count");
  return static_cast<std::size_t>(n);
}

void StoreClient::abort() {
  impl_->aborted.store(true);
  // Wakes a call blocked in poll(2); the descriptor stays open until destruction.
  shutdown(impl_->connection.fd(), SHUT_RDWR);
}

std::chrono::milliseconds StoreClient::timeout() const {
  return std::chrono::milliseconds(impl_->call_timeout_ms.load());
}

void StoreClient::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) raise(DT_ERR_INVALID_ARGUMENT, "the store client's timeout is not positive");
  impl_->call_timeout_ms.store(timeout.count());
}

const std::string& StoreClient::address() const { return impl_->address; }
std::size_t StoreClient::max_key_bytes() const { return impl_->max_key; }
std::size_t StoreClient::max_value_bytes() const { return impl_->max_value; }

}  // namespace dtrain::bootstrap
