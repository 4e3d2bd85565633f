// SPDX-License-Identifier: GPL-2.0
#include <cstddef>
#include <cstring>

#include "byte_io.h"
#include "pbid/records.h"

namespace pbid {

namespace {

// (offset, width) of every scalar field of perf_event_attr up to PERF_ATTR_SIZE_VER8; the
// flags bitfield word at offset 40 is handled separately.
struct Field {
  uint16_t off;
  uint8_t width;
};
constexpr Field kFields[] = {
    {0, 4},   {4, 4},   {8, 8},   {16, 8},  {24, 8},  {32, 8},  {48, 4}, {52, 4},
    {56, 8},  {64, 8},  {72, 8},  {80, 8},  {88, 4},  {92, 4},  {96, 8}, {104, 4},
    {108, 2}, {110, 2}, {112, 4}, {116, 4}, {120, 8}, {128, 8},
};
constexpr size_t kFlagsOffset = 40;

void SwapFields(uint8_t* p, size_t size) {
  for (const Field& f : kFields) {
    if (f.off + f.width > size)
      break;
    if (f.width == 8) {
      uint64_t v;
      memcpy(&v, p + f.off, 8);
      v = internal::Swap64(v);
      memcpy(p + f.off, &v, 8);
    } else if (f.width == 4) {
      uint32_t v;
      memcpy(&v, p + f.off, 4);
      v = internal::Swap32(v);
      memcpy(p + f.off, &v, 4);
    } else {
      uint16_t v;
      memcpy(&v, p + f.off, 2);
      v = internal::Swap16(v);
      memcpy(p + f.off, &v, 2);
    }
  }
  if (size >= kFlagsOffset + 8) {
    uint64_t v;
    memcpy(&v, p + kFlagsOffset, 8);
    v = internal::RevBitsInBytes(v);
    memcpy(p + kFlagsOffset, &v, 8);
  }
}

}  // namespace

Result<perf_event_attr> DecodeAttr(const uint8_t* p, size_t size, bool swap, uint64_t offset) {
  if (size < PERF_ATTR_SIZE_VER0) {
    return Error("attr.size", offset + 4,
                 "attr size " + std::to_string(size) + " below PERF_ATTR_SIZE_VER0 (64)");
  }
  perf_event_attr attr;
  memset(&attr, 0, sizeof(attr));
  size_t n = size < sizeof(attr) ? size : sizeof(attr);
  for (size_t i = sizeof(attr); i < size; i++) {
    if (p[i] != 0) {
      return Error("attr", offset + i,
                   "attr of " + std::to_string(size) + " bytes uses fields unknown to this build");
    }
  }
  uint8_t* dst = reinterpret_cast<uint8_t*>(&attr);
  memcpy(dst, p, n);
  if (swap)
    SwapFields(dst, n);
  attr.size = static_cast<uint32_t>(n);
  return attr;
}

std::vector<uint8_t> EncodeAttr(const perf_event_attr& attr, bool swap, uint32_t size) {
  std::vector<uint8_t> out(size, 0);
  perf_event_attr copy = attr;
  copy.size = size;
  size_t n = size < sizeof(copy) ? size : sizeof(copy);
  memcpy(out.data(), &copy, n);
  if (swap)
    SwapFields(out.data(), n);
  return out;
}

}  // namespace pbid
