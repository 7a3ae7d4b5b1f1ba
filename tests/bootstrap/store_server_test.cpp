#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "bootstrap/store/socket.hpp"
#include "bootstrap/store/store_client.hpp"
#include "bootstrap/store/store_server.hpp"
#include "bootstrap/store_test_util.hpp"

namespace dtrain::bootstrap {
namespace {

using namespace std::chrono_literals;
using testing::contains;
using testing::expect_error;
using testing::kToken;
using testing::RawSocket;
using Clock = std::chrono::steady_clock;

std::unique_ptr<StoreClient> connect_to(const StoreServer& server, const std::string& token = kToken,
                                        std::chrono::milliseconds timeout = 20s) {
  return StoreClient::connect("127.0.0.1", server.port(), token, timeout);
}

long elapsed_ms(Clock::time_point since) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count());
}

// The /proc/net/tcp{,6} rows of sockets listening on `port`, as
// "<local address hex>:<port hex>".
std::vector<std::string> listening_rows(int port) {
  std::vector<std::string> rows;
  char port_hex[8];
  std::snprintf(port_hex, sizeof port_hex, "%04X", port);
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state == "0A" && local.size() > 5 && local.substr(local.size() - 4) == port_hex) rows.push_back(local);
    }
  }
  return rows;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("DTRAIN_STORE_BIND"); }
  void TearDown() override { unsetenv("DTRAIN_STORE_BIND"); }
};

// Basic operations --------------------------------------------------------

TEST_F(StoreTest, SetGetAddCompareAndSetRemoveCount) {
  StoreServer server("", 0, kToken);
  auto c = connect_to(server);
  EXPECT_EQ(c->get("missing"), std::nullopt);
  c->set("a", "alpha");
  c->set("empty", "");
  std::string binary("\0\1\2\xff", 4);
  c->set("bin", binary);
  EXPECT_EQ(c->get("a"), "alpha");
  EXPECT_EQ(c->get("empty"), "");
  EXPECT_EQ(c->get("bin"), binary);
  auto many = c->get(std::vector<std::string>{"a", "nope", "bin"});
  ASSERT_EQ(many.size(), 3u);
  EXPECT_EQ(many[0], "alpha");
  EXPECT_EQ(many[1], std::nullopt);
  EXPECT_EQ(many[2], binary);

  EXPECT_EQ(c->add("n", 3), 3);
  EXPECT_EQ(c->add("n", -10), -7);
  EXPECT_EQ(c->get("n"), "-7");

  CasResult r = c->compare_and_set("cas", std::nullopt, "one");
  EXPECT_TRUE(r.swapped);
  EXPECT_EQ(r.value, "one");
  r = c->compare_and_set("cas", std::string_view("zero"), "two");
  EXPECT_FALSE(r.swapped);
  EXPECT_EQ(r.value, "one");
  r = c->compare_and_set("cas", std::string_view("one"), "two");
  EXPECT_TRUE(r.swapped);
  EXPECT_EQ(c->get("cas"), "two");
  r = c->compare_and_set("absent", std::string_view("x"), "y");
  EXPECT_FALSE(r.swapped);
  EXPECT_EQ(r.value, std::nullopt);

  EXPECT_EQ(c->count(), 5u);
  EXPECT_TRUE(c->remove("a"));
  EXPECT_FALSE(c->remove("a"));
  EXPECT_EQ(c->remove(std::vector<std::string>{"empty", "bin", "nope"}), 2u);
  EXPECT_EQ(c->count(), 2u);
}

TEST_F(StoreTest, ClientRefusesBadKeysAndValuesAndStaysUsable) {
  StoreLimits limits;
  limits.max_key_bytes = 16;
  limits.max_value_bytes = 100;
  limits.max_frame_bytes = min_frame_bytes(16, 100);
  StoreServer server("", 0, kToken, limits);
  auto c = connect_to(server);
  EXPECT_EQ(c->max_key_bytes(), 16u);
  EXPECT_EQ(c->max_value_bytes(), 100u);
  Error e = expect_error(DT_ERR_INVALID_ARGUMENT, [&] { c->set(std::string(17, 'k'), "v"); });
  EXPECT_TRUE(contains(e.what(), "limit of 16 bytes")) << e.what();
  e = expect_error(DT_ERR_INVALID_ARGUMENT, [&] { c->set("k", std::string(101, 'v')); });
  EXPECT_TRUE(contains(e.what(), "limit of 100 bytes")) << e.what();
  expect_error(DT_ERR_INVALID_ARGUMENT, [&] { c->get(""); });
  c->set("k", std::string(100, 'v'));
  EXPECT_EQ(c->get("k")->size(), 100u);
}

TEST_F(StoreTest, RefusedRequestsLeaveTheConnectionUsable) {
  StoreServer server("", 0, kToken);
  auto c = connect_to(server);
  c->set("text", "not a number");
  Error e = expect_error(DT_ERR_INVALID_USAGE, [&] { c->add("text", 1); });
  EXPECT_TRUE(contains(e.what(), "not a counter")) << e.what();
  EXPECT_EQ(c->get("text"), "not a number");
}

TEST_F(StoreTest, ManyKeysAndLargeValuesSpanSeveralFrames) {
  StoreLimits limits;
  limits.max_key_bytes = 64;
  limits.max_value_bytes = 1000;
  limits.max_frame_bytes = min_frame_bytes(64, 1000);
  StoreServer server("", 0, kToken, limits);
  auto c = connect_to(server);
  std::vector<std::string> keys;
  for (int i = 0; i < 60; ++i) {
    keys.push_back("key/" + std::to_string(i));
    c->set(keys.back(), std::string(900 + i, static_cast<char>('a' + i % 26)));
  }
  auto values = c->get(keys);
  ASSERT_EQ(values.size(), keys.size());
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(values[static_cast<std::size_t>(i)].has_value());
    EXPECT_EQ(*values[static_cast<std::size_t>(i)], std::string(900 + i, static_cast<char>('a' + i % 26)));
  }
  // Enough keys that the wait and remove requests themselves need several frames.
  std::vector<std::string> long_keys;
  for (int i = 0; i < 400; ++i) {
    long_keys.push_back(std::string(50, 'w') + std::to_string(i));
    c->set(long_keys.back(), "");
  }
  EXPECT_TRUE(c->wait_for(long_keys, 5s).empty());
  EXPECT_EQ(c->remove(long_keys), 400u);
}

// Concurrency --------------------------------------------------------------

TEST_F(StoreTest, ConcurrentClientsInThreads) {
  StoreServer server("", 0, kToken);
  constexpr int kThreads = 16;
  constexpr int kKeys = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto c = connect_to(server);
        for (int k = 0; k < kKeys; ++k) c->set("t" + std::to_string(t) + "/" + std::to_string(k), std::to_string(t * k));
        for (int k = 0; k < kKeys; ++k) {
          if (c->get("t" + std::to_string(t) + "/" + std::to_string(k)) != std::to_string(t * k)) ++failures;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(connect_to(server)->count(), static_cast<std::size_t>(kThreads * kKeys));
}

TEST_F(StoreTest, AddIsAtomic) {
  StoreServer server("", 0, kToken);
  constexpr int kThreads = 8;
  constexpr int kAdds = 150;
  std::vector<std::vector<std::int64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto c = connect_to(server);
      for (int i = 0; i < kAdds; ++i) seen[static_cast<std::size_t>(t)].push_back(c->add("counter", 1));
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::int64_t> all;
  for (auto& s : seen) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kThreads * kAdds));
  // Every intermediate sum was handed out exactly once.
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(connect_to(server)->get("counter"), std::to_string(kThreads * kAdds));
}

TEST_F(StoreTest, CompareAndSetRaceCountsExactly) {
  StoreServer server("", 0, kToken);
  constexpr int kThreads = 8;
  constexpr int kIncrements = 40;
  std::atomic<int> retries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto c = connect_to(server);
      for (int i = 0; i < kIncrements; ++i) {
        std::optional<std::string> current = c->get("value");
        for (;;) {
          std::string next = std::to_string(current ? std::stoi(*current) + 1 : 1);
          CasResult r = c->compare_and_set("value", current ? std::optional<std::string_view>(*current) : std::nullopt,
                                           next);
          if (r.swapped) break;
          ++retries;
          current = r.value;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(connect_to(server)->get("value"), std::to_string(kThreads * kIncrements));
  RecordProperty("cas_retries", retries.load());
}

TEST_F(StoreTest, ConcurrentClientsInForkedProcesses) {
  constexpr int kChildren = 4;
  constexpr int kAdds = 50;
  // The children are forked before the server thread exists, so that no
  // lock is held across fork(); they learn the port through a pipe.
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (int i = 0; i < kChildren; ++i) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[1]);
      int port = 0;
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, 30000) != 1 || read(fds[0], &port, sizeof port) != sizeof port) _exit(2);
      try {
        auto c = StoreClient::connect("127.0.0.1", port, kToken, 20s);
        for (int k = 0; k < kAdds; ++k) c->add("forked/counter", 1);
        c->set("forked/" + std::to_string(i), std::to_string(getpid()));
        c->wait({"forked/go"}, 20s);
      } catch (...) {
        _exit(1);
      }
      _exit(0);
    }
    close(fds[0]);
    pids.push_back(pid);
    pipes.push_back(fds[1]);
  }
  {
    StoreServer server("", 0, kToken);
    int port = server.port();
    for (int fd : pipes) {
      EXPECT_EQ(write(fd, &port, sizeof port), static_cast<ssize_t>(sizeof port));
      close(fd);
    }
    auto c = connect_to(server);
    std::vector<std::string> keys;
    for (int i = 0; i < kChildren; ++i) keys.push_back("forked/" + std::to_string(i));
    EXPECT_TRUE(c->wait_for(keys, 30s).empty());
    c->set("forked/go", "");
    auto deadline = Clock::now() + 30s;
    for (pid_t pid : pids) {
      int status = -1;
      while (waitpid(pid, &status, WNOHANG) == 0 && Clock::now() < deadline) usleep(5000);
      if (Clock::now() >= deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ADD_FAILURE() << "child " << pid << " did not finish in time";
        continue;
      }
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " status " << status;
    }
    EXPECT_EQ(c->get("forked/counter"), std::to_string(kChildren * kAdds));
  }
}

// Waits --------------------------------------------------------------------

TEST_F(StoreTest, WaitReturnsWhenKeysAppear) {
  StoreServer server("", 0, kToken);
  auto waiter = connect_to(server);
  auto setter = connect_to(server);
  setter->set("early", "1");
  auto start = Clock::now();
  std::thread later([&] {
    std::this_thread::sleep_for(200ms);
    setter->set("late", "2");
  });
  // A deadline far away: the wait ends because the key came, not the clock.
  waiter->wait({"early", "late"}, std::chrono::hours(1));
  long ms = elapsed_ms(start);
  later.join();
  EXPECT_GE(ms, 150);
  EXPECT_LT(ms, 10000);
  EXPECT_EQ(waiter->get("late"), "2");
}

TEST_F(StoreTest, WaitForPresentKeysReturnsAtOnce) {
  StoreServer server("", 0, kToken);
  auto c = connect_to(server);
  c->set("here", "");
  auto start = Clock::now();
  EXPECT_TRUE(c->wait_for({"here"}, 0ms).empty());
  EXPECT_TRUE(c->wait_for({"here"}, std::chrono::hours(1)).empty());
  EXPECT_LT(elapsed_ms(start), 5000);
  EXPECT_EQ(c->wait_for({"here", "gone"}, 0ms), std::vector<std::string>{"gone"});
}

TEST_F(StoreTest, WaitTimesOutNamingTheMissingKeys) {
  StoreServer server("", 0, kToken);
  auto c = connect_to(server);
  c->set("present", "");
  auto start = Clock::now();
  std::vector<std::string> missing = c->wait_for({"present", "absent/1", "absent/2"}, 300ms);
  long ms = elapsed_ms(start);
  EXPECT_EQ(missing, (std::vector<std::string>{"absent/1", "absent/2"}));
  EXPECT_GE(ms, 290);
  EXPECT_LT(ms, 5000);

  start = Clock::now();
  Error e = expect_error(DT_ERR_TIMEOUT, [&] { c->wait({"present", "absent/3"}, 200ms); });
  EXPECT_TRUE(contains(e.what(), "'absent/3'")) << e.what();
  EXPECT_FALSE(contains(e.what(), "'present'")) << e.what();
  EXPECT_LT(elapsed_ms(start), 5000);
  // The store answered, so the connection goes on.
  c->set("absent/3", "");
  EXPECT_TRUE(c->wait_for({"absent/3"}, 1s).empty());
}

TEST_F(StoreTest, ParkedWaitDoesNotBlockOtherClients) {
  StoreServer server("", 0, kToken);
  auto waiter = connect_to(server);
  std::thread blocked([&] { EXPECT_TRUE(waiter->wait_for({"go"}, 20s).empty()); });
  auto other = connect_to(server);
  auto start = Clock::now();
  for (int i = 0; i < 50; ++i) other->set("k" + std::to_string(i), "v");
  EXPECT_EQ(other->count(), 50u);
  EXPECT_LT(elapsed_ms(start), 10000);
  other->set("go", "");
  blocked.join();
}

TEST_F(StoreTest, AbortEndsABlockedWait) {
  StoreServer server("", 0, kToken);
  auto c = connect_to(server);
  std::atomic<long> ms{-1};
  std::thread waiter([&] {
    auto start = Clock::now();
    expect_error(DT_ERR_ABORTED, [&] { c->wait({"never"}, std::chrono::hours(1)); });
    ms = elapsed_ms(start);
  });
  std::this_thread::sleep_for(100ms);
  c->abort();
  waiter.join();
  EXPECT_LT(ms.load(), 5000);
  expect_error(DT_ERR_ABORTED, [&] { c->count(); });
}

// Authentication -----------------------------------------------------------

TEST_F(StoreTest, WrongOrMissingTokenIsRefusedAndOthersKeepWorking) {
  testing::CapturedLog log;
  StoreServer server("", 0, kToken);
  auto good = connect_to(server);
  good->set("before", "1");

  Error wrong = expect_error(DT_ERR_AUTH, [&] { connect_to(server, "not-the-token"); });
  EXPECT_TRUE(contains(wrong.what(), "127.0.0.1:" + std::to_string(server.port()))) << wrong.what();
  EXPECT_TRUE(contains(wrong.what(), "auth token")) << wrong.what();

  Error none = expect_error(DT_ERR_AUTH, [&] { connect_to(server, ""); });
  EXPECT_TRUE(contains(none.what(), "no auth token")) << none.what();

  EXPECT_TRUE(log.eventually_contains("refused 127.0.0.1:")) << log.text();
  EXPECT_TRUE(contains(log.text(), "auth token")) << log.text();
  good->set("after", "2");
  EXPECT_EQ(good->get("before"), "1");
  EXPECT_EQ(connect_to(server)->get("after"), "2");
}

TEST_F(StoreTest, ServerNeedsAToken) {
  Error e = expect_error(DT_ERR_INVALID_ARGUMENT, [] { StoreServer server("", 0, ""); });
  EXPECT_TRUE(contains(e.what(), "DTRAIN_AUTH_TOKEN")) << e.what();
}

TEST_F(StoreTest, ClientRefusesAServerThatCannotProveTheToken) {
  // A listener that plays the server's part without knowing the token.
  net::Fd listener = net::listen_tcp("127.0.0.1", 0, 4);
  const int port = net::local_port(listener.get());
  std::thread impostor([&] {
    pollfd p{listener.get(), POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return;
    net::Fd conn(accept(listener.get(), nullptr, nullptr));
    int flags = fcntl(conn.get(), F_GETFL, 0);
    fcntl(conn.get(), F_SETFL, flags & ~O_NONBLOCK);
    std::string challenge = wire::encode_frame(wire::Op::challenge, {auth::random_nonce()});
    (void)!send(conn.get(), challenge.data(), challenge.size(), MSG_NOSIGNAL);
    char buffer[512];
    pollfd q{conn.get(), POLLIN, 0};
    if (poll(&q, 1, 10000) == 1) (void)!recv(conn.get(), buffer, sizeof buffer, 0);
    std::string welcome = wire::encode_frame(
        wire::Op::welcome, {std::string(32, 'x'), wire::encode_u64(64), wire::encode_u64(64), wire::encode_u64(1024)});
    (void)!send(conn.get(), welcome.data(), welcome.size(), MSG_NOSIGNAL);
    std::this_thread::sleep_for(200ms);
  });
  Error e = expect_error(DT_ERR_AUTH, [&] { StoreClient::connect("127.0.0.1", port, kToken, 10s); });
  EXPECT_TRUE(contains(e.what(), "could not prove")) << e.what();
  impostor.join();
}

// Misbehaving clients ------------------------------------------------------

TEST_F(StoreTest, GarbageDropsOnlyThatClient) {
  StoreServer server("", 0, kToken);
  auto good = connect_to(server);
  RawSocket raw(server.port());
  ASSERT_TRUE(raw.connected());
  wire::Op op;
  std::vector<std::string> fields;
  ASSERT_TRUE(raw.read_frame(&op, &fields));
  EXPECT_EQ(op, wire::Op::challenge);
  raw.send_bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(raw.error_status(), DT_ERR_TRANSPORT);
  EXPECT_TRUE(raw.closed_within(5s));
  good->set("still", "serving");
  EXPECT_EQ(good->get("still"), "serving");
}

TEST_F(StoreTest, RequestBeforeAuthenticationIsRefused) {
  StoreServer server("", 0, kToken);
  RawSocket raw(server.port());
  raw.send_bytes(wire::encode_frame(wire::Op::set, {"k", "v"}));
  wire::Op op;
  std::vector<std::string> fields;
  ASSERT_TRUE(raw.read_frame(&op, &fields));  // the challenge
  EXPECT_EQ(raw.error_status(), DT_ERR_AUTH);
  EXPECT_TRUE(raw.closed_within(5s));
  EXPECT_EQ(connect_to(server)->count(), 0u);
}

TEST_F(StoreTest, OversizedFrameHeaderDropsTheClientBeforeItsBody) {
  StoreServer server("", 0, kToken);
  auto good = connect_to(server);
  RawSocket raw(server.port());
  ASSERT_TRUE(raw.authenticate(kToken));
  // A header announcing a 1 GiB body; the body never comes.
  std::string header = wire::encode_frame(wire::Op::set, {"k", "v"}).substr(0, wire::kHeaderBytes);
  header[12] = 0;
  header[13] = 0;
  header[14] = 0;
  header[15] = 0x40;
  raw.send_bytes(header);
  EXPECT_EQ(raw.error_status(), DT_ERR_TRANSPORT);
  EXPECT_TRUE(raw.closed_within(5s));
  EXPECT_EQ(good->count(), 0u);
}

TEST_F(StoreTest, OversizedKeyOrValueFromARawClientDropsIt) {
  StoreLimits limits;
  limits.max_key_bytes = 32;
  limits.max_value_bytes = 64;
  StoreServer server("", 0, kToken, limits);
  auto good = connect_to(server);
  {
    RawSocket raw(server.port());
    ASSERT_TRUE(raw.authenticate(kToken));
    raw.send_bytes(wire::encode_frame(wire::Op::set, {std::string(33, 'k'), "v"}));
    EXPECT_EQ(raw.error_status(), DT_ERR_TRANSPORT);
    EXPECT_TRUE(raw.closed_within(5s));
  }
  {
    RawSocket raw(server.port());
    ASSERT_TRUE(raw.authenticate(kToken));
    raw.send_bytes(wire::encode_frame(wire::Op::set, {"k", std::string(65, 'v')}));
    EXPECT_EQ(raw.error_status(), DT_ERR_TRANSPORT);
    EXPECT_TRUE(raw.closed_within(5s));
  }
  {
    // Field lengths that do not add up to the body.
    RawSocket raw(server.port());
    ASSERT_TRUE(raw.authenticate(kToken));
    std::string frame = wire::encode_frame(wire::Op::set, {"k", "v"});
    frame[16] = 9;
    raw.send_bytes(frame);
    EXPECT_EQ(raw.error_status(), DT_ERR_TRANSPORT);
    EXPECT_TRUE(raw.closed_within(5s));
  }
  good->set("k", std::string(64, 'v'));
  EXPECT_EQ(good->count(), 1u);
}

TEST_F(StoreTest, SilentClientDoesNotBlockOthersAndIsDroppedAfterTheHandshakeTimeout) {
  testing::CapturedLog log;
  StoreLimits limits;
  limits.handshake_timeout = 500ms;
  StoreServer server("", 0, kToken, limits);
  auto start = Clock::now();
  RawSocket silent(server.port());
  ASSERT_TRUE(silent.connected());
  auto good = connect_to(server);
  good->set("k", "v");
  EXPECT_EQ(good->get("k"), "v");
  EXPECT_LT(elapsed_ms(start), 5000);
  EXPECT_TRUE(silent.closed_within(10s));
  EXPECT_GE(elapsed_ms(start), 400);
  EXPECT_TRUE(log.eventually_contains("did not authenticate within 500 ms")) << log.text();
  EXPECT_EQ(good->get("k"), "v");
}

// Limits -------------------------------------------------------------------

TEST_F(StoreTest, KeyCountLimit) {
  StoreLimits limits;
  limits.max_keys = 5;
  StoreServer server("", 0, kToken, limits);
  auto c = connect_to(server);
  for (int i = 0; i < 5; ++i) c->set("k" + std::to_string(i), "v");
  Error e = expect_error(DT_ERR_OUT_OF_MEMORY, [&] { c->set("k5", "v"); });
  EXPECT_TRUE(contains(e.what(), "limit of 5 keys")) << e.what();
  expect_error(DT_ERR_OUT_OF_MEMORY, [&] { c->add("counter", 1); });
  expect_error(DT_ERR_OUT_OF_MEMORY, [&] { c->compare_and_set("new", std::nullopt, "v"); });
  c->set("k0", "overwritten");
  EXPECT_TRUE(c->remove("k1"));
  c->set("k5", "v");
  EXPECT_EQ(c->count(), 5u);
}

// Where it listens ---------------------------------------------------------

TEST_F(StoreTest, ListensOnLoopbackByDefault) {
  StoreServer server("", 0, kToken);
  EXPECT_EQ(server.address(), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_FALSE(server.wildcard());
  // Checked in the kernel's own table, not only by the server's word.
  auto rows = listening_rows(server.port());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].substr(0, 8), "0100007F");
}

TEST_F(StoreTest, DtrainStoreBindIsHonoured) {
  setenv("DTRAIN_STORE_BIND", "127.0.0.2", 1);
  StoreServer server("", 0, kToken);
  EXPECT_EQ(server.address(), "127.0.0.2:" + std::to_string(server.port()));
  auto rows = listening_rows(server.port());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].substr(0, 8), "0200007F");
  // Not reachable on 127.0.0.1, reachable on the address it was given.
  expect_error(DT_ERR_TIMEOUT, [&] { StoreClient::connect("127.0.0.1", server.port(), kToken, 200ms); });
  EXPECT_EQ(StoreClient::connect("127.0.0.2", server.port(), kToken, 10s)->count(), 0u);
}

TEST_F(StoreTest, WildcardBindNeedsToBeAskedForAndWarns) {
  testing::CapturedLog log;
  setenv("DTRAIN_STORE_BIND", "0.0.0.0", 1);
  StoreServer server("", 0, kToken);
  EXPECT_TRUE(server.wildcard());
  EXPECT_EQ(server.local_host(), "127.0.0.1");
  auto rows = listening_rows(server.port());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].substr(0, 8), "00000000");
  EXPECT_TRUE(contains(log.text(), "WARN")) << log.text();
  EXPECT_TRUE(contains(log.text(), "every interface")) << log.text();
  EXPECT_TRUE(contains(log.text(), "DTRAIN_STORE_BIND=0.0.0.0")) << log.text();
  EXPECT_EQ(connect_to(server)->count(), 0u);
}

TEST_F(StoreTest, BindAddressMustBelongToThisMachine) {
  setenv("DTRAIN_STORE_BIND", "192.0.2.1", 1);  // TEST-NET-1
  Error e = expect_error(DT_ERR_INVALID_ARGUMENT, [] { StoreServer server("", 0, kToken); });
  EXPECT_TRUE(contains(e.what(), "192.0.2.1")) << e.what();
}

TEST_F(StoreTest, PortInUseIsATransportError) {
  StoreServer first("", 0, kToken);
  Error e = expect_error(DT_ERR_TRANSPORT, [&] { StoreServer second("", first.port(), kToken); });
  EXPECT_TRUE(contains(e.what(), std::to_string(first.port()))) << e.what();
}

// Connecting ---------------------------------------------------------------

TEST_F(StoreTest, ConnectToAClosedPortFailsAfterTheDeadlineNamingTheAddress) {
  const int port = testing::unused_port();
  auto start = Clock::now();
  Error e = expect_error(DT_ERR_TIMEOUT, [&] { StoreClient::connect("127.0.0.1", port, kToken, 400ms); });
  long ms = elapsed_ms(start);
  EXPECT_GE(ms, 390);
  EXPECT_LT(ms, 5000);
  EXPECT_TRUE(contains(e.what(), "127.0.0.1:" + std::to_string(port))) << e.what();
  EXPECT_TRUE(contains(e.what(), "refused")) << e.what();
}

TEST_F(StoreTest, ClientRetriesUntilTheServerStarts) {
  const int port = testing::unused_port();
  std::unique_ptr<StoreServer> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(300ms);
    server = std::make_unique<StoreServer>("", port, kToken);
  });
  auto c = StoreClient::connect("127.0.0.1", port, kToken, 20s);
  starter.join();
  c->set("k", "v");
  EXPECT_EQ(c->get("k"), "v");
}

TEST_F(StoreTest, UnresolvableHostFailsNamingIt) {
  Error e = expect_error(DT_ERR_TIMEOUT, [] { StoreClient::connect("no-such-host.invalid", 29500, kToken, 200ms); });
  EXPECT_TRUE(contains(e.what(), "no-such-host.invalid:29500")) << e.what();
}

// Stopping -----------------------------------------------------------------

TEST_F(StoreTest, StopIsPromptAndClientsSeeTheConnectionDrop) {
  auto server = std::make_unique<StoreServer>("", 0, kToken);
  auto waiter = connect_to(*server);
  auto idle = connect_to(*server);
  RawSocket silent(server->port());
  std::atomic<long> wait_ms{-1};
  std::thread blocked([&] {
    auto start = Clock::now();
    expect_error(DT_ERR_TRANSPORT, [&] { waiter->wait({"never"}, std::chrono::hours(1)); });
    wait_ms = elapsed_ms(start);
  });
  std::this_thread::sleep_for(100ms);
  auto start = Clock::now();
  server->stop();
  EXPECT_LT(elapsed_ms(start), 2000);
  blocked.join();
  EXPECT_LT(wait_ms.load(), 5000);
  Error e = expect_error(DT_ERR_TRANSPORT, [&] { idle->set("k", "v"); });
  EXPECT_TRUE(contains(e.what(), "127.0.0.1:")) << e.what();
  expect_error(DT_ERR_TRANSPORT, [&] { idle->count(); });
  server->stop();  // idempotent
}

}  // namespace
}  // namespace dtrain::bootstrap
