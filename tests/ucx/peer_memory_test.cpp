// Copies straight between the ranks' memories (comm/peer_memory.hpp), which
// ranks on one host that may read each other's memory get: pieces scattered
// on either side, of sizes that do not line up between the two sides, empty
// ones among them and more of them than the kernel takes in one call, to
// every rank (this one included) and back; the refusal of an address the
// peer does not have and of lists of different lengths; and no peer memory
// where single copies are turned off. Where the kernel keeps processes from
// reading their siblings' memory (Yama's ptrace_scope above 0) ranks in
// processes of their own get none, and those tests skip.

#include <gtest/gtest.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

// Every rank's address of `data`.
std::vector<std::uint64_t> addresses_of(comm::Communicator& comm, const void* data) {
  std::uint64_t mine = reinterpret_cast<std::uintptr_t>(data);
  std::vector<std::uint64_t> every(static_cast<std::size_t>(comm.size()));
  Tensor send(&mine, 1, DType::i64);
  Tensor recv(every.data(), comm.size(), DType::i64);
  wait(comm, comm.allgather(send.get(), recv.get()));
  return every;
}

void barrier(comm::Communicator& comm) { wait(comm, comm.barrier()); }

// Whether Yama keeps a process from reading its siblings' memory.
bool siblings_unreadable() {
  std::ifstream scope("/proc/sys/kernel/yama/ptrace_scope");
  int value = 0;
  return static_cast<bool>(scope >> value) && value > 0;
}

#define DT_REQUIRE_PEER_MEMORY(peers)                                                                       \
  if ((peers) == nullptr && siblings_unreadable()) {                                                        \
    GTEST_SKIP() << "Yama's ptrace_scope keeps these ranks' processes from reading each other's memory"; \
  }                                                                                                         \
  ASSERT_NE((peers), nullptr) << "ranks on one host that may read each other's memory"

// The value rank `from` sends rank `to` at element i of its block.
std::int32_t value(int from, int to, std::size_t i) {
  return static_cast<std::int32_t>(from * 1000000 + to * 100000 + static_cast<int>(i));
}

// Each rank's buffer holds a block of kBlock elements per rank. On the local
// side a block is cut into pieces of one element, in reverse order (3000 of
// them: more than the 1024 a call takes); on the remote side into pieces of
// 5 elements in order. Both lists have empty pieces among them.
constexpr std::size_t kBlock = 3000;

std::vector<iovec> local_pieces(std::int32_t* block) {
  std::vector<iovec> pieces;
  for (std::size_t i = kBlock; i-- > 0;) {
    pieces.push_back({block + i, sizeof(std::int32_t)});
    if (i % 100 == 0) pieces.push_back({block, 0});
  }
  return pieces;
}

std::vector<iovec> remote_pieces(std::uint64_t address) {
  std::vector<iovec> pieces;
  for (std::size_t first = 0; first < kBlock; first += 5) {
    const std::size_t count = std::min<std::size_t>(5, kBlock - first);
    void* at = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address + first * sizeof(std::int32_t)));
    if (first % 50 == 0) pieces.push_back({at, 0});
    pieces.push_back({at, count * sizeof(std::int32_t)});
  }
  return pieces;
}

// The element of the local block that lands at position i of the remote one.
std::size_t local_index(std::size_t i) { return kBlock - 1 - i; }

class UcxPeerMemoryRanks : public ::testing::TestWithParam<int> {};

TEST_P(UcxPeerMemoryRanks, ScatteredPiecesReachEveryRankAndComeBack) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    const comm::PeerMemory* peers = comm.peer_memory();
    DT_REQUIRE_PEER_MEMORY(peers);
    const int n = comm.size();
    const int me = comm.rank();
    std::vector<std::int32_t> outbox(kBlock * static_cast<std::size_t>(n));
    std::vector<std::int32_t> inbox(kBlock * static_cast<std::size_t>(n), -1);
    for (int to = 0; to < n; ++to) {
      for (std::size_t i = 0; i < kBlock; ++i) outbox[static_cast<std::size_t>(to) * kBlock + i] = value(me, to, i);
    }
    const std::vector<std::uint64_t> inboxes = addresses_of(comm, inbox.data());
    // Rank `me`'s block of each peer's inbox, written from scattered pieces.
    for (int to = 0; to < n; ++to) {
      const std::uint64_t block =
          inboxes[static_cast<std::size_t>(to)] + static_cast<std::uint64_t>(me) * kBlock * sizeof(std::int32_t);
      peers->write(to, local_pieces(&outbox[static_cast<std::size_t>(to) * kBlock]), remote_pieces(block));
    }
    barrier(comm);
    for (int from = 0; from < n; ++from) {
      for (std::size_t i = 0; i < kBlock; ++i) {
        ASSERT_EQ(inbox[static_cast<std::size_t>(from) * kBlock + i], value(from, me, local_index(i)))
            << "from rank " << from << " at " << i;
      }
    }
    // And back: this rank's blocks of every peer's inbox, read into
    // scattered pieces, are the outbox it wrote.
    std::vector<std::int32_t> back(kBlock * static_cast<std::size_t>(n), -1);
    for (int from = 0; from < n; ++from) {
      const std::uint64_t block =
          inboxes[static_cast<std::size_t>(from)] + static_cast<std::uint64_t>(me) * kBlock * sizeof(std::int32_t);
      peers->read(from, remote_pieces(block), local_pieces(&back[static_cast<std::size_t>(from) * kBlock]));
    }
    EXPECT_EQ(back, outbox);
    barrier(comm);  // the peers' inboxes live until every rank has read
  });
}

INSTANTIATE_TEST_SUITE_P(Ucx, UcxPeerMemoryRanks, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param) { return std::to_string(param.param) + "ranks"; });

TEST(UcxPeerMemory, AnAddressThePeerLacksOrUnequalListsAreRefused) {
  run_world(2, [](comm::Communicator& comm) {
    const comm::PeerMemory* peers = comm.peer_memory();
    DT_REQUIRE_PEER_MEMORY(peers);
    const int peer = 1 - comm.rank();
    std::int32_t word = 7;
    const iovec here{&word, sizeof(word)};
    const iovec nowhere{reinterpret_cast<void*>(std::uintptr_t{16}), sizeof(word)};
    std::string message = expect_error(DT_ERR_TRANSPORT, [&] { peers->write(peer, {&here, 1}, {&nowhere, 1}); });
    EXPECT_NE(message.find("writing to rank " + std::to_string(peer)), std::string::npos) << message;
    message = expect_error(DT_ERR_TRANSPORT, [&] { peers->read(peer, {&nowhere, 1}, {&here, 1}); });
    EXPECT_NE(message.find("reading from rank " + std::to_string(peer)), std::string::npos) << message;
    EXPECT_EQ(word, 7);
    // Lists of different lengths: refused before anything is copied.
    std::int32_t pair[2] = {8, 9};
    const iovec both{pair, sizeof(pair)};
    message = expect_error(DT_ERR_INVALID_ARGUMENT, [&] { peers->read(comm.rank(), {&here, 1}, {&both, 1}); });
    EXPECT_NE(message.find("4 bytes"), std::string::npos) << message;
    EXPECT_EQ(pair[0], 8);
    barrier(comm);
  });
}

TEST(UcxPeerMemory, NoneWithoutSingleCopies) {
  WorldOptions options;
  options.tuning.single_copy_bytes = 0;
  run_world(2, [](comm::Communicator& comm) { EXPECT_EQ(comm.peer_memory(), nullptr); }, options);
}

}  // namespace
}  // namespace dtrain::test
