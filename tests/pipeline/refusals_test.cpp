// Bad arguments to every dt_pipeline_schedule_* call: the documented status,
// a message naming the argument, and nothing allocated or written.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>

#include "dtrain.h"

namespace {

dt_pipeline_schedule_options options(dt_pipeline_schedule_kind kind, int stages, int microbatches,
                                     int chunks = DT_UNDEF) {
  dt_pipeline_schedule_options opts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  opts.kind = kind;
  opts.stages = stages;
  opts.microbatches = microbatches;
  opts.chunks = chunks;
  return opts;
}

// Creation fails with DT_ERR_INVALID_ARGUMENT, a message containing each of
// `words`, and `out` untouched.
void expect_refused(const dt_pipeline_schedule_options* opts, std::initializer_list<const char*> words) {
  dt_pipeline_schedule* const untouched = reinterpret_cast<dt_pipeline_schedule*>(0x1234);
  dt_pipeline_schedule* out = untouched;
  EXPECT_EQ(dt_pipeline_schedule_create(&out, opts), DT_ERR_INVALID_ARGUMENT);
  const std::string message = dt_error_last();
  for (const char* word : words) EXPECT_NE(message.find(word), std::string::npos) << message;
  EXPECT_EQ(out, untouched);
}

TEST(PipelineScheduleRefusals, OptionsInit) {
  dt_pipeline_schedule_options opts;
  std::memset(&opts, 0x5a, sizeof opts);
  ASSERT_EQ(dt_pipeline_schedule_options_init(&opts, DT_PIPELINE_SCHEDULE_OPTIONS_VERSION), DT_OK);
  const dt_pipeline_schedule_options init = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  EXPECT_EQ(std::memcmp(&opts, &init, sizeof opts), 0);
  EXPECT_EQ(opts.kind, DT_PIPELINE_1F1B);
  EXPECT_EQ(opts.stages, DT_UNDEF);
  EXPECT_EQ(dt_pipeline_schedule_options_init(nullptr, DT_PIPELINE_SCHEDULE_OPTIONS_VERSION), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_options_init(&opts, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_options_init(&opts, DT_PIPELINE_SCHEDULE_OPTIONS_VERSION + 1),
            DT_ERR_INVALID_ARGUMENT);
}

TEST(PipelineScheduleRefusals, NullPointersAndVersions) {
  dt_pipeline_schedule_options opts = options(DT_PIPELINE_1F1B, 2, 2);
  EXPECT_EQ(dt_pipeline_schedule_create(nullptr, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  expect_refused(nullptr, {"opts is NULL"});
  opts.version = 0;
  expect_refused(&opts, {"opts", "version"});
  opts.version = DT_PIPELINE_SCHEDULE_OPTIONS_VERSION + 1;
  expect_refused(&opts, {"opts", "version"});
  EXPECT_EQ(dt_pipeline_schedule_destroy(nullptr), DT_OK);
}

TEST(PipelineScheduleRefusals, EachBadFieldIsNamed) {
  const auto kind = [](int raw) {
    dt_pipeline_schedule_options opts = options(DT_PIPELINE_1F1B, 2, 2);
    std::memcpy(&opts.kind, &raw, sizeof raw);  // a value outside the enum, as C may pass
    return opts;
  };
  for (int raw : {-1, 4, DT_UNDEF}) {
    const dt_pipeline_schedule_options opts = kind(raw);
    expect_refused(&opts, {"opts->kind"});
  }
  for (int stages : {0, -3}) {
    const dt_pipeline_schedule_options opts = options(DT_PIPELINE_GPIPE, stages, 4);
    expect_refused(&opts, {"opts->stages", "at least 1"});
  }
  const dt_pipeline_schedule_options unset = options(DT_PIPELINE_GPIPE, DT_UNDEF, 4);
  expect_refused(&unset, {"opts->stages is unset"});
  for (int microbatches : {0, -1, DT_UNDEF}) {
    const dt_pipeline_schedule_options opts = options(DT_PIPELINE_ZB_H1, 4, microbatches);
    expect_refused(&opts, {"opts->microbatches"});
  }
  for (dt_pipeline_schedule_kind single : {DT_PIPELINE_GPIPE, DT_PIPELINE_1F1B, DT_PIPELINE_ZB_H1}) {
    for (int chunks : {0, 2}) {
      const dt_pipeline_schedule_options opts = options(single, 4, 4, chunks);
      expect_refused(&opts, {"opts->chunks"});
    }
  }
  for (int chunks : {1, 0, -2}) {
    const dt_pipeline_schedule_options opts = options(DT_PIPELINE_INTERLEAVED_1F1B, 4, 4, chunks);
    expect_refused(&opts, {"opts->chunks", "at least 2"});
  }
  const dt_pipeline_schedule_options uneven = options(DT_PIPELINE_INTERLEAVED_1F1B, 4, 6, 2);
  expect_refused(&uneven, {"opts->microbatches = 6", "multiple", "stages = 4"});
  const dt_pipeline_schedule_options huge = options(DT_PIPELINE_1F1B, 1024, 1025);
  expect_refused(&huge, {"opts->stages x microbatches x chunks", "1048576"});
  const dt_pipeline_schedule_options largest = options(DT_PIPELINE_GPIPE, 1, DT_PIPELINE_SCHEDULE_MAX_UNITS);
  dt_pipeline_schedule* s = nullptr;
  EXPECT_EQ(dt_pipeline_schedule_create(&s, &largest), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_pipeline_schedule_destroy(s), DT_OK);
}

TEST(PipelineScheduleRefusals, ReadingOutOfRange) {
  const dt_pipeline_schedule_options opts = options(DT_PIPELINE_1F1B, 3, 4);
  dt_pipeline_schedule* s = nullptr;
  ASSERT_EQ(dt_pipeline_schedule_create(&s, &opts), DT_OK);
  size_t length = 0;
  int peak = 0;
  double bubble = 0;
  dt_pipeline_action action{DT_PIPELINE_SEND_GRAD, 7, 7, 7};
  const dt_pipeline_action before = action;
  for (int rank : {-1, 3, INT_MAX}) {
    EXPECT_EQ(dt_pipeline_schedule_length(s, rank, &length), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(dt_error_last()).find("rank = " + std::to_string(rank)), std::string::npos);
    EXPECT_EQ(dt_pipeline_schedule_action(s, rank, 0, &action), DT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(dt_pipeline_schedule_peak_in_flight(s, rank, &peak), DT_ERR_INVALID_ARGUMENT);
  }
  ASSERT_EQ(dt_pipeline_schedule_length(s, 1, &length), DT_OK);
  EXPECT_EQ(dt_pipeline_schedule_action(s, 1, length, &action), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("index = " + std::to_string(length)), std::string::npos);
  EXPECT_EQ(std::memcmp(&action, &before, sizeof action), 0) << "a refused read wrote its output";

  EXPECT_EQ(dt_pipeline_schedule_length(nullptr, 0, &length), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "s is NULL");
  EXPECT_EQ(dt_pipeline_schedule_length(s, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  EXPECT_EQ(dt_pipeline_schedule_action(nullptr, 0, 0, &action), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_action(s, 0, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_bubble_fraction(nullptr, &bubble), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_bubble_fraction(s, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_peak_in_flight(nullptr, 0, &peak), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_peak_in_flight(s, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_schedule_destroy(s), DT_OK);
}

TEST(PipelineScheduleDefaults, InterleavedRunsTwoChunksAndOthersOne) {
  for (dt_pipeline_schedule_kind kind :
       {DT_PIPELINE_GPIPE, DT_PIPELINE_1F1B, DT_PIPELINE_INTERLEAVED_1F1B, DT_PIPELINE_ZB_H1}) {
    const dt_pipeline_schedule_options opts = options(kind, 2, 4);
    dt_pipeline_schedule* s = nullptr;
    ASSERT_EQ(dt_pipeline_schedule_create(&s, &opts), DT_OK) << dt_error_last();
    size_t length = 0;
    ASSERT_EQ(dt_pipeline_schedule_length(s, 0, &length), DT_OK);
    int most = 0;
    for (size_t i = 0; i < length; ++i) {
      dt_pipeline_action a;
      ASSERT_EQ(dt_pipeline_schedule_action(s, 0, i, &a), DT_OK);
      most = a.chunk > most ? a.chunk : most;
    }
    EXPECT_EQ(most + 1, kind == DT_PIPELINE_INTERLEAVED_1F1B ? 2 : 1) << "kind " << kind;
    dt_pipeline_schedule_destroy(s);
  }
}

}  // namespace
