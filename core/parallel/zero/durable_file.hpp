// Files that survive a crash: written, then flushed to the disk (fsync)
// together with the directory entry that names them, so that after a power
// loss or a kill a reader finds either the whole file or none.
#pragma once

#include <string>
#include <string_view>

namespace dtrain::parallel::zero {

// Creates (or truncates) `path`, writes `bytes` and fsyncs the file and its
// directory. On failure removes what it wrote and throws DT_ERR_IO naming
// the path and the system's reason (a full disk: "No space left on device").
void write_durably(const std::string& path, std::string_view bytes);

// Replaces `path` by a file holding `bytes` in one atomic step: written
// durably under a temporary name beside it, then renamed over it and the
// directory fsynced. A reader sees the old file or the new one, never a
// part; a crash before the rename leaves the old one and a temporary file
// whose name starts with `path` + ".tmp-". Throws DT_ERR_IO naming the path.
void replace_durably(const std::string& path, std::string_view bytes);

// fsyncs directory `dir`, making the entries created, renamed or removed in
// it durable. Throws DT_ERR_IO naming it.
void sync_directory(const std::string& dir);

}  // namespace dtrain::parallel::zero
