#include "parallel/zero/durable_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

#include "base/error.hpp"
#include "base/fd.hpp"

namespace dtrain::parallel::zero {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  raise(DT_ERR_IO, "cannot " + what + " " + path + ": " + std::strerror(error));
}

std::string parent_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// Writes all of `bytes` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return 0;
}

// Writes and fsyncs the file; returns 0 or the errno of the failure, having
// removed the file.
int write_file(const std::string& path, std::string_view bytes) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return errno;
  int error = write_all(fd.get(), bytes);
  if (error == 0 && ::fsync(fd.get()) != 0) error = errno;
  // close() reports a write the file system deferred (NFS, a full quota).
  if (::close(fd.release()) != 0 && error == 0) error = errno;
  if (error != 0) ::unlink(path.c_str());
  return error;
}

}  // namespace

void write_durably(const std::string& path, std::string_view bytes) {
  if (const int error = write_file(path, bytes)) fail("write checkpoint file", path, error);
  sync_directory(parent_of(path));
}

void replace_durably(const std::string& path, std::string_view bytes) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  if (const int error = write_file(temporary, bytes)) fail("write checkpoint file", path, error);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail("replace checkpoint file", path, error);
  }
  sync_directory(parent_of(path));
}

void sync_directory(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0) fail("sync checkpoint directory", dir, errno);
}

}  // namespace dtrain::parallel::zero
