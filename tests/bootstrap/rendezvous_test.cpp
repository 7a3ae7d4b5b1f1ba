#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/local_rendezvous.hpp"
#include "bootstrap/oob_rendezvous.hpp"
#include "bootstrap/store_rendezvous.hpp"
#include "bootstrap/store_test_util.hpp"

namespace dtrain::bootstrap {
namespace {

using namespace std::chrono_literals;
using testing::contains;
using testing::expect_error;
using testing::kToken;

// Contributions of different sizes, one of them empty, one larger than a
// socket buffer.
std::string payload(int rank, const std::string& key) {
  static const std::size_t sizes[] = {0, 1, 1000, 200000, 37};
  std::string s(sizes[static_cast<std::size_t>(rank) % 5], '\0');
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 31 + static_cast<std::size_t>(rank) + key.size()) & 0xff);
  return s;
}

// Runs `body(rank)` on `size` threads and joins them; an exception fails the test.
void run_ranks(int size, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << ": " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
}

void check_allgather(Rendezvous& rdzv, const std::string& key) {
  std::vector<std::string> all = rdzv.allgather(key, payload(rdzv.rank(), key));
  ASSERT_EQ(all.size(), static_cast<std::size_t>(rdzv.size()));
  for (int r = 0; r < rdzv.size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], payload(r, key)) << "rank " << r;
}

// StoreRendezvous ---------------------------------------------------------

TEST(StoreRendezvous, AllgatherOfDifferentSizesOnFourThreads) {
  StoreServer server("", 0, kToken);
  run_ranks(4, [&](int rank) {
    std::shared_ptr<StoreClient> client = StoreClient::connect("127.0.0.1", server.port(), kToken, 20s);
    StoreRendezvous rdzv(client, rank, 4, 20s);
    EXPECT_EQ(rdzv.rank(), rank);
    EXPECT_EQ(rdzv.size(), 4);
    for (const char* key : {"addresses", "ids", "third"}) check_allgather(rdzv, key);
  });
  // The last reader of each exchange removed its keys.
  EXPECT_EQ(StoreClient::connect("127.0.0.1", server.port(), kToken, 20s)->count(), 0u);
}

TEST(StoreRendezvous, TimeoutNamesTheMissingRank) {
  StoreServer server("", 0, kToken);
  std::vector<std::string> messages(3);
  run_ranks(3, [&](int rank) {
    if (rank == 1) return;  // never arrives
    std::shared_ptr<StoreClient> client = StoreClient::connect("127.0.0.1", server.port(), kToken, 20s);
    StoreRendezvous rdzv(client, rank, 3, 300ms);
    auto start = std::chrono::steady_clock::now();
    Error e = expect_error(DT_ERR_TIMEOUT, [&] { rdzv.allgather("late", "x"); });
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    messages[static_cast<std::size_t>(rank)] = e.what();
  });
  for (int rank : {0, 2}) {
    const std::string& m = messages[static_cast<std::size_t>(rank)];
    EXPECT_TRUE(contains(m, "rank 1 (of 3)")) << m;
    EXPECT_TRUE(contains(m, "'late'")) << m;
    EXPECT_FALSE(contains(m, "rank 0")) << m;
  }
}

TEST(StoreRendezvous, RankZeroHostsTheStoreWhenAsked) {
  const int port = testing::unused_port();
  std::atomic<std::size_t> keys_left{99};
  run_ranks(4, [&](int rank) {
    StoreRendezvous::Options o;
    o.rank = rank;
    o.size = 4;
    o.store = HostPort{"127.0.0.1", port};
    o.token = kToken;
    o.timeout = 20s;
    o.rank0_hosts = true;
    // The other ranks start first and retry until rank 0 listens.
    if (rank == 0) std::this_thread::sleep_for(200ms);
    auto rdzv = StoreRendezvous::open(o);
    EXPECT_EQ(rdzv->server() != nullptr, rank == 0);
    check_allgather(*rdzv, "hosted");
    check_allgather(*rdzv, "hosted-again");
    // Rank 0 returns only once every rank has read, so its store may go now.
    if (rank == 0) keys_left = rdzv->client().count();
  });
  EXPECT_EQ(keys_left.load(), 0u);
}

TEST(StoreRendezvous, OpenOnAnOtherRankFailsNamingTheStoreWhenNobodyHostsIt) {
  const int port = testing::unused_port();
  StoreRendezvous::Options o;
  o.rank = 1;
  o.size = 2;
  o.store = HostPort{"127.0.0.1", port};
  o.token = kToken;
  o.timeout = 300ms;
  Error e = expect_error(DT_ERR_TIMEOUT, [&] { StoreRendezvous::open(o); });
  EXPECT_TRUE(contains(e.what(), "127.0.0.1:" + std::to_string(port))) << e.what();
}

// OobRendezvous -----------------------------------------------------------

// An allgather between threads, standing in for MPI_Allgather.
class ThreadAllgather {
 public:
  explicit ThreadAllgather(int size) : size_(size), slots_(static_cast<std::size_t>(size)) {}

  struct Member {
    ThreadAllgather* group;
    int rank;
    int calls = 0;
  };

  static dt_status fn(void* user, const void* send, void* recv, size_t bytes) {
    auto* m = static_cast<Member*>(user);
    if (m->calls++ == m->group->fail_call) return m->group->failure;
    if (m->rank == 0) ++m->group->calls;
    return m->group->gather(m->rank, send, recv, bytes);
  }

  std::atomic<int> calls{0};  // rank 0's calls that went through
  int fail_call = -1;         // which call of each rank, from 0, fails
  dt_status failure = DT_ERR_TRANSPORT;

 private:
  dt_status gather(int rank, const void* send, void* recv, size_t bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    slots_[static_cast<std::size_t>(rank)].assign(static_cast<const char*>(send), bytes);
    const long generation = generation_;
    if (++arrived_ == size_) {
      result_.clear();
      for (const auto& s : slots_) {
        if (s.size() != bytes) return DT_ERR_MISMATCH;
        result_ += s;
      }
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
    } else if (!changed_.wait_for(lock, 10s, [&] { return generation_ != generation; })) {
      return DT_ERR_TIMEOUT;
    }
    std::memcpy(recv, result_.data(), result_.size());
    return DT_OK;
  }

  int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> slots_;
  std::string result_;
  int arrived_ = 0;
  long generation_ = 0;
};

TEST(OobRendezvous, AllgatherOfDifferentSizesOnFourThreads) {
  ThreadAllgather group(4);
  run_ranks(4, [&](int rank) {
    ThreadAllgather::Member m{&group, rank};
    OobRendezvous rdzv(rank, 4, &ThreadAllgather::fn, &m);
    for (const char* key : {"a", "bb", "ccc"}) check_allgather(rdzv, key);
  });
  EXPECT_EQ(group.calls.load(), 6);  // lengths and contributions, three times
}

TEST(OobRendezvous, EmptyContributionsTakeOneCall) {
  ThreadAllgather group(3);
  run_ranks(3, [&](int rank) {
    ThreadAllgather::Member m{&group, rank};
    OobRendezvous rdzv(rank, 3, &ThreadAllgather::fn, &m);
    EXPECT_EQ(rdzv.allgather("nothing", ""), std::vector<std::string>(3));
  });
  EXPECT_EQ(group.calls.load(), 1);
}

TEST(OobRendezvous, CallbackFailureBecomesAnError) {
  ThreadAllgather group(1);
  ThreadAllgather::Member m{&group, 0};
  OobRendezvous rdzv(0, 1, &ThreadAllgather::fn, &m);
  group.fail_call = 1;  // the contributions, after the lengths
  Error e = expect_error(DT_ERR_TRANSPORT, [&] { rdzv.allgather("k", "data"); });
  EXPECT_TRUE(contains(e.what(), "callback returned status -7")) << e.what();
  EXPECT_TRUE(contains(e.what(), "exchanging contributions")) << e.what();

  // A status that is not an error is still a failure.
  group.fail_call = m.calls;
  group.failure = DT_INPROGRESS;
  expect_error(DT_ERR_REMOTE, [&] { rdzv.allgather("k2", "data"); });
}

TEST(OobRendezvous, RanksInDifferentExchangesAreAMismatch) {
  ThreadAllgather group(2);
  std::vector<std::string> messages(2);
  run_ranks(2, [&](int rank) {
    ThreadAllgather::Member m{&group, rank};
    OobRendezvous rdzv(rank, 2, &ThreadAllgather::fn, &m);
    Error e = expect_error(DT_ERR_MISMATCH, [&] { rdzv.allgather(rank == 0 ? "one" : "other", "x"); });
    messages[static_cast<std::size_t>(rank)] = e.what();
  });
  EXPECT_TRUE(contains(messages[0], "rank 1 (of 2)")) << messages[0];
  EXPECT_TRUE(contains(messages[1], "rank 0 (of 2)")) << messages[1];
}

TEST(OobRendezvous, RefusesBadArguments) {
  expect_error(DT_ERR_INVALID_ARGUMENT, [] { OobRendezvous(0, 2, nullptr, nullptr); });
  expect_error(DT_ERR_INVALID_ARGUMENT, [] { OobRendezvous(2, 2, &ThreadAllgather::fn, nullptr); });
}

// LocalRendezvousGroup ----------------------------------------------------

TEST(LocalRendezvous, AllgatherOfDifferentSizesOnFourThreads) {
  LocalRendezvousGroup group(4, 20s);
  EXPECT_EQ(group.size(), 4);
  run_ranks(4, [&](int rank) {
    auto rdzv = group.member(rank);
    EXPECT_EQ(rdzv->rank(), rank);
    EXPECT_EQ(rdzv->size(), 4);
    for (const char* key : {"x", "y", "z"}) check_allgather(*rdzv, key);
  });
}

TEST(LocalRendezvous, TimeoutNamesTheMissingRanks) {
  LocalRendezvousGroup group(4, 200ms);
  run_ranks(4, [&](int rank) {
    if (rank == 1 || rank == 3) return;
    Error e = expect_error(DT_ERR_TIMEOUT, [&] { group.member(rank)->allgather("k", "v"); });
    EXPECT_TRUE(contains(e.what(), "ranks 1, 3 (of 4)")) << e.what();
  });
}

TEST(LocalRendezvous, MisuseIsReported) {
  LocalRendezvousGroup group(2, 100ms);
  expect_error(DT_ERR_INVALID_ARGUMENT, [&] { group.member(2); });
  expect_error(DT_ERR_INVALID_ARGUMENT, [] { LocalRendezvousGroup bad(0); });
  auto rdzv = group.member(0);
  expect_error(DT_ERR_TIMEOUT, [&] { rdzv->allgather("twice", "a"); });
  expect_error(DT_ERR_INVALID_USAGE, [&] { rdzv->allgather("twice", "b"); });
}

TEST(LocalRendezvous, MembersOutliveTheGroup) {
  std::unique_ptr<Rendezvous> only;
  {
    LocalRendezvousGroup group(1);
    only = group.member(0);
  }
  EXPECT_EQ(only->allgather("k", "v"), std::vector<std::string>{"v"});
}

}  // namespace
}  // namespace dtrain::bootstrap
