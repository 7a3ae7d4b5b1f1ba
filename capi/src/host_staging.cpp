#include "host_staging.hpp"

#include <string>

#include "base/error.hpp"

namespace dtrain::capi {

CheckedTensor HostStaging::stage(const DLTensor* tensor, const char* name, bool back) {
  CheckedTensor checked = with_layout(tensor, call_.view(tensor, name));
  if (checked.view.memory == Memory::host) return checked;
  for (const Copy& other : copies_) {
    if ((back || other.back) && views_overlap(checked.view, other.placed)) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " overlaps " + other.name);
    }
  }
  Copy& copy = copies_.emplace_back(Copy{checked.view, name, std::vector<std::byte>(checked.view.bytes()), back});
  device::Queue& queue = call_.queue();
  queue.copy(copy.host.data(), copy.placed.data, copy.host.size());
  queue.synchronize();
  checked.view = host_view(copy.host.data(), checked.view.count, checked.view.dtype);
  return checked;
}

void HostStaging::finish() {
  for (const Copy& copy : copies_) {
    if (copy.back) call_.queue().copy(copy.placed.data, copy.host.data(), copy.host.size());
  }
  call_.finish();
}

}  // namespace dtrain::capi
