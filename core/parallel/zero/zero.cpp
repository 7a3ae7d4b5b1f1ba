#include "parallel/zero/zero.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "base/error.hpp"
#include "comm/deadline.hpp"
#include "parallel/common/agreement.hpp"
#include "parallel/zero/model_norm.hpp"

namespace dtrain::parallel::zero {

// What creation learnt from the arguments once every rank accepted them.
struct Zero::Accepted {
  DType dtype = DType::f32;
  std::vector<TensorView> views;
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::int64_t> counts;
  std::vector<std::size_t> unit_sizes;
};

namespace {

bool optimizable(DType dtype) { return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16; }

}  // namespace

Zero::Accepted Zero::accept(comm::Communicator& comm, const ParsedTensors& parsed,
                            const optim::Config& config, const Options& options) {
  Accepted accepted;
  std::vector<TensorLayout> layouts;
  std::exception_ptr failure;
  std::size_t count = 0;
  try {
    const std::vector<CheckedTensor>& params = parsed.get();
    count = params.size();
    if (params.empty()) raise(DT_ERR_INVALID_ARGUMENT, "n is 0: a model needs at least one parameter");
    check_options(options, params.size());
    if (options.model_comm == &comm) {
      raise(DT_ERR_INVALID_ARGUMENT,
            "optim->comm is the dt_zero's own communicator; it must hold the model's other parts, "
            "or be NULL when the parameters are the whole model");
    }
    for (const CheckedTensor& param : params) {
      const std::size_t i = accepted.views.size();
      if (!optimizable(param.view.dtype)) {
        raise(DT_ERR_INVALID_ARGUMENT, "params[" + std::to_string(i) + "]: dtype " + dtype_name(param.view.dtype) +
                                           " cannot be trained (float32, float16, bfloat16)");
      }
      if (i > 0 && param.view.dtype != accepted.dtype) {
        raise(DT_ERR_INVALID_ARGUMENT, "params[" + std::to_string(i) + "] is " + dtype_name(param.view.dtype) +
                                           " but params[0] is " + dtype_name(accepted.dtype) +
                                           "; every parameter must have the same dtype");
      }
      accepted.dtype = param.view.dtype;
      accepted.views.push_back(param.view);
      accepted.shapes.push_back(param.layout.shape);
      accepted.counts.push_back(param.view.count);
      layouts.push_back(param.layout);
    }
    comm.check_placement(accepted.views[0], "params[0]");
  } catch (...) {
    failure = std::current_exception();
  }
  common::agree_on_layout(comm, kCreationSubject, layouts, creation_settings(options, config), failure);

  // The trainer's units, in any stage, so that a trainer written for stage
  // 3 runs unchanged on the others; without them stage 3 shards parameter
  // by parameter and stages 0-2 reduce in buckets.
  if (options.unit_sizes) {
    accepted.unit_sizes = *options.unit_sizes;
  } else if (options.stage == 3) {
    accepted.unit_sizes = std::vector<std::size_t>(count, 1);
  } else {
    accepted.unit_sizes = bucket_units(accepted.counts, accepted.dtype, options.bucket_bytes);
  }
  return accepted;
}

Zero::Zero(comm::Communicator& comm, const ParsedTensors& params, const optim::Config& config,
           const Options& options)
    : Zero(comm, config, options, accept(comm, params, config, options)) {}

Zero::Zero(comm::Communicator& comm, const optim::Config& config, const Options& options, Accepted accepted)
    : comm_(comm),
      stage_(options.stage),
      dtype_(accepted.dtype),
      kind_(config.kind),
      state_buffers_(optim::state_buffers(config)),
      shapes_(std::move(accepted.shapes)),
      // Stage 0 shards nothing: one shard, the whole unit, on every rank.
      layout_(accepted.counts, accepted.unit_sizes, stage_ == 0 ? 1 : comm.size(), stage_ == 0 ? 0 : comm.rank()),
      trainer_stream_(options.stream),
      // Every rank accepted the parameters, so there is a first one.
      queue_(device::make_queue(accepted.views[0])),
      gradients_(comm, layout_, dtype_, stage_, ledger_, *queue_, trainer_stream_) {
  for (const Unit& unit : layout_.units()) {
    if (stage_ == 3) {
      const Range shard = layout_.shard(unit);
      parameters_.emplace_back(ledger_, *queue_, Purpose::parameters, dtype_, shard.count,
                               shard.count - layout_.owned(unit).count);
    } else {
      parameters_.emplace_back(ledger_, *queue_, Purpose::parameters, dtype_, unit.padded, unit.padding());
    }
  }
  load_initial_values(accepted.views);
  const std::vector<TensorView> shards = parameter_shards();
  if (stage_ == 3) {
    gatherer_ =
        std::make_unique<Gatherer>(comm_, layout_, shards, ledger_, *queue_, trainer_stream_, options.prefetch);
  }

  // The shards are the library's own: one device, apart, of the accepted dtype.
  std::vector<optim::ParamTensor> tensors;
  for (std::size_t u = 0; u < layout_.units().size(); ++u) tensors.push_back({shards[u], gradients_.shard(u)});
  optimizer_ = std::make_unique<optim::Optimizer>(config, tensors,
                                                  ModelNorm(stage_ == 0 ? nullptr : &comm_, options.model_comm,
                                                            excluded_gradients(options.norm_excluded), *queue_));

  // The optimizer's own allocation: f32 master weights and state for every
  // element of this rank's shards.
  const auto f32 = static_cast<std::int64_t>(sizeof(float));
  for (const Unit& unit : layout_.units()) {
    const std::int64_t count = layout_.shard(unit).count;
    const std::int64_t padding = count - layout_.owned(unit).count;
    if (device::needs_master(dtype_)) ledger_.add(Purpose::master_weights, count * f32, padding * f32);
    ledger_.add(Purpose::optimizer_state, count * f32 * state_buffers_, padding * f32 * state_buffers_);
  }
}

void Zero::load_initial_values(const std::vector<TensorView>& params) {
  const bool root = comm_.rank() == 0;
  // Rank 0 lays its parameters out as a unit: flat, padding zero.
  if (root) queue_->wait_for(trainer_stream_);
  auto fill = [&](const Unit& unit, const TrackedBuffer& into) {
    if (!root) return;
    for (std::size_t i = unit.first_param; i < unit.first_param + unit.params; ++i) {
      const Place& place = layout_.place(i);
      if (place.count > 0) queue_->copy(into.at(place.offset), params[i].data, params[i].bytes());
    }
  };
  auto broadcast = [&](const Unit& unit, const TrackedBuffer& buffer) {
    return comm_.broadcast(buffer.view(0, unit.padded), 0);
  };
  const auto deadline = comm::deadline_after(comm_, -1);
  if (stage_ < 3) {
    // All at once: collectives on one communicator run in the order issued.
    std::vector<comm::RequestPtr> requests;
    for (std::size_t u = 0; u < layout_.units().size(); ++u) {
      fill(layout_.unit(u), parameters_[u]);
      if (layout_.unit(u).padded > 0) requests.push_back(broadcast(layout_.unit(u), parameters_[u]));
    }
    for (const comm::RequestPtr& request : requests) comm::wait_until(comm_, request, deadline);
    queue_->synchronize();
    return;
  }
  // Stage 3 never holds the whole model: one unit at a time passes through
  // a staging buffer, of which each rank keeps its shard.
  for (std::size_t u = 0; u < layout_.units().size(); ++u) {
    const Unit& unit = layout_.unit(u);
    if (unit.padded == 0) continue;
    TrackedBuffer staging(ledger_, *queue_, Purpose::communication, dtype_, unit.padded, unit.padding());
    fill(unit, staging);
    comm::wait_until(comm_, broadcast(unit, staging), deadline);
    const Range shard = layout_.shard(unit);
    queue_->copy(parameters_[u].at(0), staging.at(shard.first),
                 static_cast<std::size_t>(shard.count) * dtype_size(dtype_));
  }
  queue_->synchronize();
}

std::vector<TensorView> Zero::excluded_gradients(const std::vector<std::size_t>& excluded) const {
  std::vector<TensorView> parts;
  for (std::size_t param : excluded) {
    const Place& place = layout_.place(param);
    const Range shard = layout_.shard(layout_.unit(place.unit));
    const Range mine = overlap({place.offset, place.count}, shard);
    if (mine.count > 0) parts.push_back(gradients_.shard(place.unit).slice(mine.first - shard.first, mine.count));
  }
  return parts;
}

std::vector<TensorView> Zero::parameter_shards() const {
  std::vector<TensorView> shards;
  for (std::size_t u = 0; u < layout_.units().size(); ++u) {
    const Range shard = layout_.shard(layout_.unit(u));
    shards.push_back(stage_ == 3 ? parameters_[u].view(0, shard.count) : parameters_[u].view(shard.first, shard.count));
  }
  return shards;
}

const std::vector<std::int64_t>& Zero::shape(std::size_t index) const {
  layout_.check_parameter(index);
  return shapes_[index];
}

TensorView Zero::parameter(std::size_t index) const {
  layout_.check_parameter(index);
  const Place& place = layout_.place(index);
  const TrackedBuffer& unit = stage_ == 3 ? gatherer_->whole(place.unit) : parameters_[place.unit];
  return unit.view(place.offset, place.count);
}

void Zero::gather(std::size_t unit) {
  layout_.check_unit(unit);
  if (gatherer_) gatherer_->gather(unit);
}

void Zero::gather_wait(std::size_t unit, int timeout_ms) {
  layout_.check_unit(unit);
  if (gatherer_) gatherer_->wait(unit, timeout_ms);
}

void Zero::release(std::size_t unit) {
  layout_.check_unit(unit);
  if (gatherer_) gatherer_->release(unit);
}

GatherState Zero::gather_state(std::size_t unit) const {
  layout_.check_unit(unit);
  return gatherer_ ? gatherer_->state(unit) : GatherState::whole;
}

optim::StepResult Zero::step() {
  gradients_.check_complete();
  if (gatherer_) {
    const std::size_t gathered = gatherer_->first_gathered();
    if (gathered < layout_.units().size()) {
      raise(DT_ERR_INVALID_USAGE,
            "unit " + std::to_string(gathered) + " is still gathered; release every unit before the step");
    }
  }
  // The optimizer (on a stream of its own) rewrites parameters the
  // trainer's work queued so far may still read.
  queue_->wait_for(trainer_stream_);
  queue_->synchronize();
  const optim::StepResult result = optimizer_->step();
  if (!result.skipped) allgather_shards();
  gradients_.zero();
  queue_->synchronize();
  return result;
}

void Zero::allgather_shards() {
  if (stage_ != 1 && stage_ != 2) return;
  std::vector<comm::RequestPtr> requests;
  for (std::size_t u = 0; u < layout_.units().size(); ++u) {
    const Unit& unit = layout_.unit(u);
    if (unit.padded == 0) continue;
    // In place: this rank's shard already sits in its slot of the unit.
    const Range shard = layout_.shard(unit);
    requests.push_back(comm_.allgather(parameters_[u].view(shard.first, shard.count), parameters_[u].view(0, unit.padded)));
  }
  const auto deadline = comm::deadline_after(comm_, -1);
  for (const comm::RequestPtr& request : requests) comm::wait_until(comm_, request, deadline);
}

CheckpointView Zero::checkpoint_view(ViewFor purpose) const {
  CheckpointView view;
  view.stage = stage_;
  view.dtype = dtype_;
  view.kind = kind_;
  view.state_buffers = state_buffers_;
  for (const auto& shape : shapes_) view.parameters.push_back({dtype_, shape});
  const std::span<const device::Slot> slots = optimizer_->slots();
  for (std::size_t u = 0; u < layout_.units().size(); ++u) {
    const Unit& unit = layout_.unit(u);
    const Range part = stage_ == 0 && purpose == ViewFor::save ? saved_by_this_rank(unit) : layout_.owned(unit);
    if (part.count == 0) continue;
    // The optimizer's Slot of the unit starts where this rank's shard does.
    const std::int64_t offset = part.first - layout_.shard(unit).first;
    const device::Slot& slot = slots[u];
    ShardRun run;
    run.global_first = unit.first_element + part.first;
    run.count = part.count;
    run.weights = (slot.master ? slot.master : static_cast<float*>(slot.param.data)) + offset;
    for (int b = 0; b < state_buffers_; ++b) run.state[b] = slot.state[b] + offset;
    view.runs.push_back(run);
  }
  view.steps = optimizer_->steps();
  view.scaler = optimizer_->loss_scaler_state();
  view.queue = queue_.get();
  return view;
}

Range Zero::saved_by_this_rank(const Unit& unit) const {
  const std::int64_t ranks = comm_.size();
  const std::int64_t each = (unit.count + ranks - 1) / ranks;
  const std::int64_t first = std::min(unit.count, comm_.rank() * each);
  return {first, std::min(each, unit.count - first)};
}

void Zero::restore(const RestoredCounters& counters) {
  optimizer_->restore(counters.steps, counters.scaler);
  if (device::needs_master(dtype_)) {
    for (const device::Slot& slot : optimizer_->slots()) {
      queue_->cast(dtype_, slot.param.data, DType::f32, slot.master, slot.count());
    }
  }
  allgather_shards();
  queue_->synchronize();
}

}  // namespace dtrain::parallel::zero
