// An argument as the C API parsed it: its value, or this rank's refusal of
// it. Collective calls take their tensors this way so that a refusal found
// while parsing one rank's arguments is raised inside the call's agreement,
// where every rank hears of it, and not before the call, which would leave
// the other ranks waiting for a rank that never comes.
#pragma once

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace dtrain {

template <typename T>
class Parsed {
 public:
  // A value parsed already (or made by the library itself).
  Parsed(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor): views pass as themselves

  // This rank's refusal: get() rethrows it.
  static Parsed refused(std::exception_ptr why) { return Parsed(std::move(why)); }

  // The value, or rethrows the refusal. Callers ask where the refusal
  // belongs in their order of checks.
  const T& get() const {
    if (!value_) std::rethrow_exception(refusal_);
    return *value_;
  }

 private:
  explicit Parsed(std::exception_ptr why) : refusal_(std::move(why)) {}

  std::optional<T> value_;
  std::exception_ptr refusal_;
};

// Runs `parse` and keeps what it returns, or what it threw.
template <typename Parse>
auto parse(Parse&& parse) -> Parsed<std::invoke_result_t<Parse>> {
  using Value = std::invoke_result_t<Parse>;
  try {
    return Parsed<Value>(parse());
  } catch (...) {
    return Parsed<Value>::refused(std::current_exception());
  }
}

}  // namespace dtrain
