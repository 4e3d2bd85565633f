// SPDX-License-Identifier: GPL-2.0
//
// Shared by the libFuzzer targets: every target takes the bytes of a perf.data file (file or
// pipe mode), so one seed corpus serves them all.
#ifndef PBID_FUZZ_FUZZ_UTIL_H_
#define PBID_FUZZ_FUZZ_UTIL_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace pbid::fuzz {

// The input as a regular file that the commands open by path: a memfd, rewritten for each
// input, named through /proc/self/fd.
class InputFile {
 public:
  InputFile() {
    fd_ = memfd_create("pbid-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) {
      perror("memfd_create");
      abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& Write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 ||
        (size && pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)))
      abort();
    lseek(fd_, 0, SEEK_SET);
    return path_;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace pbid::fuzz

#endif  // PBID_FUZZ_FUZZ_UTIL_H_
