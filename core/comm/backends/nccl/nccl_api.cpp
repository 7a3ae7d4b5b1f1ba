#include "comm/backends/nccl/nccl_api.hpp"

#include <dlfcn.h>

#include "comm/backends/nccl/mapping.hpp"

namespace dtrain::comm::nccl {

namespace {

struct Loaded {
  Api table;
  std::string error;  // empty when usable
};

template <typename F>
void resolve(void* library, const char* name, F& out, std::string& error) {
  out = reinterpret_cast<F>(dlsym(library, name));
  if (out == nullptr && error.empty()) error = std::string("libnccl.so.2 has no ") + name;
}

Loaded load() {
  Loaded loaded;
  void* library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.error = "libnccl.so.2 could not be loaded" + (why ? std::string(" (") + why + ")" : std::string());
    return loaded;
  }
  Api& a = loaded.table;
  std::string& e = loaded.error;
  ncclResult_t (*get_version)(int*) = nullptr;
  resolve(library, "ncclGetVersion", get_version, e);
  resolve(library, "ncclGetUniqueId", a.get_unique_id, e);
  resolve(library, "ncclCommInitRankConfig", a.comm_init_rank_config, e);
  resolve(library, "ncclCommSplit", a.comm_split, e);
  resolve(library, "ncclCommAbort", a.comm_abort, e);
  resolve(library, "ncclCommGetAsyncError", a.comm_get_async_error, e);
  resolve(library, "ncclCommCount", a.comm_count, e);
  resolve(library, "ncclCommUserRank", a.comm_user_rank, e);
  resolve(library, "ncclGetErrorString", a.get_error_string, e);
  resolve(library, "ncclGetLastError", a.get_last_error, e);
  resolve(library, "ncclAllReduce", a.all_reduce, e);
  resolve(library, "ncclReduceScatter", a.reduce_scatter, e);
  resolve(library, "ncclAllGather", a.all_gather, e);
  resolve(library, "ncclBroadcast", a.broadcast, e);
  resolve(library, "ncclReduce", a.reduce, e);
  resolve(library, "ncclSend", a.send, e);
  resolve(library, "ncclRecv", a.recv, e);
  resolve(library, "ncclGroupStart", a.group_start, e);
  resolve(library, "ncclGroupEnd", a.group_end, e);
  if (!e.empty()) return loaded;
  if (get_version(&a.version) != ncclSuccess) {
    e = "ncclGetVersion failed";
  } else if (a.version < kMinimumVersion) {
    e = "NCCL " + version_text(a.version) + " is older than " + version_text(kMinimumVersion);
  }
  // The library stays loaded for the life of the process, even when
  // unusable: NCCL may have started threads and registered handlers.
  return loaded;
}

}  // namespace

const Api* api(std::string* why) {
  static const Loaded loaded = load();
  if (why != nullptr) *why = loaded.error;
  return loaded.error.empty() ? &loaded.table : nullptr;
}

}  // namespace dtrain::comm::nccl
