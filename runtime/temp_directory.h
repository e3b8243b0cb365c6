// A private temporary directory (mode 0700) removed with everything in it when the object goes away.
#pragma once

#include <filesystem>
#include <string>

namespace hi {

class TempDirectory {
 public:
  /// Creates `<parent>/<prefix>XXXXXX` with mkdtemp; parent defaults to $TMPDIR or /tmp.
  /// Throws std::runtime_error naming the path when it cannot be created.
  explicit TempDirectory(const std::string& prefix, const std::filesystem::path& parent = {});
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  ~TempDirectory();

  const std::filesystem::path& path() const { return path_; }
  /// Gives up ownership: the directory is no longer removed (after a successful rename into place).
  void release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

/// Writes `size` bytes to `path` (created 0600, truncated) and fsyncs the file before returning, so a rename
/// published after this call never exposes a partially written file after a crash. Throws naming the path.
void write_file_synced(const std::filesystem::path& path, const char* data, size_t size);
/// fsyncs a directory so that entries created or renamed in it are durable. Errors are ignored: some file
/// systems refuse to fsync directories, and durability is best effort there.
void sync_directory(const std::filesystem::path& path);
/// Reads the whole file into `contents`; false when it cannot be opened or read.
bool read_file(const std::filesystem::path& path, std::string& contents);

}  // namespace hi
