#include "parallel/common/agreement.hpp"

#include <algorithm>

#include "base/digest.hpp"
#include "base/error.hpp"

namespace dtrain::parallel::common {

namespace {

// Dimensions carried in full by the second exchange; deeper shapes are
// compared through a hash of the whole shape.
constexpr std::size_t kShownDims = 6;

std::vector<std::int64_t> allgather(comm::Communicator& comm, const std::vector<std::int64_t>& local) {
  std::vector<std::int64_t> send = local;
  std::vector<std::int64_t> all(local.size() * static_cast<std::size_t>(comm.size()));
  comm.wait(comm.allgather(host_view(send.data(), static_cast<std::int64_t>(send.size()), DType::i64),
                           host_view(all.data(), static_cast<std::int64_t>(all.size()), DType::i64)),
            -1);
  return all;
}

std::int64_t shape_hash(const TensorLayout& layout) {
  Digest digest;
  for (std::int64_t extent : layout.shape) digest.add(extent);
  return digest.value();
}

// One tensor as the second exchange carries it: dtype, ndim, shape hash,
// then the first kShownDims extents (zero-padded).
constexpr std::size_t kRecordWords = 3 + kShownDims;

void append_record(std::vector<std::int64_t>& out, const TensorLayout& layout) {
  out.push_back(static_cast<std::int64_t>(layout.dtype));
  out.push_back(static_cast<std::int64_t>(layout.shape.size()));
  out.push_back(shape_hash(layout));
  for (std::size_t d = 0; d < kShownDims; ++d) out.push_back(d < layout.shape.size() ? layout.shape[d] : 0);
}

std::string describe_record(const std::int64_t* record) {
  const auto ndim = static_cast<std::size_t>(record[1]);
  TensorLayout shown{static_cast<DType>(record[0]), {}};
  for (std::size_t d = 0; d < std::min(ndim, kShownDims); ++d) shown.shape.push_back(record[3 + d]);
  std::string text = to_string(shown);
  if (ndim > kShownDims) text.insert(text.size() - 1, ", ... (" + std::to_string(ndim) + " dimensions)");
  return text;
}

std::string plural(std::int64_t n, const std::string& item) {
  return std::to_string(n) + " " + item + (n == 1 ? "" : "s");
}

[[noreturn]] void mismatch(const AgreementSubject& subject, const std::string& what) {
  raise(DT_ERR_MISMATCH, subject.context + ": ranks disagree: " + what);
}

// The second exchange: which tensor differs, and on which rank.
[[noreturn]] void name_first_difference(comm::Communicator& comm, const AgreementSubject& subject,
                                        const std::vector<TensorLayout>& tensors) {
  std::vector<std::int64_t> local;
  for (const auto& layout : tensors) append_record(local, layout);
  const std::vector<std::int64_t> all = allgather(comm, local);
  const std::size_t stride = local.size();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::int64_t* reference = &all[i * kRecordWords];
    for (int r = 1; r < comm.size(); ++r) {
      const std::int64_t* other = &all[r * stride + i * kRecordWords];
      if (!std::equal(reference, reference + kRecordWords, other)) {
        mismatch(subject, subject.item + " " + std::to_string(i) + " is " + describe_record(reference) +
                              " on rank 0 but " + describe_record(other) + " on rank " + std::to_string(r));
      }
    }
  }
  // Digests differ only where some tensor's dtype or shape does, which its
  // record shows, short of a collision of the shape hash deeper than
  // kShownDims dimensions.
  mismatch(subject, "the " + subject.item + " layouts differ beyond what can be shown");
}

}  // namespace

void agree_on_layout(comm::Communicator& comm, const AgreementSubject& subject,
                     const std::vector<TensorLayout>& tensors, const std::vector<Setting>& settings,
                     const std::exception_ptr& local_failure) {
  // [arguments accepted, tensor count, layout digest, settings...]
  std::vector<std::int64_t> summary(3 + settings.size(), 0);
  if (!local_failure) {
    Digest digest;
    for (const auto& layout : tensors) {
      digest.add(static_cast<std::int64_t>(layout.dtype));
      digest.add(static_cast<std::int64_t>(layout.shape.size()));
      for (std::int64_t extent : layout.shape) digest.add(extent);
    }
    summary[0] = 1;
    summary[1] = static_cast<std::int64_t>(tensors.size());
    summary[2] = digest.value();
    for (std::size_t s = 0; s < settings.size(); ++s) summary[3 + s] = settings[s].value;
  }
  const std::vector<std::int64_t> all = allgather(comm, summary);
  if (local_failure) std::rethrow_exception(local_failure);

  const std::size_t words = summary.size();
  auto field = [&](int rank, std::size_t word) { return all[static_cast<std::size_t>(rank) * words + word]; };
  for (int r = 0; r < comm.size(); ++r) {
    if (field(r, 0) == 0) {
      mismatch(subject, "rank " + std::to_string(r) + " refused its arguments (its own error says why)");
    }
  }
  for (std::size_t s = 0; s < settings.size(); ++s) {
    for (int r = 1; r < comm.size(); ++r) {
      if (field(r, 3 + s) != field(0, 3 + s)) {
        mismatch(subject, settings[s].name + " is " + std::to_string(field(0, 3 + s)) + " on rank 0 but " +
                              std::to_string(field(r, 3 + s)) + " on rank " + std::to_string(r));
      }
    }
  }
  for (int r = 1; r < comm.size(); ++r) {
    if (field(r, 1) != field(0, 1)) {
      mismatch(subject, plural(field(0, 1), subject.item) + " on rank 0 but " + std::to_string(field(r, 1)) +
                            " on rank " + std::to_string(r));
    }
  }
  for (int r = 1; r < comm.size(); ++r) {
    if (field(r, 2) != field(0, 2)) name_first_difference(comm, subject, tensors);
  }
}

}  // namespace dtrain::parallel::common
