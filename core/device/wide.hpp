// Integer sums and products wrap alike on every device: they are computed in
// the unsigned type of the same width, where wrapping is defined behaviour
// (and vectorises the same). Wide<T> is that type; floating types are their
// own. Types only, so host loops and CUDA kernels both use it.
#pragma once

#include <type_traits>

namespace dtrain::device {

template <typename T, bool = std::is_integral_v<T>>
struct WideOf {
  using type = T;
};
template <typename T>
struct WideOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

}  // namespace dtrain::device
