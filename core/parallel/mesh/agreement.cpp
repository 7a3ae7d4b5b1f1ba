#include "parallel/mesh/agreement.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace dtrain::parallel::mesh {

void agree_on_record(comm::Communicator& comm, const std::string& context, const Record& record,
                     const std::exception_ptr& local_failure,
                     const std::function<std::string(const Record&)>& describe) {
  // [arguments accepted, record...]
  Record local(record.size() + 1, 0);
  if (!local_failure) {
    local[0] = 1;
    std::copy(record.begin(), record.end(), local.begin() + 1);
  }
  Record all(local.size() * static_cast<std::size_t>(comm.size()));
  const TensorView send = host_view(local.data(), static_cast<std::int64_t>(local.size()), DType::i64);
  const TensorView recv = host_view(all.data(), static_cast<std::int64_t>(all.size()), DType::i64);
  comm::start_and_wait(comm, [&] { return comm.allgather(send, recv); });
  if (local_failure) std::rethrow_exception(local_failure);

  auto record_of = [&](int rank) {
    auto first = all.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rank) * local.size());
    return Record(first + 1, first + static_cast<std::ptrdiff_t>(local.size()));
  };
  for (int r = 0; r < comm.size(); ++r) {
    if (all[static_cast<std::size_t>(r) * local.size()] == 0) {
      raise(DT_ERR_MISMATCH,
            context + ": ranks disagree: rank " + std::to_string(r) + " refused its arguments (its own error says why)");
    }
  }
  const Record reference = record_of(0);
  for (int r = 1; r < comm.size(); ++r) {
    const Record other = record_of(r);
    if (other != reference) {
      raise(DT_ERR_MISMATCH, context + ": ranks disagree: " + describe(reference) + " on rank 0 but " +
                                 describe(other) + " on rank " + std::to_string(r));
    }
  }
}

}  // namespace dtrain::parallel::mesh
