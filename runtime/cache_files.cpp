#include "runtime/cache_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "runtime/sha256.h"
#include "runtime/temp_directory.h"

namespace hi {

void make_private_directories(const std::filesystem::path& path) {
  std::filesystem::path partial;
  for (const auto& component : path) {
    partial /= component;
    if (mkdir(partial.c_str(), 0700) == 0 || errno == EEXIST) continue;
    throw std::runtime_error("cannot create cache directory " + partial.string() + ": " + std::strerror(errno));
  }
}

bool owned_by_current_user(const std::filesystem::path& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) return false;
  if (S_ISLNK(info.st_mode)) return false;
  return info.st_uid == geteuid();
}

std::string foreign_directory_problem(const std::filesystem::path& root, const std::filesystem::path& path) {
  std::filesystem::path current = root;
  for (const auto& component : path.lexically_relative(root)) {
    if (component.empty() || component == ".") continue;
    current /= component;
    struct stat info {};
    if (lstat(current.c_str(), &info) != 0)
      return errno == ENOENT ? "" : current.string() + ": " + std::strerror(errno);
    if (S_ISLNK(info.st_mode)) return current.string() + " is a symbolic link (not followed)";
    if (!S_ISDIR(info.st_mode)) return current.string() + " is not a directory";
    if (info.st_uid != geteuid()) return current.string() + " is owned by uid " + std::to_string(info.st_uid);
  }
  return "";
}

void replace_file_atomically(const std::filesystem::path& path, const std::string& text, bool durable) {
  std::filesystem::path directory = path.parent_path();
  std::string pattern = (directory / (".tmp-" + path.filename().string() + "-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());  // mode 0600
  if (fd < 0) throw std::runtime_error("cannot create a temporary file next to " + path.string() + ": " +
                                       std::strerror(errno));
  std::filesystem::path temp(name.data());
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (durable && written + static_cast<size_t>(n) == text.size() && ::fsync(fd) != 0)) {
      int error = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      throw std::runtime_error("cannot write " + temp.string() + ": " + std::strerror(error));
    }
    written += static_cast<size_t>(n);
  }
  if (durable && text.empty()) ::fsync(fd);
  ::close(fd);
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot replace " + path.string() + ": " + std::strerror(error));
  }
  if (durable) sync_directory(directory);
}

void write_checksummed_file(const std::filesystem::path& path, const std::string& payload) {
  replace_file_atomically(path, "sha256 " + sha256_hex(payload) + "\n" + payload);
}

ChecksumStatus read_checksummed_file(const std::filesystem::path& path, std::string& payload) {
  std::string text;
  if (!read_file(path, text)) return ChecksumStatus::Missing;
  constexpr size_t kHeader = 7 + 64 + 1;  // "sha256 " + digest + "\n"
  if (text.size() < kHeader || text.compare(0, 7, "sha256 ") != 0 || text[kHeader - 1] != '\n')
    return ChecksumStatus::Corrupt;
  std::string_view body(text.data() + kHeader, text.size() - kHeader);
  if (sha256_hex(body) != std::string_view(text.data() + 7, 64)) return ChecksumStatus::Corrupt;
  payload.assign(body);
  return ChecksumStatus::Ok;
}

void touch_path(const std::filesystem::path& path) { utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

std::optional<double> modification_time(const std::filesystem::path& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) return std::nullopt;
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) * 1e-9;
}

std::string utc_timestamp(std::time_t when) {
  std::tm utc{};
  gmtime_r(&when, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::optional<uint64_t> parse_byte_size(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0) return std::nullopt;
  size_t number_end = pos;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    size_t fraction_start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == fraction_start) return std::nullopt;
    number_end = pos;
  }
  std::string suffix = text.substr(number_end);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!suffix.empty()) {
    static const std::string kUnits = "KMGT";
    size_t unit = kUnits.find(suffix[0]);
    if (unit == std::string::npos) {
      if (suffix != "B") return std::nullopt;
    } else {
      shift = 10 * static_cast<int>(unit + 1);
      std::string rest = suffix.substr(1);
      if (!rest.empty() && rest != "B" && rest != "IB") return std::nullopt;
    }
  }
  std::string number = text.substr(0, number_end);
  bool has_fraction = number.find('.') != std::string::npos;
  if (!has_fraction) {
    if (number.size() > 19) return std::nullopt;
    uint64_t value = std::stoull(number);
    if (shift > 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
    return value << shift;
  }
  if (shift == 0) return std::nullopt;  // fractions of a byte make no sense
  long double value = std::stold(number) * std::ldexp(1.0L, shift);
  if (value >= 1.8e19L) return std::nullopt;
  return static_cast<uint64_t>(value);
}

std::string format_byte_size(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(text, sizeof text, value < 10 ? "%.1f %s" : "%.0f %s", value, kUnits[unit]);
  return text;
}

std::optional<FileLock> FileLock::lock(const std::filesystem::path& path, bool wait) {
  for (;;) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw std::runtime_error("cannot open lock file " + path.string() + ": " + std::strerror(errno));
    int status;
    do {
      status = ::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB);
    } while (status != 0 && errno == EINTR);
    if (status != 0) {
      int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK) return std::nullopt;
      throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(error));
    }
    // The previous holder may have removed the file after we opened it: our lock is then on an orphan inode.
    struct stat held {}, named {};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      return FileLock(path, fd);
    ::close(fd);
  }
}

FileLock FileLock::acquire(const std::filesystem::path& path) { return *lock(path, /*wait=*/true); }

std::optional<FileLock> FileLock::try_acquire(const std::filesystem::path& path) { return lock(path, false); }

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

void FileLock::remove_file() {
  if (fd_ >= 0) ::unlink(path_.c_str());
}

}  // namespace hi
