// The ledger's kept buffers: a released host buffer serves the next buffer
// of its size, and what is alive plus what is kept never exceeds the peak
// of what is alive (the most dt_zero_memory reports a Zero to hold).

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "device/queue.hpp"
#include "parallel/zero/memory.hpp"

namespace dtrain::test {
namespace {

using parallel::zero::MemoryLedger;
using parallel::zero::Purpose;
using parallel::zero::TrackedBuffer;

std::unique_ptr<device::Queue> host_queue() { return device::make_queue(Memory::host, 0); }

TEST(MemoryLedger, AReleasedHostBufferServesTheNextOfItsSize) {
  const auto queue = host_queue();
  MemoryLedger ledger;
  const std::int64_t mib = std::int64_t{1} << 20;
  void* first = ledger.allocate(*queue, Purpose::parameters, mib, 0);
  ledger.release(*queue, first, Purpose::parameters, mib, 0);
  EXPECT_EQ(ledger.usage().total(), 0);
  EXPECT_EQ(ledger.kept(), mib);

  void* other_size = ledger.allocate(*queue, Purpose::communication, mib / 2, 0);
  // Half a MiB alive and the kept MiB would exceed the 1 MiB peak: the
  // kept buffer went back to the queue.
  EXPECT_EQ(ledger.kept(), 0);
  ledger.release(*queue, other_size, Purpose::communication, mib / 2, 0);
  EXPECT_EQ(ledger.kept(), mib / 2);

  void* again = ledger.allocate(*queue, Purpose::gradients, mib / 2, 0);
  EXPECT_EQ(again, other_size);
  EXPECT_EQ(ledger.kept(), 0);
  EXPECT_EQ(ledger.usage().gradients, mib / 2);
  EXPECT_EQ(ledger.usage().peak, mib);
  ledger.release(*queue, again, Purpose::gradients, mib / 2, 0);
}

TEST(MemoryLedger, AliveAndKeptNeverExceedThePeak) {
  const auto queue = host_queue();
  MemoryLedger ledger;
  std::mt19937 random(7);
  const std::int64_t sizes[] = {4096, 65536, 65536 + 64, 1 << 20};
  struct Alive {
    void* data;
    std::int64_t bytes;
  };
  std::vector<Alive> alive;
  int reused = 0;
  for (int i = 0; i < 2000; ++i) {
    if (alive.empty() || (alive.size() < 6 && random() % 2 == 0)) {
      const std::int64_t bytes = sizes[random() % 4];
      const std::int64_t kept_before = ledger.kept();
      void* data = ledger.allocate(*queue, Purpose::parameters, bytes, 0);
      if (ledger.kept() == kept_before - bytes) ++reused;
      std::memset(data, 1, static_cast<std::size_t>(bytes));  // all of it is ours
      alive.push_back({data, bytes});
    } else {
      const std::size_t which = random() % alive.size();
      ledger.release(*queue, alive[which].data, Purpose::parameters, alive[which].bytes, 0);
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(which));
    }
    const auto usage = ledger.usage();
    ASSERT_LE(usage.total() + ledger.kept(), usage.peak) << "after operation " << i;
  }
  EXPECT_GT(reused, 100);
  for (const Alive& a : alive) ledger.release(*queue, a.data, Purpose::parameters, a.bytes, 0);
}

TEST(MemoryLedger, AZeroedBufferFromAKeptOneIsZero) {
  const auto queue = host_queue();
  MemoryLedger ledger;
  const std::int64_t count = 1 << 16;
  TrackedBuffer written(ledger, *queue, Purpose::communication, DType::f32, count, 0);
  std::memset(written.at(0), 0x5a, count * sizeof(float));
  const std::byte* address = written.at(0);
  written.reset();

  TrackedBuffer zeroed(ledger, *queue, Purpose::communication, DType::f32, count, 0);
  ASSERT_EQ(zeroed.at(0), address);
  const auto* values = reinterpret_cast<const float*>(zeroed.at(0));
  for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(values[i], 0.0f) << "element " << i;
}

TEST(MemoryLedger, CountedMemoryLeavesRoomOnlyUnderThePeak) {
  const auto queue = host_queue();
  MemoryLedger ledger;
  void* unit = ledger.allocate(*queue, Purpose::parameters, 8192, 0);
  ledger.release(*queue, unit, Purpose::parameters, 8192, 0);
  EXPECT_EQ(ledger.kept(), 8192);
  // The optimizer's state counted afterwards raises what is alive to the
  // peak: nothing can stay kept beside it.
  ledger.add(Purpose::optimizer_state, 8192, 0);
  EXPECT_EQ(ledger.kept(), 0);
  EXPECT_EQ(ledger.usage().peak, 8192);
}

}  // namespace
}  // namespace dtrain::test
