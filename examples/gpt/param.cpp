#include "param.hpp"

#include <algorithm>
#include <cctype>

#include "tensor.hpp"

namespace gpt {

namespace {

dt_tp_shard_kind kind_of(Split s) {
  return s == Split::rows ? DT_TP_SHARD_ROWS : s == Split::columns ? DT_TP_SHARD_COLUMNS : DT_TP_SHARD_QKV;
}

// Views in the weight's own (at most two-dimensional) tp shapes.
int64_t cols_of(const std::vector<int64_t> &shape) { return shape.size() > 1 ? shape[1] : -1; }

}  // namespace

void shard(const Param &p, const std::vector<float> &full, std::vector<float> &local, Group tp, Group ep,
           int heads) {
  local.resize(full.size() / (size_t)(p.split == Split::replicated ? 1 : p.split == Split::experts ? ep.size : tp.size));
  if (p.split == Split::replicated) {
    local = full;
  } else if (p.split == Split::experts) {  // this ep rank's block of experts
    std::copy(full.begin() + (ptrdiff_t)(ep.rank * local.size()),
              full.begin() + (ptrdiff_t)((ep.rank + 1) * local.size()), local.begin());
  } else {
    View from(full.data(), p.full[0], cols_of(p.full)), to(local.data(), p.local[0], cols_of(p.local));
    check(dt_tp_shard(kind_of(p.split), from.get(), to.get(), tp.rank, tp.size, heads, heads), "dt_tp_shard");
  }
}

std::vector<float> unshard(const Param &p, const std::vector<float> &local, Group tp, Group ep, int heads) {
  if (p.split == Split::replicated) return local;
  std::vector<float> full(local.size() * (size_t)(p.split == Split::experts ? ep.size : tp.size));
  if (p.split == Split::experts) {
    View from(local.data(), (int64_t)local.size()), to(full.data(), (int64_t)full.size());
    check(dt_allgather(ep.comm, from.get(), to.get(), nullptr, nullptr), "dt_allgather(ep)");
  } else {
    View from(local.data(), p.local[0], cols_of(p.local)), to(full.data(), p.full[0], cols_of(p.full));
    check(dt_tp_unshard(tp.comm, kind_of(p.split), from.get(), to.get(), heads, heads), "dt_tp_unshard");
  }
  return full;
}

std::string unit_of(const std::string &name) {
  if (name.size() > 1 && name[0] == 'h' && std::isdigit((unsigned char)name[1]))
    return "layer" + name.substr(1, name.find('.') - 1);
  return name.rfind("tok_emb", 0) == 0 || name.rfind("pos_emb", 0) == 0 ? "embed" : "head";
}

}  // namespace gpt
