#include "placed_tensor.hpp"

#include <cmath>
#include <random>

namespace dtrain::test {

std::vector<double> random_values(DType dtype, std::size_t count, unsigned seed, double low, double high) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  std::vector<double> values(count);
  for (double& v : values) v = stored(dtype, uniform(rng));
  return values;
}

double epsilon(DType dtype) {
  switch (dtype) {
    case DType::f16: return std::ldexp(1.0, -10);
    case DType::bf16: return std::ldexp(1.0, -7);
    case DType::f64: return std::ldexp(1.0, -52);
    default: return std::ldexp(1.0, -23);
  }
}

double underflow(DType dtype) {
  switch (dtype) {
    case DType::f16: return std::ldexp(1.0, -25);
    case DType::bf16: return std::ldexp(1.0, -134);
    case DType::f64: return std::ldexp(1.0, -1075);
    default: return std::ldexp(1.0, -150);
  }
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double rel, double abs,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double bound = abs + rel * std::fabs(want[i]);
    if (!(std::fabs(got[i] - want[i]) <= bound)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << want[i] << " within "
                    << bound;
      if (++reported == 5) return;
    }
  }
}

}  // namespace dtrain::test
