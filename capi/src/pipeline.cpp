// Pipeline schedules: dt_pipeline_schedule over parallel::pipeline::Schedule.
// Nothing here communicates; every call checks its arguments and reads or
// builds a schedule.
#include "dtrain/pipeline.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "base/options.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "parallel/pipeline/schedule.hpp"

using dtrain::capi::entry;
using dtrain::capi::require;
namespace pipeline = dtrain::parallel::pipeline;

namespace {

// Size of each released version of dt_pipeline_schedule_options; index = version.
constexpr std::size_t kOptionsSizes[] = {0, sizeof(dt_pipeline_schedule_options)};

constexpr dt_pipeline_schedule_options kDefaultOptions = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;

static_assert(DT_PIPELINE_SCHEDULE_MAX_UNITS == pipeline::kMaxUnits);
static_assert(DT_PIPELINE_GPIPE == static_cast<int>(pipeline::ScheduleKind::gpipe));
static_assert(DT_PIPELINE_1F1B == static_cast<int>(pipeline::ScheduleKind::one_f_one_b));
static_assert(DT_PIPELINE_INTERLEAVED_1F1B == static_cast<int>(pipeline::ScheduleKind::interleaved_1f1b));
static_assert(DT_PIPELINE_ZB_H1 == static_cast<int>(pipeline::ScheduleKind::zb_h1));
static_assert(DT_PIPELINE_FORWARD == static_cast<int>(pipeline::ActionKind::forward));
static_assert(DT_PIPELINE_BACKWARD == static_cast<int>(pipeline::ActionKind::backward));
static_assert(DT_PIPELINE_BACKWARD_INPUT == static_cast<int>(pipeline::ActionKind::backward_input));
static_assert(DT_PIPELINE_BACKWARD_WEIGHT == static_cast<int>(pipeline::ActionKind::backward_weight));
static_assert(DT_PIPELINE_SEND_ACTIVATION == static_cast<int>(pipeline::ActionKind::send_activation));
static_assert(DT_PIPELINE_RECV_ACTIVATION == static_cast<int>(pipeline::ActionKind::recv_activation));
static_assert(DT_PIPELINE_SEND_GRAD == static_cast<int>(pipeline::ActionKind::send_grad));
static_assert(DT_PIPELINE_RECV_GRAD == static_cast<int>(pipeline::ActionKind::recv_grad));

// Refusals name the field as the caller wrote it: opts->stages, not stages.
[[noreturn]] void rethrow_for_options(const dtrain::Error& error) {
  throw dtrain::Error(error.status(), std::string("opts->") + error.what());
}

std::unique_ptr<dt_pipeline_schedule> build(const dt_pipeline_schedule_options* user) {
  const dt_pipeline_schedule_options opts = dtrain::read_options(user, kDefaultOptions, kOptionsSizes, "opts");
  try {
    const pipeline::ScheduleKind kind = pipeline::schedule_kind(dtrain::enum_value(opts.kind));
    const std::optional<int> chunks = opts.chunks == DT_UNDEF ? std::nullopt : std::optional<int>(opts.chunks);
    const pipeline::Shape shape = pipeline::make_shape(kind, opts.stages, opts.microbatches, chunks);
    return std::make_unique<dt_pipeline_schedule>(dt_pipeline_schedule{pipeline::Schedule(kind, shape)});
  } catch (const dtrain::Error& error) {
    rethrow_for_options(error);
  }
}

}  // namespace

extern "C" {

DT_API dt_status dt_pipeline_schedule_options_init(dt_pipeline_schedule_options* opts, unsigned version) {
  return entry([&] { dtrain::init_options(opts, version, kDefaultOptions, kOptionsSizes, "opts"); });
}

DT_API dt_status dt_pipeline_schedule_create(dt_pipeline_schedule** out, const dt_pipeline_schedule_options* opts) {
  return entry([&] {
    require(out, "out");
    require(opts, "opts");
    *out = build(opts).release();
  });
}

DT_API dt_status dt_pipeline_schedule_destroy(dt_pipeline_schedule* s) {
  return entry([&] { delete s; });
}

DT_API dt_status dt_pipeline_schedule_length(const dt_pipeline_schedule* s, int rank, size_t* out) {
  return entry([&] {
    require(s, "s");
    require(out, "out");
    *out = s->impl.actions(rank).size();
  });
}

DT_API dt_status dt_pipeline_schedule_action(const dt_pipeline_schedule* s, int rank, size_t index,
                                             dt_pipeline_action* out) {
  return entry([&] {
    require(s, "s");
    require(out, "out");
    const auto& actions = s->impl.actions(rank);
    if (index >= actions.size()) {
      dtrain::raise(DT_ERR_INVALID_ARGUMENT, "index = " + std::to_string(index) + " is past the end of rank " +
                                                 std::to_string(rank) + "'s " + std::to_string(actions.size()) +
                                                 " actions");
    }
    const pipeline::Action& action = actions[index];
    *out = dt_pipeline_action{static_cast<dt_pipeline_action_kind>(action.kind), action.chunk, action.microbatch,
                              action.peer};
  });
}

DT_API dt_status dt_pipeline_schedule_bubble_fraction(const dt_pipeline_schedule* s, double* out) {
  return entry([&] {
    require(s, "s");
    *require(out, "out") = s->impl.bubble_fraction();
  });
}

DT_API dt_status dt_pipeline_schedule_peak_in_flight(const dt_pipeline_schedule* s, int rank, int* out) {
  return entry([&] {
    require(s, "s");
    require(out, "out");
    *out = s->impl.peak_in_flight(rank);
  });
}

}  // extern "C"
