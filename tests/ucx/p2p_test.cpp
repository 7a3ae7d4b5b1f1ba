// Tagged send and receive between ranks and to oneself.

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "base/error.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

std::vector<float> pattern(int from, int tag, std::int64_t count) {
  std::vector<float> v(count);
  for (std::int64_t i = 0; i < count; ++i) v[i] = static_cast<float>(from * 1000 + tag * 10 + i % 7);
  return v;
}

TEST(UcxPointToPoint, BothDirectionsAtOnceWithTags) {
  // Sizes either side of UCP's eager/rendezvous switch; receives are posted
  // after the sends and in the opposite tag order.
  const std::vector<std::int64_t> counts{0, 1, 5000, 300000};
  run_world(2, [&](comm::Communicator& comm) {
    const int peer = 1 - comm.rank();
    std::vector<std::vector<float>> out, in;
    std::vector<std::unique_ptr<Tensor>> tensors;
    std::vector<comm::RequestPtr> requests;
    for (int tag = 0; tag < static_cast<int>(counts.size()); ++tag) {
      out.push_back(pattern(comm.rank(), tag, counts[tag]));
      tensors.push_back(std::make_unique<Tensor>(out.back().data(), counts[tag], DType::f32));
      requests.push_back(comm.send(tensors.back()->get(), peer, tag));
    }
    in.resize(counts.size());
    for (int tag = static_cast<int>(counts.size()) - 1; tag >= 0; --tag) {
      in[tag].assign(counts[tag], -1.0f);
      tensors.push_back(std::make_unique<Tensor>(in[tag].data(), counts[tag], DType::f32));
      requests.push_back(comm.recv(tensors.back()->get(), peer, tag));
    }
    for (auto& r : requests) wait(comm, r);
    for (int tag = 0; tag < static_cast<int>(counts.size()); ++tag) {
      EXPECT_EQ(in[tag], pattern(peer, tag, counts[tag])) << "tag " << tag;
    }
  });
}

TEST(UcxPointToPoint, SameTagKeepsOrder) {
  run_world(2, [](comm::Communicator& comm) {
    constexpr int kMessages = 20;
    std::vector<std::int32_t> values(kMessages);
    std::vector<std::unique_ptr<Tensor>> tensors;
    std::vector<comm::RequestPtr> requests;
    for (int i = 0; i < kMessages; ++i) {
      values[i] = comm.rank() == 0 ? i : -1;
      tensors.push_back(std::make_unique<Tensor>(&values[i], 1, DType::i32));
      requests.push_back(comm.rank() == 0 ? comm.send(tensors.back()->get(), 1, 7)
                                          : comm.recv(tensors.back()->get(), 0, 7));
    }
    for (auto& r : requests) wait(comm, r);
    for (int i = 0; i < kMessages; ++i) EXPECT_EQ(values[i], i);
  });
}

TEST(UcxPointToPoint, RingOfFourWithLargeMessages) {
  run_world(4, [](comm::Communicator& comm) {
    const int n = comm.size();
    const int right = (comm.rank() + 1) % n;
    const int left = (comm.rank() + n - 1) % n;
    auto out = pattern(comm.rank(), 3, 1 << 20);
    std::vector<float> in(1 << 20);
    Tensor o(out.data(), 1 << 20, DType::f32);
    Tensor i(in.data(), 1 << 20, DType::f32);
    auto s = comm.send(o.get(), right, 3);
    auto r = comm.recv(i.get(), left, 3);
    wait(comm, r);
    wait(comm, s);
    EXPECT_EQ(in, pattern(left, 3, 1 << 20));
  });
}

TEST(UcxPointToPoint, SendToSelfIsBuffered) {
  run_world(2, [](comm::Communicator& comm) {
    for (std::int64_t count : {0, 3, 200000}) {
      auto out = pattern(comm.rank(), 1, count);
      std::vector<float> in(count, -1.0f);
      Tensor o(out.data(), count, DType::f32);
      Tensor i(in.data(), count, DType::f32);
      // Blocking send first: it must not wait for the receive.
      wait(comm, comm.send(o.get(), comm.rank(), 1));
      out.assign(count, 0.0f);  // the message was copied
      wait(comm, comm.recv(i.get(), comm.rank(), 1));
      EXPECT_EQ(in, pattern(comm.rank(), 1, count)) << count;
    }
  });
}

TEST(UcxPointToPoint, SizeMismatchIsReported) {
  run_world(2, [](comm::Communicator& comm) {
    std::vector<float> data(20, 1.0f);
    if (comm.rank() == 0) {
      Tensor t(data.data(), 20, DType::f32);
      wait(comm, comm.send(t.get(), 1, 4));
      Tensor u(data.data(), 5, DType::f32);
      wait(comm, comm.send(u.get(), 1, 5));
    } else {
      for (int tag : {4, 5}) {
        Tensor t(data.data(), 10, DType::f32);
        try {
          wait(comm, comm.recv(t.get(), 0, tag));
          ADD_FAILURE() << "tag " << tag << ": a receive of the wrong size succeeded";
        } catch (const Error& e) {
          EXPECT_EQ(e.status(), DT_ERR_MISMATCH) << e.what();
          EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
        }
      }
    }
    // A mismatch concerns one message; the communicator goes on.
    wait(comm, comm.barrier());
  });
}

}  // namespace
}  // namespace dtrain::test
