#include "comm/backends/ucx/mailboxes.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "base/error.hpp"

namespace dtrain::comm::ucx {

namespace {

// kSlots contributions, then two results.
constexpr std::size_t kParts = Mailboxes::kSlots + 2;

std::size_t stride_for(std::size_t capacity) {
  constexpr std::size_t kLine = 64;
  return (sizeof(Mailboxes::Header) + capacity + kLine - 1) / kLine * kLine;
}

[[noreturn]] void fail(const std::string& what) { raise(DT_ERR_UNSUPPORTED, what + ": " + std::strerror(errno)); }

}  // namespace

Mailboxes::Mailboxes(int rank, int size, std::size_t capacity, bool cores_apart)
    : rank_(rank),
      handoff_(cores_apart),
      shared_capacity_(capacity),
      mappings_(static_cast<std::size_t>(size)),
      pids_(static_cast<std::size_t>(size), -1) {
  file_.reset(::memfd_create("dtrain-mailbox", MFD_CLOEXEC));
  if (!file_.valid()) fail("memfd_create");
  const Mapping own = map(file_.get(), capacity, true);
  mappings_[static_cast<std::size_t>(rank)] = own;
  // Stamps start at zero; the first operation is 1.
  for (std::size_t part = 0; part < kParts; ++part) new (own.base + part * own.stride) Header{{0}, 0, 0};
}

Mailboxes::~Mailboxes() {
  for (const Mapping& m : mappings_) {
    if (m.base != nullptr) ::munmap(m.base, m.length);
  }
}

Mailboxes::Mapping Mailboxes::map(int fd, std::size_t capacity, bool writable) {
  Mapping m;
  m.stride = stride_for(capacity);
  m.length = kParts * m.stride;
  // Allocated now, so that a machine short of memory is told here (and the
  // ranks fall back to UCX) rather than in the middle of an allreduce.
  if (writable && ::ftruncate(fd, static_cast<off_t>(m.length)) != 0) fail("sizing the mailbox");
  if (writable && (errno = ::posix_fallocate(fd, 0, static_cast<off_t>(m.length))) != 0) fail("allocating the mailbox");
  void* base = ::mmap(nullptr, m.length, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) fail("mapping a mailbox");
  m.base = static_cast<std::byte*>(base);
  return m;
}

void Mailboxes::attach(int peer, std::int64_t pid, int fd, std::size_t capacity) {
  pids_[static_cast<std::size_t>(peer)] = pid;
  if (peer == rank_) return;
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.valid()) fail("opening rank " + std::to_string(peer) + "'s mailbox " + path);
  mappings_[static_cast<std::size_t>(peer)] = map(file.get(), capacity, false);
}

std::uint64_t Mailboxes::own_address() const {
  return reinterpret_cast<std::uintptr_t>(mappings_[static_cast<std::size_t>(rank_)].base);
}

bool Mailboxes::read(int peer, std::uint64_t address, void* into, std::size_t bytes) const {
  auto* to = static_cast<std::byte*>(into);
  while (bytes > 0) {
    const iovec local{to, bytes};
    const iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), bytes};
    const ssize_t got = ::process_vm_readv(static_cast<pid_t>(pids_[static_cast<std::size_t>(peer)]), &local, 1,
                                           &remote, 1, 0);
    if (got <= 0) {
      if (got == 0) errno = EFAULT;
      return false;
    }
    to += got;
    address += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

bool Mailboxes::can_read(int peer, std::uint64_t address) const {
  if (peer == rank_) return true;
  std::uint64_t word = 0;
  return read(peer, address, &word, sizeof(word));
}

void Mailboxes::close_file(std::size_t shared_capacity) {
  file_.reset();
  shared_capacity_ = shared_capacity;
}

std::uint64_t Mailboxes::publish(std::uint32_t size, std::uint32_t kind) {
  const std::uint64_t stamp = ++published_;
  auto* header = const_cast<Header*>(part_of(rank_, stamp, Part::contribution));
  header->size = size;
  header->kind = kind;
  header->stamp.store(stamp, std::memory_order_release);
  return stamp;
}

void Mailboxes::publish_result(std::uint64_t stamp) {
  const_cast<Header*>(part_of(rank_, stamp, Part::result))->stamp.store(stamp, std::memory_order_release);
}

}  // namespace dtrain::comm::ucx
