// Parsed arguments (base/parsed.hpp): what the C API hands a collective call
// is its value, or the refusal that the call raises where it belongs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/error.hpp"
#include "base/parsed.hpp"
#include "base/tensor_list.hpp"

namespace dtrain {
namespace {

TEST(Parsed, AValueIsReturnedAsItWasParsed) {
  const Parsed<int> parsed = parse([] { return 7; });
  EXPECT_EQ(parsed.get(), 7);
  const Parsed<std::string> given(std::string("made by the library"));
  EXPECT_EQ(given.get(), "made by the library");
}

TEST(Parsed, ARefusalIsRaisedEveryTimeTheValueIsAskedFor) {
  int runs = 0;
  const Parsed<int> parsed = parse([&]() -> int {
    ++runs;
    raise(DT_ERR_INVALID_ARGUMENT, "x: tensor is NULL");
  });
  EXPECT_EQ(runs, 1);  // parsing throws nothing out of parse()
  for (int ask = 0; ask < 2; ++ask) {
    try {
      parsed.get();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
      EXPECT_STREQ(e.what(), "x: tensor is NULL");
    }
  }
  EXPECT_EQ(runs, 1);
}

TEST(Parsed, AListKeepsTheFirstTensorItRefuses) {
  float values[4] = {};
  std::int64_t shape[1] = {4};
  DLTensor good{values, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  const DLTensor* list[] = {&good, nullptr};
  const ParsedTensors parsed =
      parse([&] { return check_tensors(list, "params", Placement::host, CudaDevices{}); });
  try {
    parsed.get();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "params[1]: tensor is NULL");
  }
  const DLTensor* one[] = {&good};
  const ParsedTensors accepted = parse([&] { return check_tensors(one, "params", Placement::host, CudaDevices{}); });
  ASSERT_EQ(accepted.get().size(), 1u);
  EXPECT_EQ(accepted.get()[0].view.count, 4);
  EXPECT_EQ(accepted.get()[0].layout, (TensorLayout{DType::f32, {4}}));
}

}  // namespace
}  // namespace dtrain
