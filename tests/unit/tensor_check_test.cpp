#include <gtest/gtest.h>

#include "base/error.hpp"
#include "base/tensor.hpp"
#include "device/probe.hpp"
#include "common/host_tensor.hpp"

namespace dtrain {
namespace {

using testing::HostTensor;

// Checked as the communicator checks: with this machine's CUDA devices.
dt_status status_of(const DLTensor* t) {
  try {
    check_tensor(t, "x", device::cuda_devices());
    return DT_OK;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x: "), std::string::npos) << "message names the argument";
    return e.status();
  }
}

TEST(TensorCheck, AcceptsEveryContractDtype) {
  const DLDataType accepted[] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},
                                 {kDLInt, 32, 1},   {kDLInt, 64, 1},   {kDLInt, 8, 1},    {kDLUInt, 8, 1}};
  HostTensor<double> t(4);
  for (DLDataType dtype : accepted) {
    t.tensor.dtype = dtype;
    EXPECT_EQ(status_of(&t), DT_OK);
  }
}

TEST(TensorCheck, RefusesOtherDtypes) {
  const DLDataType refused[] = {{kDLInt, 16, 1}, {kDLUInt, 32, 1}, {kDLFloat, 32, 4}, {kDLFloat, 8, 1}, {99, 32, 1}};
  HostTensor<float> t(4);
  for (DLDataType dtype : refused) {
    t.tensor.dtype = dtype;
    EXPECT_EQ(status_of(&t), DT_ERR_INVALID_ARGUMENT);
  }
}

TEST(TensorCheck, CountsElementsAndAppliesByteOffset) {
  HostTensor<float> t(24);
  std::int64_t shape[3] = {2, 3, 4};
  t.tensor.ndim = 3;
  t.tensor.shape = shape;
  t.tensor.byte_offset = 8;
  TensorView view = check_tensor(&t.tensor, "x", device::cuda_devices());
  EXPECT_EQ(view.count, 24);
  EXPECT_EQ(view.bytes(), 96u);
  EXPECT_EQ(view.data, static_cast<void*>(t.values.data() + 2));
  EXPECT_EQ(view.dtype, DType::f32);
}

TEST(TensorCheck, ScalarHasOneElement) {
  HostTensor<float> t(1);
  t.tensor.ndim = 0;
  t.tensor.shape = nullptr;
  EXPECT_EQ(check_tensor(&t.tensor, "x", device::cuda_devices()).count, 1);
}

TEST(TensorCheck, RefusesMalformedTensors) {
  EXPECT_EQ(status_of(nullptr), DT_ERR_INVALID_ARGUMENT);

  HostTensor<float> negative_ndim(4);
  negative_ndim.tensor.ndim = -1;
  EXPECT_EQ(status_of(&negative_ndim), DT_ERR_INVALID_ARGUMENT);

  HostTensor<float> null_shape(4);
  null_shape.tensor.shape = nullptr;
  EXPECT_EQ(status_of(&null_shape), DT_ERR_INVALID_ARGUMENT);

  HostTensor<float> negative_dim(4);
  negative_dim.shape[0] = -4;
  EXPECT_EQ(status_of(&negative_dim), DT_ERR_INVALID_ARGUMENT);

  HostTensor<float> null_data(4);
  null_data.tensor.data = nullptr;
  EXPECT_EQ(status_of(&null_data), DT_ERR_INVALID_ARGUMENT);
}

TEST(TensorCheck, EmptyTensorMayHaveNullData) {
  HostTensor<float> empty(0);
  empty.tensor.data = nullptr;
  EXPECT_EQ(status_of(&empty), DT_OK);
}

TEST(TensorCheck, RefusesSizeOverflow) {
  HostTensor<float> t(1);
  std::int64_t shape[2] = {std::int64_t(1) << 40, std::int64_t(1) << 40};
  t.tensor.ndim = 2;
  t.tensor.shape = shape;
  EXPECT_EQ(status_of(&t), DT_ERR_INVALID_ARGUMENT);
  // Elements fit in int64 but bytes do not.
  std::int64_t bytes_overflow[1] = {std::int64_t(1) << 62};
  t.tensor.ndim = 1;
  t.tensor.shape = bytes_overflow;
  EXPECT_EQ(status_of(&t), DT_ERR_INVALID_ARGUMENT);
}

TEST(TensorCheck, StridesMustBeCompactRowMajor) {
  HostTensor<float> t(6);
  std::int64_t shape[2] = {2, 3};
  t.tensor.ndim = 2;
  t.tensor.shape = shape;
  std::int64_t compact[2] = {3, 1};
  t.tensor.strides = compact;
  EXPECT_EQ(status_of(&t), DT_OK);
  std::int64_t transposed[2] = {1, 2};
  t.tensor.strides = transposed;
  EXPECT_EQ(status_of(&t), DT_ERR_INVALID_ARGUMENT);
  // A dimension of extent 1 may carry any stride (as numpy and torch produce).
  std::int64_t shape_with_one[2] = {1, 6};
  std::int64_t odd_stride[2] = {42, 1};
  t.tensor.shape = shape_with_one;
  t.tensor.strides = odd_stride;
  EXPECT_EQ(status_of(&t), DT_OK);
}

TEST(TensorCheck, DevicesHostCudaAndOthers) {
  HostTensor<float> t(4);
  t.tensor.device = {kDLCUDAHost, 0};
  EXPECT_EQ(status_of(&t), DT_OK);
  // kDLCUDA: accepted where a CUDA device is usable (the memory itself is
  // checked by whoever moves it), refused otherwise.
  t.tensor.device = {kDLCUDA, 0};
  EXPECT_EQ(status_of(&t), device::cuda_device_count() > 0 ? DT_OK : DT_ERR_UNSUPPORTED);
  t.tensor.device = {kDLCUDA, device::cuda_device_count()};  // one past the last device
  EXPECT_EQ(status_of(&t), device::cuda_device_count() > 0 ? DT_ERR_INVALID_ARGUMENT : DT_ERR_UNSUPPORTED);
  t.tensor.device = {kDLOpenCL, 0};
  EXPECT_EQ(status_of(&t), DT_ERR_INVALID_ARGUMENT);
}

// What base decides from the devices the device layer reports, whatever
// this machine has.
TEST(TensorCheck, CudaTensorsFollowTheReportedDevices) {
  HostTensor<float> t(4);
  t.tensor.device = {kDLCUDA, 1};
  const CudaDevices two{2, ""};
  TensorView view = check_tensor(&t.tensor, "x", two);
  EXPECT_EQ(view.memory, Memory::cuda);
  EXPECT_EQ(view.device_id, 1);
  EXPECT_EQ(view.stream, nullptr);

  t.tensor.device = {kDLCUDA, 2};
  try {
    check_tensor(&t.tensor, "x", two);
    ADD_FAILURE() << "device 2 of 2 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "x: CUDA device 2 does not exist (this process sees 2 devices)");
  }

  const CudaDevices none{0, "this build has no CUDA support"};
  try {
    check_tensor(&t.tensor, "x", none);
    ADD_FAILURE() << "a CUDA tensor was accepted without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_UNSUPPORTED);
    EXPECT_STREQ(e.what(), "x: CUDA tensors need a CUDA device, and this build has no CUDA support");
  }

  t.tensor.device = {kDLCUDA, 0};
  try {
    check_host_tensor(&t.tensor, "x");
    ADD_FAILURE() << "check_host_tensor accepted a CUDA tensor";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_UNSUPPORTED);
  }
}

TEST(TensorView, SliceAddressesElements) {
  HostTensor<std::int64_t> t(10);
  TensorView view = check_tensor(&t.tensor, "x", device::cuda_devices());
  TensorView part = view.slice(3, 4);
  EXPECT_EQ(part.data, static_cast<void*>(t.values.data() + 3));
  EXPECT_EQ(part.count, 4);
  EXPECT_EQ(part.bytes(), 32u);
}

}  // namespace
}  // namespace dtrain
