#include "parallel/ddp/data_parallel.hpp"

#include <cmath>
#include <exception>
#include <string>

#include "base/error.hpp"
#include "comm/deadline.hpp"
#include "parallel/common/agreement.hpp"
#include "parallel/ddp/bucket_plan.hpp"

namespace dtrain::parallel::ddp {

DataParallel::DataParallel(comm::Communicator& comm, const ParsedTensors& gradients,
                           const Options& options, void* stream)
    : comm_(comm), options_(options), trainer_stream_(stream) {
  std::vector<TensorLayout> layouts;
  std::exception_ptr failure;
  try {
    check_options(options_);
    for (const CheckedTensor& gradient : gradients.get()) {
      const std::string name = "gradients[" + std::to_string(gradients_.size()) + "]";
      if (!dtype_is_floating(gradient.view.dtype)) {
        raise(DT_ERR_INVALID_ARGUMENT, name + " is " + dtype_name(gradient.view.dtype) +
                                           "; gradients are averaged, so they must be floating point");
      }
      // A device the communicator cannot reduce on would otherwise fail
      // only at the first mark, on this rank alone.
      comm_.check_placement(gradient.view, name.c_str());
      gradients_.push_back(gradient.view);
      layouts.push_back(gradient.layout);
    }
    queue_ = gradients_.empty() ? device::make_host_queue() : device::make_queue(gradients_[0]);
    check_conversions();
  } catch (...) {
    failure = std::current_exception();
  }
  common::agree_on_layout(comm_, {"DDP creation", "gradient"}, layouts,
                  {{"bucket_bytes", options_.bucket_bytes},
                   {"compression", static_cast<std::int64_t>(options_.compression)},
                   {"find_unused", options_.find_unused},
                   {"weighted", options_.weighted}},
                  failure);

  std::vector<DType> dtypes;
  std::vector<std::int64_t> counts;
  for (const TensorView& view : gradients_) {
    dtypes.push_back(view.dtype);
    counts.push_back(view.count);
  }
  where_.resize(gradients_.size());
  std::vector<std::size_t> bucket_of(gradients_.size());
  std::vector<std::size_t> launch_order;
  for (const common::BucketPlan& plan : plan_buckets(dtypes, counts, options_)) {
    for (std::size_t s = 0; s < plan.members.size(); ++s) {
      where_[plan.members[s]] = {buckets_.size(), s};
      bucket_of[plan.members[s]] = buckets_.size();
    }
    launch_order.push_back(buckets_.size());
    buckets_.emplace_back(*queue_, plan.dtype, plan.members, gradients_);
  }
  reduction_.emplace(comm_, bucket_of, std::move(launch_order),
                     [this](std::size_t bucket) { return launch(bucket); }, "step");
}

DataParallel::~DataParallel() {
  std::lock_guard<std::mutex> lock(mutex_);
  abandon_step(comm::deadline_after(comm_, -1));
}

void DataParallel::check_conversions() const {
  for (std::size_t i = 0; i < gradients_.size(); ++i) {
    const DType dtype = gradients_[i].dtype;
    if (!queue_->can_cast(dtype, wire_dtype(dtype, options_.compression))) {
      raise(DT_ERR_UNSUPPORTED, "gradients[" + std::to_string(i) + "] is " + dtype_name(dtype) +
                                    " on a CUDA device, which " + compression_name(options_.compression) +
                                    " compression does not support there (float32 gradients, or no compression)");
    }
  }
}

void DataParallel::check_index(std::size_t index, const char* what) const {
  if (index >= gradients_.size()) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(what) + " " + std::to_string(index) +
                                       " is out of range: the DDP has " + std::to_string(gradients_.size()) +
                                       " gradients");
  }
}

void DataParallel::mark_ready(std::size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_index(index, "gradient");
  if (!sync_) return;
  reduction_->check_unmarked(index, "was");
  const auto [bucket, slot] = where_[index];
  const double weight = options_.weighted ? local_weight_ : 1.0;
  // What backward queued so far (this gradient included) runs first.
  queue_->wait_for(trainer_stream_);
  buckets_[bucket].fill(slot, weight / comm_.size());
  reduction_->mark(index);
}

void DataParallel::launch_weight() {
  weight_sum_ = local_weight_;
  const TensorView weight = host_view(&weight_sum_, 1, DType::f64);
  weight_request_ = comm_.allreduce(weight, weight, DT_SUM);
}

comm::RequestPtr DataParallel::launch(std::size_t bucket) {
  if (options_.weighted && !weight_request_) launch_weight();
  return buckets_[bucket].launch(comm_);
}

void DataParallel::set_sync(bool sync) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (sync != sync_ && reduction_->marked_count() > 0) {
    raise(DT_ERR_INVALID_USAGE, "a step is in progress (" + std::to_string(reduction_->marked_count()) +
                                    " gradients marked); call wait() before changing sync");
  }
  sync_ = sync;
}

bool DataParallel::sync() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sync_;
}

void DataParallel::set_local_weight(double weight) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!options_.weighted) {
    raise(DT_ERR_INVALID_USAGE, "set_local_weight needs a DDP created with the weighted option");
  }
  if (!std::isfinite(weight) || weight < 0) {
    raise(DT_ERR_INVALID_ARGUMENT, "weight " + std::to_string(weight) + " must be finite and >= 0");
  }
  if (reduction_->marked_count() > 0) {
    raise(DT_ERR_INVALID_USAGE, "a step is in progress (" + std::to_string(reduction_->marked_count()) +
                                    " gradients marked); set the weight before the first mark_ready");
  }
  local_weight_ = weight;
}

void DataParallel::wait(int timeout_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!sync_) return;
  const auto deadline = comm::deadline_after(comm_, timeout_ms);

  const std::vector<std::size_t> unmarked = reduction_->unmarked();
  if (!unmarked.empty() && !options_.find_unused) {
    abandon_step(deadline);
    raise(DT_ERR_INVALID_USAGE, reduction_->unmarked_message(unmarked) +
                                    " (mark every gradient, or turn find_unused on to count unmarked ones as "
                                    "zero); the step was abandoned and the gradients left as they were");
  }

  try {
    for (std::size_t i : unmarked) {
      buckets_[where_[i].first].fill_zero(where_[i].second);
      reduction_->mark(i);
    }
    // A launch that failed while marking is tried again, and reported, here.
    reduction_->launch_ready();
    double scale = 1.0;
    if (weight_request_) {
      comm::wait_until(comm_, weight_request_, deadline);
      if (!(weight_sum_ > 0) || !std::isfinite(weight_sum_)) {
        raise(DT_ERR_INVALID_USAGE, "the ranks' weights add up to " + std::to_string(weight_sum_) +
                                        "; at least one rank needs a positive weight");
      }
      // The buckets hold sum(w_r g_r) / size; this makes it sum(w_r g_r) / sum(w_r).
      scale = comm_.size() / weight_sum_;
    }
    reduction_->finish_all(deadline, [this, scale](std::size_t bucket) { buckets_[bucket].unpack(scale); });
    queue_->synchronize();
  } catch (...) {
    abandon_step(deadline);
    throw;
  }
  reset_step();
}

std::size_t DataParallel::bucket_of(std::size_t index) const {
  check_index(index, "gradient");
  return where_[index].first;
}

BucketState DataParallel::bucket_state(std::size_t bucket) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bucket >= buckets_.size()) {
    raise(DT_ERR_INVALID_ARGUMENT, "bucket " + std::to_string(bucket) + " is out of range: the DDP has " +
                                       std::to_string(buckets_.size()) + " buckets");
  }
  return reduction_->state(bucket);
}

void DataParallel::abandon_step(comm::Clock::time_point deadline) noexcept {
  if (weight_request_) {
    try {
      comm::wait_until(comm_, weight_request_, deadline);
    } catch (...) {
      // Reported, if at all, by the caller's own error.
    }
  }
  reduction_->abandon(deadline);
  weight_request_.reset();
}

void DataParallel::reset_step() {
  reduction_->reset();
  weight_request_.reset();
}

}  // namespace dtrain::parallel::ddp
