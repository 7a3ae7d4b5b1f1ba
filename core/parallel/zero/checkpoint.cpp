#include "parallel/zero/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "base/error.hpp"
#include "parallel/zero/checkpoint_files.hpp"
#include "parallel/zero/checkpoint_metadata.hpp"
#include "parallel/zero/durable_file.hpp"

namespace dtrain::parallel::zero {

namespace {

// Every rank's string, by rank: lengths first, then the strings padded to
// the longest, since an allgather moves equal sizes.
std::vector<std::string> allgather_strings(comm::Communicator& comm, const std::string& local) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::int64_t length = static_cast<std::int64_t>(local.size());
  std::vector<std::int64_t> lengths(ranks);
  comm.wait(comm.allgather(host_view(&length, 1, DType::i64),
                           host_view(lengths.data(), static_cast<std::int64_t>(ranks), DType::i64)),
            -1);

  const std::int64_t longest = std::max<std::int64_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  std::string send = local;
  send.resize(static_cast<std::size_t>(longest));
  std::string all(static_cast<std::size_t>(longest) * ranks, '\0');
  comm.wait(comm.allgather(host_view(send.data(), longest, DType::u8),
                           host_view(all.data(), longest * static_cast<std::int64_t>(ranks), DType::u8)),
            -1);

  std::vector<std::string> strings;
  for (std::size_t r = 0; r < ranks; ++r) {
    strings.push_back(all.substr(r * static_cast<std::size_t>(longest), static_cast<std::size_t>(lengths[r])));
  }
  return strings;
}

// Runs `work` on this rank, then tells every rank how every rank fared: when
// any failed, all throw `status` with the lowest failing rank's message, so
// no rank goes on believing a collective step worked.
template <typename Work>
void on_every_rank(comm::Communicator& comm, dt_status status, const char* what, Work&& work) {
  std::string failure;
  try {
    work();
  } catch (const std::exception& e) {
    failure = e.what();
    if (failure.empty()) failure = "failed";
  }
  const std::vector<std::string> failures = allgather_strings(comm, failure);
  for (std::size_t r = 0; r < failures.size(); ++r) {
    if (failures[r].empty()) continue;
    raise(status, std::string(what) + " failed on rank " + std::to_string(r) + ": " + failures[r]);
  }
}

std::vector<std::int64_t> layout_shape(const TensorLayout& layout) { return layout.shape; }

// Copies `count` floats between a run's memory and host memory.
void copy_floats(const CheckpointView& view, float* dst, const float* src, std::int64_t count) {
  view.queue->copy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
}

ShardData gather_shard(const CheckpointView& view, int rank, int world) {
  ShardData shard;
  shard.rank = rank;
  shard.world = world;
  shard.state_buffers = view.state_buffers;
  shard.state.resize(static_cast<std::size_t>(view.state_buffers));
  for (const ShardRun& run : view.runs) {
    if (run.count == 0) continue;
    shard.runs.push_back({run.global_first, run.count});
    const std::size_t at = shard.weights.size();
    shard.weights.resize(at + static_cast<std::size_t>(run.count));
    copy_floats(view, shard.weights.data() + at, run.weights, run.count);
    for (int b = 0; b < view.state_buffers; ++b) {
      std::vector<float>& state = shard.state[static_cast<std::size_t>(b)];
      state.resize(at + static_cast<std::size_t>(run.count));
      copy_floats(view, state.data() + at, run.state[b], run.count);
    }
  }
  view.queue->synchronize();
  return shard;
}

std::string describe_shapes(const std::vector<std::vector<std::int64_t>>& shapes, std::size_t i) {
  std::string text = "[";
  for (std::size_t d = 0; d < shapes[i].size(); ++d) text += (d ? ", " : "") + std::to_string(shapes[i][d]);
  return text + "]";
}

// Refuses a checkpoint of other parameters or another optimizer.
void check_compatible(const Metadata& metadata, const CheckpointView& into, const std::string& dir) {
  const std::string where = "checkpoint " + dir + ": ";
  if (metadata.dtype != into.dtype) {
    raise(DT_ERR_INVALID_ARGUMENT, where + "parameters are " + dtype_name(metadata.dtype) + ", not " +
                                       dtype_name(into.dtype));
  }
  if (metadata.kind != into.kind || metadata.state_buffers != into.state_buffers) {
    raise(DT_ERR_INVALID_ARGUMENT, where + "written by another optimizer (kind or state buffers differ)");
  }
  if (metadata.shapes.size() != into.parameters.size()) {
    raise(DT_ERR_INVALID_ARGUMENT, where + "has " + std::to_string(metadata.shapes.size()) + " parameters, not " +
                                       std::to_string(into.parameters.size()));
  }
  for (std::size_t i = 0; i < metadata.shapes.size(); ++i) {
    if (metadata.shapes[i] != layout_shape(into.parameters[i])) {
      std::vector<std::vector<std::int64_t>> mine{layout_shape(into.parameters[i])};
      raise(DT_ERR_INVALID_ARGUMENT, where + "parameter " + std::to_string(i) + " has shape " +
                                         describe_shapes(metadata.shapes, i) + ", not " + describe_shapes(mine, 0));
    }
  }
}

// This rank's elements, read from the saved shards into scratch buffers laid
// out like ShardData (run after run), so that nothing of the caller's is
// written before every rank has succeeded.
ShardData read_needed(const Metadata& metadata, const CheckpointView& into, const std::string& dir) {
  ShardData needed;
  needed.state_buffers = into.state_buffers;
  std::vector<std::int64_t> offsets;  // of each of into.runs in the scratch buffers
  std::int64_t total = 0;
  for (const ShardRun& run : into.runs) {
    offsets.push_back(total);
    total += run.count;
  }
  needed.weights.assign(static_cast<std::size_t>(total), 0.0f);
  needed.state.assign(static_cast<std::size_t>(into.state_buffers), std::vector<float>(static_cast<std::size_t>(total)));

  for (int saved = 0; saved < metadata.world; ++saved) {
    const ShardRecord& record = metadata.shards[static_cast<std::size_t>(saved)];
    const auto overlaps = [&](const ElementRun& a, const ShardRun& b) {
      return a.first < b.global_first + b.count && b.global_first < a.first + a.count;
    };
    const bool wanted = std::any_of(record.runs.begin(), record.runs.end(), [&](const ElementRun& a) {
      return std::any_of(into.runs.begin(), into.runs.end(), [&](const ShardRun& b) { return overlaps(a, b); });
    });
    if (!wanted) continue;

    const std::string path = shard_path(dir, saved, metadata.generation);
    const ShardData shard = decode_shard(read_file(path), path, saved, metadata.world, metadata.state_buffers, record);
    std::int64_t source = 0;  // offset of the saved run in the shard's buffers
    for (const ElementRun& from : shard.runs) {
      for (std::size_t k = 0; k < into.runs.size(); ++k) {
        const ShardRun& to = into.runs[k];
        const std::int64_t first = std::max(from.first, to.global_first);
        const std::int64_t last = std::min(from.first + from.count, to.global_first + to.count);
        if (first >= last) continue;
        const auto src = static_cast<std::size_t>(source + first - from.first);
        const auto dst = static_cast<std::size_t>(offsets[k] + first - to.global_first);
        const auto n = static_cast<std::size_t>(last - first);
        std::copy_n(shard.weights.begin() + static_cast<std::ptrdiff_t>(src), n,
                    needed.weights.begin() + static_cast<std::ptrdiff_t>(dst));
        for (int b = 0; b < into.state_buffers; ++b) {
          const auto& from_state = shard.state[static_cast<std::size_t>(b)];
          std::copy_n(from_state.begin() + static_cast<std::ptrdiff_t>(src), n,
                      needed.state[static_cast<std::size_t>(b)].begin() + static_cast<std::ptrdiff_t>(dst));
        }
      }
      source += from.count;
    }
  }
  return needed;
}

// Removes the files that the metadata in `dir` does not name, or nothing
// when there is no readable metadata.
void remove_uncommitted_files(const std::string& dir) {
  try {
    const std::string path = metadata_path(dir);
    remove_stale_files(dir, parse_metadata(read_file(path), path).generation);
  } catch (const Error&) {
  }
}

}  // namespace

// The save runs in three steps, each confirmed by every rank before the next:
//  1. every rank writes its shard under a new generation's name and fsyncs
//     it; nothing refers to these files yet, so the checkpoint in `dir` is
//     untouched;
//  2. rank 0 replaces the metadata with one naming the new generation (a
//     rename, then an fsync of the directory): the commit;
//  3. rank 0 removes the files of earlier generations and of interrupted saves.
// A failure before the commit leaves the previous checkpoint as it was.
void save_checkpoint(comm::Communicator& comm, const CheckpointView& view, const std::string& dir) {
  ShardData shard = gather_shard(view, comm.rank(), comm.size());
  const std::string generation = allgather_strings(comm, comm.rank() == 0 ? new_generation() : "")[0];
  const std::string path = shard_path(dir, comm.rank(), generation);
  std::string record;  // "<bytes> <sha256>" of this rank's file
  try {
    on_every_rank(comm, DT_ERR_IO, "saving the checkpoint", [&] {
      std::error_code error;
      std::filesystem::create_directories(dir, error);
      if (error) raise(DT_ERR_IO, "cannot create checkpoint directory " + dir + ": " + error.message());
      const std::string bytes = encode_shard(shard);
      write_durably(path, bytes);
      record = std::to_string(bytes.size()) + " " + sha256_hex(bytes);
    });
  } catch (const Error& e) {
    // Every rank learnt that a rank failed, so none commits: this rank's
    // file is useless. (When the exchange itself failed, a rank cannot know
    // that rank 0 did not commit, and its file stays for the next save to
    // remove.)
    std::error_code ignored;
    if (e.status() == DT_ERR_IO) std::filesystem::remove(path, ignored);
    throw;
  }

  // Rank 0 learns every shard's size, checksum and runs, and commits them.
  std::string runs;
  for (const ElementRun& run : shard.runs) runs += " " + std::to_string(run.first) + " " + std::to_string(run.count);
  const std::vector<std::string> records = allgather_strings(comm, record + runs);
  try {
    on_every_rank(comm, DT_ERR_IO, "saving the checkpoint", [&] {
      if (comm.rank() != 0) return;
      Metadata metadata;
      metadata.generation = generation;
      metadata.world = comm.size();
      metadata.stage = view.stage;
      metadata.dtype = view.dtype;
      metadata.kind = view.kind;
      metadata.state_buffers = view.state_buffers;
      metadata.steps = view.steps;
      metadata.scaler = view.scaler;
      for (const TensorLayout& layout : view.parameters) metadata.shapes.push_back(layout_shape(layout));
      for (const std::string& text : records) {
        std::istringstream in(text);
        ShardRecord shard_record;
        in >> shard_record.bytes >> shard_record.sha256;
        for (ElementRun run; in >> run.first >> run.count;) shard_record.runs.push_back(run);
        metadata.shards.push_back(std::move(shard_record));
      }
      replace_durably(metadata_path(dir), format_metadata(metadata));
    });
  } catch (const Error& e) {
    // Rank 0 failed to commit, or to make the commit durable: whichever
    // generation the metadata names now stays, the other's files go.
    if (comm.rank() == 0 && e.status() == DT_ERR_IO) remove_uncommitted_files(dir);
    throw;
  }
  if (comm.rank() == 0) remove_stale_files(dir, generation);
}

RestoredCounters load_checkpoint(comm::Communicator& comm, const CheckpointView& into, const std::string& dir) {
  Metadata metadata;
  ShardData needed;
  on_every_rank(comm, DT_ERR_INVALID_ARGUMENT, "loading the checkpoint", [&] {
    const std::string path = metadata_path(dir);
    metadata = parse_metadata(read_file(path), path);
    check_compatible(metadata, into, dir);
    needed = read_needed(metadata, into, dir);
  });

  // Every rank has everything: only now is anything written.
  std::size_t offset = 0;
  for (const ShardRun& run : into.runs) {
    const auto n = static_cast<std::size_t>(run.count);
    if (n == 0) continue;
    copy_floats(into, run.weights, needed.weights.data() + offset, run.count);
    for (int b = 0; b < into.state_buffers; ++b) {
      copy_floats(into, run.state[b], needed.state[static_cast<std::size_t>(b)].data() + offset, run.count);
    }
    offset += n;
  }
  // The copies read `needed`, which goes when this returns.
  into.queue->synchronize();
  return {metadata.steps, metadata.scaler};
}

}  // namespace dtrain::parallel::zero
