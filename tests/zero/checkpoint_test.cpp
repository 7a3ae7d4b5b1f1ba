// Checkpoints written by one world load on another: every element reaches
// the rank that owns it now, whatever the old and new shard layouts; files
// that are missing, truncated, corrupt, foreign or of another model are
// refused on every rank and nothing is written.

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/error.hpp"
#include "parallel/zero/checkpoint.hpp"
#include "parallel/zero/checkpoint_files.hpp"
#include "ucx/harness.hpp"

namespace dtrain::test {
namespace {

using parallel::zero::CheckpointView;
using parallel::zero::load_checkpoint;
using parallel::zero::RestoredCounters;
using parallel::zero::save_checkpoint;
using parallel::zero::ShardRun;

const std::vector<std::vector<std::int64_t>> kShapes = {{3, 5}, {7}, {2, 2, 2}, {}};  // 31 elements
constexpr std::int64_t kElements = 31;

// Element g's values in version `v` of the model.
float weight_of(std::int64_t g, int v = 0) { return 0.5f * static_cast<float>(g) + 1.0f + 1000.0f * static_cast<float>(v); }
float moment_of(std::int64_t g, int b, int v = 0) {
  return (b == 0 ? -static_cast<float>(g) : static_cast<float>(g * g)) + static_cast<float>(v);
}

// One rank's shard of the model as a ZeRO rank lays it out: units (runs of
// the global elements) each split into `world` equal padded shards, of which
// this rank owns the `rank`-th. The buffers hold `fill` until loaded.
class FakeShard {
 public:
  FakeShard(int rank, int world, const std::vector<std::int64_t>& unit_ends, int state_buffers, float fill,
            const std::vector<std::vector<std::int64_t>>& shapes = kShapes) {
    std::int64_t unit_first = 0;
    for (std::int64_t unit_end : unit_ends) {
      const std::int64_t size = unit_end - unit_first;
      const std::int64_t shard = (size + world - 1) / world;
      const std::int64_t first = std::min(unit_end, unit_first + rank * shard);
      const std::int64_t last = std::min(unit_end, first + shard);
      if (last > first) spans_.push_back({first, last - first});
      unit_first = unit_end;
    }
    std::int64_t total = 0;
    for (const auto& span : spans_) total += span.second;
    weights_.assign(static_cast<std::size_t>(total), fill);
    state_.assign(static_cast<std::size_t>(state_buffers), std::vector<float>(static_cast<std::size_t>(total), fill));

    view_.queue = queue_.get();
    view_.stage = 2;
    view_.dtype = DType::bf16;
    view_.kind = optim::Kind::adamw;
    view_.state_buffers = state_buffers;
    for (const auto& shape : shapes) view_.parameters.push_back({DType::bf16, shape});
    std::int64_t offset = 0;
    for (const auto& [first, count] : spans_) {
      ShardRun run;
      run.global_first = first;
      run.count = count;
      run.weights = weights_.data() + offset;
      for (int b = 0; b < state_buffers; ++b) run.state[b] = state_[static_cast<std::size_t>(b)].data() + offset;
      view_.runs.push_back(run);
      offset += count;
    }
  }

  CheckpointView& view() { return view_; }

  // Fills the buffers with version `v` of the global elements they hold.
  void fill_from_model(int v = 0) {
    for (const ShardRun& run : view_.runs) {
      for (std::int64_t k = 0; k < run.count; ++k) {
        run.weights[k] = weight_of(run.global_first + k, v);
        for (int b = 0; b < view_.state_buffers; ++b) run.state[b][k] = moment_of(run.global_first + k, b, v);
      }
    }
  }

  void expect_model(int v = 0) const {
    for (const ShardRun& run : view_.runs) {
      for (std::int64_t k = 0; k < run.count; ++k) {
        const std::int64_t g = run.global_first + k;
        ASSERT_EQ(run.weights[k], weight_of(g, v)) << "element " << g;
        for (int b = 0; b < view_.state_buffers; ++b) {
          ASSERT_EQ(run.state[b][k], moment_of(g, b, v)) << "element " << g;
        }
      }
    }
  }

  void expect_all(float value) const {
    for (float w : weights_) ASSERT_EQ(w, value);
    for (const auto& buffer : state_) {
      for (float s : buffer) ASSERT_EQ(s, value);
    }
  }

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> spans_;
  std::vector<float> weights_;
  std::vector<std::vector<float>> state_;
  std::shared_ptr<device::Queue> queue_ = device::make_host_queue();  // the runs are host memory
  CheckpointView view_;
};

// The shard file of `rank` that the checkpoint in `dir` names.
std::string shard_file(const std::string& dir, int rank) {
  const std::string path = parallel::zero::metadata_path(dir);
  const auto metadata = parallel::zero::parse_metadata(parallel::zero::read_file(path), path);
  return parallel::zero::shard_path(dir, rank, metadata.generation);
}

// The names of the files in `dir`, sorted.
std::vector<std::string> files_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The files of the checkpoint in `dir` and of it only: the metadata and
// one shard per rank of the saving world.
std::vector<std::string> committed_files(const std::string& dir, int world) {
  std::vector<std::string> names{"metadata"};
  for (int r = 0; r < world; ++r) names.push_back(std::filesystem::path(shard_file(dir, r)).filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

const std::vector<std::int64_t> kLayerUnits = {15, 22, 30, 31};  // one unit per parameter
const std::vector<std::int64_t> kOneUnit = {kElements};

class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    // A parameterised test's name ends in "/N": one directory, not two, so
    // that TearDown removes all of it.
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(test.begin(), test.end(), '/', '_');
    dir_ = std::filesystem::temp_directory_path() / ("dtrain-checkpoint-" + std::to_string(::getpid()) + "-" + test);
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Saves the model from `world` ranks laid out in `units`.
  void save(int world, const std::vector<std::int64_t>& units, const std::string& dir) {
    run_world(world, [&](comm::Communicator& comm) {
      FakeShard shard(comm.rank(), world, units, 2, 0.0f);
      shard.fill_from_model();
      shard.view().steps = 7;
      shard.view().scaler = {256.0f, 3};
      save_checkpoint(comm, shard.view(), dir);
    });
  }

  // Loading on `world` ranks fails on every rank with `status`, mentioning
  // `words`, and leaves every buffer as it was.
  void expect_refused(int world, const std::string& words, dt_status status = DT_ERR_INVALID_ARGUMENT) {
    run_world(world, [&](comm::Communicator& comm) {
      FakeShard shard(comm.rank(), world, kOneUnit, 2, -7.0f);
      try {
        load_checkpoint(comm, shard.view(), dir_.string());
        ADD_FAILURE() << "the load was not refused";
      } catch (const Error& e) {
        EXPECT_EQ(e.status(), status) << e.what();
        EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      }
      shard.expect_all(-7.0f);
    });
  }

  std::filesystem::path dir_;
};

class Reshard : public Checkpoint, public ::testing::WithParamInterface<std::pair<int, int>> {};

TEST_P(Reshard, EveryElementReachesItsNewOwner) {
  const auto [saved_on, loaded_on] = GetParam();
  save(saved_on, kLayerUnits, dir_.string());
  run_world(loaded_on, [&](comm::Communicator& comm) {
    FakeShard shard(comm.rank(), loaded_on, kOneUnit, 2, -1.0f);
    const RestoredCounters counters = load_checkpoint(comm, shard.view(), dir_.string());
    EXPECT_EQ(counters.steps, 7);
    EXPECT_EQ(counters.scaler.scale, 256.0f);
    EXPECT_EQ(counters.scaler.clean_steps, 3);
    shard.expect_model();
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, Reshard,
                         ::testing::Values(std::pair{4, 2}, std::pair{4, 3}, std::pair{4, 4}, std::pair{2, 4},
                                           std::pair{3, 1}, std::pair{1, 3}));

TEST_F(Checkpoint, MetadataDescribesTheGlobalTensors) {
  save(2, kLayerUnits, dir_.string());
  const std::string text = parallel::zero::read_file(parallel::zero::metadata_path(dir_.string()));
  for (const char* line : {"world 2\n", "stage 2\n", "dtype bfloat16\n", "optimizer adamw\n", "steps 7\n",
                           "elements 31\n", "parameters 4\n", "parameter 0 3,5\n", "parameter 1 7\n",
                           "parameter 2 2,2,2\n", "parameter 3 -\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " missing from\n" << text;
  }
}

TEST_F(Checkpoint, MissingDirectoryIsRefused) { expect_refused(2, "cannot read"); }

TEST_F(Checkpoint, TruncatedShardIsRefused) {
  save(4, kLayerUnits, dir_.string());
  const auto path = shard_file(dir_.string(), 1);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);
  expect_refused(2, std::filesystem::path(shard_file(dir_.string(), 1)).filename().string());
}

TEST_F(Checkpoint, CorruptShardIsRefused) {
  save(4, kLayerUnits, dir_.string());
  std::fstream file(shard_file(dir_.string(), 2), std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(-4, std::ios::end);
  file.put('\x7f');
  file.close();
  expect_refused(3, "checksum");
}

TEST_F(Checkpoint, EditedMetadataIsRefused) {
  save(2, kLayerUnits, dir_.string());
  const auto path = parallel::zero::metadata_path(dir_.string());
  std::string text = parallel::zero::read_file(path);
  text.replace(text.find("steps 7"), 7, "steps 8");
  std::ofstream(path, std::ios::trunc) << text;
  expect_refused(2, "checksum");
}

TEST_F(Checkpoint, TruncatedMetadataIsRefused) {
  save(2, kLayerUnits, dir_.string());
  const auto path = parallel::zero::metadata_path(dir_.string());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  expect_refused(2, "metadata");
}

TEST_F(Checkpoint, ShardOfAnotherCheckpointIsRefused) {
  save(2, kLayerUnits, dir_.string());
  const std::string other = dir_.string() + "-other";
  save(2, kOneUnit, other);
  std::filesystem::copy_file(shard_file(other, 0), shard_file(dir_.string(), 0),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove_all(other);
  expect_refused(2, std::filesystem::path(shard_file(dir_.string(), 0)).filename().string());
}

TEST_F(Checkpoint, OtherParametersAreRefused) {
  save(2, kLayerUnits, dir_.string());
  run_world(2, [&](comm::Communicator& comm) {
    FakeShard shard(comm.rank(), 2, kOneUnit, 2, -7.0f);
    shard.view().parameters[1].shape = {6, 1};
    try {
      load_checkpoint(comm, shard.view(), dir_.string());
      ADD_FAILURE() << "the load was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("parameter 1 has shape [7], not [6, 1]"), std::string::npos) << e.what();
    }
    shard.expect_all(-7.0f);
  });
}

TEST_F(Checkpoint, AnotherOptimizerIsRefused) {
  save(2, kLayerUnits, dir_.string());
  run_world(2, [&](comm::Communicator& comm) {
    FakeShard shard(comm.rank(), 2, kOneUnit, 1, -7.0f);
    shard.view().kind = optim::Kind::sgd;
    EXPECT_THROW(load_checkpoint(comm, shard.view(), dir_.string()), Error);
    shard.expect_all(-7.0f);
  });
}

// One rank's failure reaches all: the rank that can read its files must not
// go on with a model the others did not load.
TEST_F(Checkpoint, OneRanksMissingShardFailsEveryRank) {
  save(4, kOneUnit, dir_.string());
  std::filesystem::remove(shard_file(dir_.string(), 3));
  // Shard 3 holds elements [24, 31), which on 2 ranks only rank 1 owns.
  expect_refused(2, "failed on rank 1");
}

TEST_F(Checkpoint, UnwritableDirectoryFailsEveryRankWithIo) {
  std::filesystem::create_directories(dir_);
  const std::string blocker = (dir_ / "file").string();
  std::ofstream(blocker) << "not a directory";
  run_world(2, [&](comm::Communicator& comm) {
    FakeShard shard(comm.rank(), 2, kOneUnit, 2, 1.0f);
    try {
      save_checkpoint(comm, shard.view(), blocker + "/checkpoint");
      ADD_FAILURE() << "the save did not fail";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_IO) << e.what();
    }
  });
}


TEST_F(Checkpoint, SavingAgainKeepsOnlyTheNewFiles) {
  save(4, kLayerUnits, dir_.string());
  const std::string first = shard_file(dir_.string(), 0);
  save(2, kLayerUnits, dir_.string());
  EXPECT_NE(shard_file(dir_.string(), 0), first) << "a save wrote over the files of the checkpoint before it";
  EXPECT_EQ(files_in(dir_), committed_files(dir_.string(), 2));
}

// What an interrupted save leaves (files of a generation no metadata names,
// a temporary metadata) is not read, and the next save removes it. Other
// files in the directory are the caller's and stay.
TEST_F(Checkpoint, LeftoversOfAnInterruptedSaveAreIgnoredThenRemoved) {
  save(2, kLayerUnits, dir_.string());
  for (const char* name : {"shard-0-00000000deadbeef.bin", "shard-1-00000000deadbeef.bin", "metadata.tmp-42"}) {
    std::ofstream(dir_ / name) << "half written";
  }
  std::ofstream(dir_ / "notes.txt") << "the caller's";
  run_world(3, [&](comm::Communicator& comm) {
    FakeShard shard(comm.rank(), 3, kOneUnit, 2, -1.0f);
    load_checkpoint(comm, shard.view(), dir_.string());
    shard.expect_model();
  });
  save(2, kLayerUnits, dir_.string());
  std::vector<std::string> expected = committed_files(dir_.string(), 2);
  expected.push_back("notes.txt");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(files_in(dir_), expected);
}

// A checkpoint of format 1 (shard-<r>.bin, no generation) still loads, and
// a save over it replaces it only when it commits.
TEST_F(Checkpoint, FormatOneStillLoads) {
  save(2, kLayerUnits, dir_.string());
  const std::string path = parallel::zero::metadata_path(dir_.string());
  std::string text = parallel::zero::read_file(path);
  const auto metadata = parallel::zero::parse_metadata(text, path);
  for (int r = 0; r < 2; ++r) {
    std::filesystem::rename(shard_file(dir_.string(), r), parallel::zero::shard_path(dir_.string(), r, ""));
  }
  text = text.substr(0, text.rfind("sha256 "));
  text.replace(0, text.find("world "), "dtrain-zero-checkpoint 1\n");
  std::ofstream(path, std::ios::trunc) << text << "sha256 " << parallel::zero::sha256_hex(text) << "\n";
  run_world(2, [&](comm::Communicator& comm) {
    FakeShard shard(comm.rank(), 2, kOneUnit, 2, -1.0f);
    load_checkpoint(comm, shard.view(), dir_.string());
    shard.expect_model();
  });
  save(2, kOneUnit, dir_.string());
  EXPECT_EQ(files_in(dir_), committed_files(dir_.string(), 2));
}

// A save into a file system that fills up at any point of it (twenty
// levels of free space, from none to half again what a checkpoint needs) fails
// with DT_ERR_IO on every rank or succeeds; either way the directory then
// holds exactly one whole checkpoint, the new one only if the save
// succeeded. A small tmpfs is mounted over the test's directory.
TEST_F(Checkpoint, FullFileSystemLeavesThePreviousCheckpoint) {
  std::filesystem::create_directories(dir_);
  if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=4m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs (" << std::strerror(errno) << "; needs root or CAP_SYS_ADMIN)";
  }
  struct Unmount {
    const std::filesystem::path& dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{dir_};

  constexpr int kWorld = 2;
  const std::vector<std::vector<std::int64_t>> shapes = {{200, 300}, {1000}};  // 61000 elements, 0.7 MB saved
  const std::vector<std::int64_t> units = {60000, 61000};
  const std::string dir = (dir_ / "checkpoint").string();
  const auto save_version = [&](int v) {
    std::vector<dt_status> outcome(kWorld, DT_OK);
    run_world(kWorld, [&](comm::Communicator& comm) {
      FakeShard shard(comm.rank(), kWorld, units, 2, 0.0f, shapes);
      shard.fill_from_model(v);
      try {
        save_checkpoint(comm, shard.view(), dir);
      } catch (const Error& e) {
        outcome[static_cast<std::size_t>(comm.rank())] = e.status();
      }
    });
    EXPECT_EQ(outcome[0], outcome[1]) << "the ranks disagree whether the save worked";
    return outcome[0];
  };
  ASSERT_EQ(save_version(0), DT_OK);
  const std::uintmax_t needed = std::filesystem::file_size(shard_file(dir, 0)) * kWorld + 4096 * 4;

  int committed = 0;
  int failures = 0;
  for (int level = 0; level < 20; ++level) {
    struct statvfs fs {};
    ASSERT_EQ(::statvfs(dir.c_str(), &fs), 0);
    const std::uintmax_t free_bytes = fs.f_bavail * fs.f_frsize;
    const std::uintmax_t leave = needed * static_cast<std::uintmax_t>(level) / 12;
    if (free_bytes > leave) {
      std::ofstream filler(dir_ / "filler", std::ios::binary | std::ios::trunc);
      filler << std::string(free_bytes - leave, 'x');
    }
    const int version = level + 1;
    const dt_status status = save_version(version);
    ASSERT_TRUE(status == DT_OK || status == DT_ERR_IO) << "level " << level << ": status " << status;
    if (status == DT_OK) committed = version;
    if (status == DT_ERR_IO) ++failures;
    std::filesystem::remove(dir_ / "filler");

    EXPECT_EQ(files_in(dir), committed_files(dir, kWorld)) << "level " << level;
    run_world(3, [&](comm::Communicator& comm) {
      FakeShard shard(comm.rank(), 3, {61000}, 2, -1.0f, shapes);
      load_checkpoint(comm, shard.view(), dir);
      shard.expect_model(committed);
    });
  }
  EXPECT_GT(committed, 0) << "no level had room for a checkpoint";
  EXPECT_GT(failures, 5) << "the file system seldom filled";
}

}  // namespace
}  // namespace dtrain::test
