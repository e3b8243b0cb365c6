// File-system primitives the on-disk cache is built from (code_object_cache.h, cache_inventory.h, cache_stats.h):
// private directories, ownership checks, atomic whole-file replacement, self-checksummed text files, advisory locks,
// and "last used" times kept in file modification times. POSIX only (flock, utimensat, mkdtemp).
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

namespace hi {

/// mkdir -p where every directory created gets mode 0700 (cached code objects are executable code: other users must
/// not be able to plant entries). Existing directories are left as they are. Throws std::runtime_error naming the
/// directory that cannot be created.
void make_private_directories(const std::filesystem::path& path);

/// True when `path` exists, is not a symbolic link, and belongs to the effective user (lstat). Entries failing this
/// are ignored by readers: a shared or planted cache directory must never feed another user's code to us.
bool owned_by_current_user(const std::filesystem::path& path);

/// Why the directories below `root` down to `path` (both given as paths under `root`; `root` itself excluded: it may
/// be a link, e.g. ~/.cache kept elsewhere) are not the cache's own: the first one that is a symbolic link (never
/// followed: through a link, readers would take entries from, and clear or prune delete in, a directory outside the
/// cache), not a directory, or another user's. Empty when each is the current user's directory or does not exist
/// (yet): a writer then creates it. Never throws.
std::string foreign_directory_problem(const std::filesystem::path& root, const std::filesystem::path& path);

/// Replaces `path` with `text` atomically: written to a private temp file in the same directory, fsynced (unless
/// not `durable`), renamed over `path`. A crash leaves the old file or the new one, never a mix (the temp file may
/// stay behind; its name starts with ".tmp-"). Throws std::runtime_error naming the file.
void replace_file_atomically(const std::filesystem::path& path, const std::string& text, bool durable = true);

/// Self-checksummed text: a first line "sha256 <64 hex digits of the rest>\n", then the payload. Written with
/// replace_file_atomically.
void write_checksummed_file(const std::filesystem::path& path, const std::string& payload);
/// Why a checksummed file cannot be trusted.
enum class ChecksumStatus { Ok, Missing, Corrupt };
/// Reads a file written by write_checksummed_file; `payload` is set only when the status is Ok.
ChecksumStatus read_checksummed_file(const std::filesystem::path& path, std::string& payload);

/// Sets the modification time of `path` (a file or directory) to now; errors ignored. How the cache records "last
/// used" without rewriting metadata on every hit.
void touch_path(const std::filesystem::path& path);
/// Modification time of `path` in seconds since the epoch (with nanoseconds as the fraction), or nullopt.
std::optional<double> modification_time(const std::filesystem::path& path);

/// "2024-05-01T12:00:00Z" for `when` (default: now).
std::string utc_timestamp(std::time_t when = std::time(nullptr));

/// Parses a byte count: plain digits, or digits (optionally with a fraction) followed by K, M, G or T (powers of
/// 1024; an optional trailing "B" or "iB", any case): "2147483648", "500M", "2G", "1.5GiB". nullopt for anything else
/// (empty, negative, unknown suffix, overflow).
std::optional<uint64_t> parse_byte_size(const std::string& text);
/// "1.5 GiB", "512 KiB", "37 B".
std::string format_byte_size(uint64_t bytes);

/// An exclusive advisory lock (flock) on a lock file, held until destruction. The lock file is created 0600 when
/// missing. Safe against a concurrent remover: after flock() returns, the lock is only kept when `path` still names
/// the locked file (else it retries), so a remover that unlinks the file while holding the lock never leaves two
/// holders. A process killed while holding it releases it (the kernel closes the descriptor).
class FileLock {
 public:
  /// Blocks until the lock is held. Throws std::runtime_error naming the lock file when it cannot be opened.
  static FileLock acquire(const std::filesystem::path& path);
  /// The lock if nobody holds it now, else nullopt (never blocks). Throws like acquire.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  /// Unlinks the lock file while still holding the lock (for removing a cache entry with its lock).
  void remove_file();
  const std::filesystem::path& path() const { return path_; }

 private:
  FileLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  static std::optional<FileLock> lock(const std::filesystem::path& path, bool wait);
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace hi
