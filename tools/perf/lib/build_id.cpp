// SPDX-License-Identifier: GPL-2.0
#include "pbid/build_id.h"

#include <cstring>
#include "byte_io.h"

namespace pbid {

namespace {}  // namespace

Result<BuildId> BuildId::FromBytes(const void* data, size_t size) {
  if (size == 0 || size > kMaxSize) {
    return Error("build_id.size",
                 "size " + std::to_string(size) + " outside 1.." + std::to_string(kMaxSize));
  }
  BuildId id;
  memcpy(id.bytes_.data(), data, size);
  id.size_ = static_cast<uint8_t>(size);
  return id;
}

Result<BuildId> BuildId::FromHex(std::string_view hex, std::string_view field) {
  if (hex.empty() || hex.size() % 2 != 0 || hex.size() > 2 * kMaxSize) {
    return Error(std::string(field), "expected an even number of 2.." +
                                         std::to_string(2 * kMaxSize) + " hex digits, got " +
                                         std::to_string(hex.size()));
  }
  BuildId id;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = internal::HexDigitValue(hex[i]);
    int lo = internal::HexDigitValue(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      return Error(std::string(field), i, "not a hex digit");
    }
    id.bytes_[i / 2] = static_cast<uint8_t>(hi << 4 | lo);
  }
  id.size_ = static_cast<uint8_t>(hex.size() / 2);
  return id;
}

std::string BuildId::ToHex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * size_);
  for (size_t i = 0; i < size_; i++) {
    s += kDigits[bytes_[i] >> 4];
    s += kDigits[bytes_[i] & 0xf];
  }
  return s;
}

size_t BuildId::Hash() const {
  // FNV-1a: ids are already uniformly distributed, this only has to mix in the length.
  uint64_t h = 1469598103934665603ULL ^ size_;
  for (size_t i = 0; i < size_; i++) {
    h ^= bytes_[i];
    h *= 1099511628211ULL;
  }
  return static_cast<size_t>(h);
}

const char* BuildIdSourceName(BuildIdSource s) {
  switch (s) {
    case BuildIdSource::kNone: return "none";
    case BuildIdSource::kKernelRecord: return "kernel";
    case BuildIdSource::kSynthesized: return "synthesized";
    case BuildIdSource::kFile: return "file";
    case BuildIdSource::kBpf: return "bpf";
  }
  return "none";
}

}  // namespace pbid
