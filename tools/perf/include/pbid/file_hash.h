// SPDX-License-Identifier: GPL-2.0
//
// The file identity of the OpenTelemetry specification (profiles, mappings), "htlhash": for a
// file that names itself by no build ID (no GNU note, a vendor binary stripped of it) an
// identity computed from its bytes. SHA-256 over
//   the first 4096 bytes || the last 4096 bytes || the file's length as a big-endian u64
// (the two ranges overlap for a file under 8 KiB; nothing is padded), truncated to 16 bytes.
//
// Its limit, by design: a change that keeps the file's length and touches neither its first
// nor its last 4 KiB leaves the hash as it was. It tells files apart, it does not prove two
// are the same; Documentation/file-identities.md says what each consumer does with it.
#ifndef PBID_FILE_HASH_H_
#define PBID_FILE_HASH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pbid/result.h"

namespace pbid {

class FileHash {
 public:
  static constexpr size_t kSize = 16;
  // The part hashed at each end of the file.
  static constexpr uint64_t kPartSize = 4096;

  FileHash() = default;
  static FileHash FromBytes(const uint8_t (&bytes)[kSize]);
  // Exactly 32 hex digits, either case.
  static Result<FileHash> FromHex(std::string_view hex, std::string_view field = "file_hash");

  const uint8_t* data() const { return bytes_.data(); }
  // 32 lower-case hex digits, as the OpenTelemetry profiler writes it.
  std::string ToHex() const;

  friend bool operator==(const FileHash& a, const FileHash& b) { return a.bytes_ == b.bytes_; }
  friend bool operator!=(const FileHash& a, const FileHash& b) { return !(a == b); }
  friend bool operator<(const FileHash& a, const FileHash& b) { return a.bytes_ < b.bytes_; }

 private:
  std::array<uint8_t, kSize> bytes_{};
};

// The hash of the open file fd (read with pread: its offset is left alone; not closed).
// `name` names it in errors. An empty file has a hash too (of its length alone).
Result<FileHash> ComputeFileHashFd(int fd, const std::string& name);
// The hash of a regular file at path.
Result<FileHash> ComputeFileHash(const std::string& path);
// The hash of bytes in memory, as if they were a file's.
FileHash ComputeFileHashMemory(const void* data, size_t size);

}  // namespace pbid

#endif  // PBID_FILE_HASH_H_
