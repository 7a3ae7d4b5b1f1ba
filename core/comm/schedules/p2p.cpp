#include <cstring>
#include <vector>

#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/tags.hpp"

namespace dtrain::comm::schedule {

namespace {

class TaggedSend final : public Operation {
 public:
  TaggedSend(const TensorView& buf, int peer, int tag)
      : Operation("send", Kind::point_to_point), buf_(buf), peer_(peer), tag_(tag) {}

 protected:
  Task lane(int, int) override {
    const void* data = buf_.data;
    if (peer_ == rank()) {
      // To oneself the message is buffered, so a blocking send returns
      // before its receive is posted (as with a world of one rank).
      const auto* bytes = static_cast<const std::byte*>(buf_.data);
      copy_.assign(bytes, bytes + buf_.bytes());
      data = copy_.data();
      complete_early();
    }
    Transfer& out = transfer();
    send_tagged(out, peer_, p2p_tag(group().context, rank(), tag_), data, buf_.bytes());
    co_await all_of(out);
  }

 private:
  const TensorView buf_;
  const int peer_;
  const int tag_;
  std::vector<std::byte> copy_;
};

class TaggedRecv final : public Operation {
 public:
  TaggedRecv(const TensorView& buf, int peer, int tag)
      : Operation("recv", Kind::point_to_point), buf_(buf), peer_(peer), tag_(tag) {}

 protected:
  Task lane(int, int) override {
    Transfer& in = transfer();
    recv_tagged(in, peer_, p2p_tag(group().context, peer_, tag_), buf_.data, buf_.bytes());
    co_await all_of(in);
  }

 private:
  const TensorView buf_;
  const int peer_;
  const int tag_;
};

}  // namespace

std::unique_ptr<Operation> tagged_send(const TensorView& buf, int peer, int tag) {
  return std::make_unique<TaggedSend>(buf, peer, tag);
}

std::unique_ptr<Operation> tagged_recv(const TensorView& buf, int peer, int tag) {
  return std::make_unique<TaggedRecv>(buf, peer, tag);
}

}  // namespace dtrain::comm::schedule
