// Helpers for the store tests: catching a dtrain::Error, a raw socket that
// speaks (or breaks) the store protocol by hand, reading the log.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "base/error.hpp"
#include "base/log.hpp"
#include "bootstrap/store/auth.hpp"
#include "bootstrap/store/protocol.hpp"
#include "bootstrap/store/wire.hpp"

namespace dtrain::bootstrap::testing {

inline constexpr const char* kToken = "s3cret-token-of-the-job";

// The error `fn` throws; fails the test when it throws none or another status.
inline Error expect_error(dt_status status, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    return e;
  }
  ADD_FAILURE() << "no dtrain::Error was thrown; expected status " << status;
  return Error(DT_OK, "");
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A port nothing listens on right now.
inline int unused_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t length = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length);
  close(fd);
  return ntohs(a.sin_port);
}

// A blocking TCP socket driven by hand, every read bounded.
class RawSocket {
 public:
  explicit RawSocket(int port, const char* host = "127.0.0.1") {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, host, &a.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawSocket() {
    if (fd_ >= 0) close(fd_);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }

  bool send_bytes(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Reads one frame within `timeout`; false on EOF, error, timeout or garbage.
  bool read_frame(wire::Op* op, std::vector<std::string>* fields,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      wire::Frame frame;
      auto r = wire::parse_frame(reinterpret_cast<const std::uint8_t*>(in_.data()), in_.size(), 1 << 24, &frame);
      if (r.status == wire::ParseStatus::invalid) return false;
      if (r.status == wire::ParseStatus::complete) {
        *op = frame.op;
        fields->assign(frame.fields.begin(), frame.fields.end());
        in_.erase(0, r.frame_bytes);
        return true;
      }
      if (!read_some(deadline)) return false;
    }
  }

  // True when the peer closes (EOF or reset) within `timeout`, skipping
  // whatever it sends before.
  bool closed_within(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, left) <= 0) continue;
      char buffer[4096];
      ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return true;
      in_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  // The status of the first frame received, when it is an error frame; 0 otherwise.
  int error_status(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    wire::Op op;
    std::vector<std::string> fields;
    if (!read_frame(&op, &fields, timeout) || op != wire::Op::error || fields.size() != 2) return 0;
    std::int32_t status = 0;
    wire::decode_i32(fields[0], &status);
    return status;
  }

  // Runs the client side of the handshake by hand.
  bool authenticate(const std::string& token) {
    wire::Op op;
    std::vector<std::string> fields;
    if (!read_frame(&op, &fields) || op != wire::Op::challenge || fields.size() != 1) return false;
    std::string nonce = auth::random_nonce();
    std::string proof = auth::client_proof(token, fields[0], nonce);
    if (!send_bytes(wire::encode_frame(wire::Op::auth, {nonce, proof}))) return false;
    return read_frame(&op, &fields) && op == wire::Op::welcome;
  }

 private:
  bool read_some(std::chrono::steady_clock::time_point deadline) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) return false;
    char buffer[4096];
    ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    in_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string in_;
};

// Sends the library's log to a file for the life of the object.
class CapturedLog {
 public:
  CapturedLog() {
    char path[] = "/tmp/dtrain_store_log_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    path_ = path;
    setenv("DTRAIN_LOG_FILE", path_.c_str(), 1);
    setenv("DTRAIN_LOG_LEVEL", "warn", 1);
    log::configure_from_env();
  }
  ~CapturedLog() {
    unsetenv("DTRAIN_LOG_FILE");
    unsetenv("DTRAIN_LOG_LEVEL");
    log::configure_from_env();
    unlink(path_.c_str());
  }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Waits up to `timeout` for `part` to appear, since the server logs from its own thread.
  bool eventually_contains(const std::string& part, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (contains(text(), part)) return true;
      usleep(10000);
    }
    return contains(text(), part);
  }

 private:
  std::string path_;
};

// Polls `condition` every 5 ms until it holds or `timeout` passes.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    usleep(5000);
  }
  return condition();
}

}  // namespace dtrain::bootstrap::testing
