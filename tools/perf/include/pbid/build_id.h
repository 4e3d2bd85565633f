// SPDX-License-Identifier: GPL-2.0
//
// pbid::BuildId: the ELF build ID (NT_GNU_BUILD_ID descriptor) as a small value type that
// carries its own length. sha1 ids are 20 bytes, md5/uuid ids 16, xxhash 8; perf's tables pad
// to 20 with zeros, so the length is what tells "...00" apart from padding.
#ifndef PBID_BUILD_ID_H_
#define PBID_BUILD_ID_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "pbid/result.h"

namespace pbid {

class BuildId {
 public:
  static constexpr size_t kMaxSize = 20;

  // An empty BuildId (size() == 0) exists only so that BuildId can live in containers; the
  // factories below never produce one. Use std::optional<BuildId> or BuildIdSource::kNone to
  // express "no build ID".
  BuildId() = default;

  // Fails when size is 0 or larger than kMaxSize.
  static Result<BuildId> FromBytes(const void* data, size_t size);
  // Accepts 2..40 hex digits (either case), an even count; field names the input in errors.
  static Result<BuildId> FromHex(std::string_view hex, std::string_view field = "build_id");

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t* data() const { return bytes_.data(); }

  // Lower-case hex, 2*size() characters, no padding: the form perf prints.
  std::string ToHex() const;

  // The id zero-padded to kMaxSize bytes, as stored in perf records and tables.
  std::array<uint8_t, kMaxSize> Padded() const { return bytes_; }

  friend bool operator==(const BuildId& a, const BuildId& b) {
    return a.size_ == b.size_ && a.bytes_ == b.bytes_;
  }
  friend bool operator!=(const BuildId& a, const BuildId& b) { return !(a == b); }
  friend bool operator<(const BuildId& a, const BuildId& b) {
    return a.size_ != b.size_ ? a.size_ < b.size_ : a.bytes_ < b.bytes_;
  }

  size_t Hash() const;

 private:
  std::array<uint8_t, kMaxSize> bytes_{};  // bytes past size_ are always zero
  uint8_t size_ = 0;
};

// Where a mapping's build ID came from. Reports split coverage by this.
enum class BuildIdSource : uint8_t {
  kNone = 0,      // no id known (file unreadable, no note, anonymous memory)
  kKernelRecord,  // PERF_RECORD_MISC_MMAP_BUILD_ID set by the kernel on an attr.build_id event
  kSynthesized,   // MMAP2 synthesized by the recorder for an already running process
  kFile,          // read from the file after the MMAP2 arrived (fallback path or reader)
  kBpf,           // from the recorder's BPF program: the kernel read it at sample time
};

// "kernel", "synthesized", "file", "bpf", "none"
const char* BuildIdSourceName(BuildIdSource s);

}  // namespace pbid

template <>
struct std::hash<pbid::BuildId> {
  size_t operator()(const pbid::BuildId& id) const noexcept { return id.Hash(); }
};

#endif  // PBID_BUILD_ID_H_
