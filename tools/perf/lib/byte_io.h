// SPDX-License-Identifier: GPL-2.0
//
// Internal: bounded, endian-aware byte access. Every read is checked against the end of the
// buffer first, and a failed read records which field and which absolute offset it was, so
// parsers never touch memory they have not validated and never lose the error's location.
#ifndef PBID_LIB_BYTE_IO_H_
#define PBID_LIB_BYTE_IO_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pbid/result.h"

namespace pbid {
namespace internal {

// The value of a hex digit, either case; -1 for anything else.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

inline uint16_t Swap16(uint16_t v) {
  return __builtin_bswap16(v);
}
inline uint32_t Swap32(uint32_t v) {
  return __builtin_bswap32(v);
}
inline uint64_t Swap64(uint64_t v) {
  return __builtin_bswap64(v);
}

// v as stored in the other byte order when swap is set: the one place that picks the width.
template <typename T>
T SwapIf(bool swap, T v) {
  static_assert(std::is_unsigned_v<T> && (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8));
  if (!swap)
    return v;
  if constexpr (sizeof(T) == 2)
    return Swap16(v);
  else if constexpr (sizeof(T) == 4)
    return Swap32(v);
  else
    return Swap64(v);
}

// Reverses the bits of every byte: how perf carries attr bitfields across endianness (the
// bitfield word is not byte-swapped, each byte is bit-reversed).
inline uint64_t RevBitsInBytes(uint64_t v) {
  uint8_t b[8];
  memcpy(b, &v, 8);
  for (auto& x : b) {
    uint8_t r = 0;
    for (int i = 0; i < 8; i++)
      r |= ((x >> i) & 1) << (7 - i);
    x = r;
  }
  memcpy(&v, b, 8);
  return v;
}

class ByteReader {
 public:
  // base is the absolute offset of data[0] in the input, used only in error messages.
  ByteReader(const uint8_t* data, size_t size, bool swap, uint64_t base = 0)
      : data_(data), size_(size), swap_(swap), base_(base) {}

  size_t size() const { return size_; }
  uint64_t base() const { return base_; }
  bool swap() const { return swap_; }
  const uint8_t* data() const { return data_; }

  bool Has(size_t off, size_t n) const { return off <= size_ && n <= size_ - off; }

  Result<uint64_t> U64(size_t off, const char* field) const { return Get<uint64_t>(off, field); }
  Result<uint32_t> U32(size_t off, const char* field) const { return Get<uint32_t>(off, field); }
  Result<uint16_t> U16(size_t off, const char* field) const { return Get<uint16_t>(off, field); }
  // Unchecked variants for callers that validated the whole span with Has() first.
  uint64_t U64At(size_t off) const { return At<uint64_t>(off); }
  uint32_t U32At(size_t off) const { return At<uint32_t>(off); }
  uint16_t U16At(size_t off) const { return At<uint16_t>(off); }

  // A NUL-terminated string inside [off, off+max): fails if no NUL is found.
  Result<std::string_view> CString(size_t off, size_t max, const char* field) const {
    if (!Has(off, max))
      return OutOfBounds(off, max, field);
    const void* nul = memchr(data_ + off, 0, max);
    if (nul == nullptr) {
      return Error(field, base_ + off,
                   "string not NUL-terminated within " + std::to_string(max) + " bytes");
    }
    return std::string_view(reinterpret_cast<const char*>(data_ + off),
                            static_cast<const uint8_t*>(nul) - (data_ + off));
  }

  Error OutOfBounds(size_t off, size_t n, const char* field) const {
    return Error(field, base_ + off,
                 "needs " + std::to_string(n) + " bytes, only " +
                     std::to_string(off <= size_ ? size_ - off : 0) + " left");
  }

 private:
  template <typename T>
  T At(size_t off) const {
    T v;
    memcpy(&v, data_ + off, sizeof(T));
    return SwapIf(swap_, v);
  }
  template <typename T>
  Result<T> Get(size_t off, const char* field) const {
    if (!Has(off, sizeof(T)))
      return OutOfBounds(off, sizeof(T), field);
    return At<T>(off);
  }

  const uint8_t* data_;
  size_t size_;
  bool swap_;
  uint64_t base_;
};

// Reads fields one after another, as ByteWriter appends them, so that a record's decoder reads
// like its builder. Unchecked: the caller has checked the record's size against its layout.
class ByteCursor {
 public:
  ByteCursor(const ByteReader& br, size_t off) : br_(br), off_(off) {}

  uint8_t U8() { return br_.data()[off_++]; }
  uint32_t U32() { return Take(br_.U32At(off_), 4); }
  uint64_t U64() { return Take(br_.U64At(off_), 8); }
  void Skip(size_t n) { off_ += n; }
  // The NUL-terminated string from here up to end (checked: it may lack its NUL).
  Result<std::string_view> CString(size_t end, const char* field) const {
    return br_.CString(off_, end - off_, field);
  }
  size_t offset() const { return off_; }

 private:
  template <typename T>
  T Take(T v, size_t n) {
    off_ += n;
    return v;
  }

  ByteReader br_;
  size_t off_;
};

// Appends fields in the target byte order.
class ByteWriter {
 public:
  explicit ByteWriter(bool swap = false) : swap_(swap) {}

  void U8(uint8_t v) { buf_.push_back(v); }
  void U16(uint16_t v) { Raw(SwapIf(swap_, v)); }
  void U32(uint32_t v) { Raw(SwapIf(swap_, v)); }
  void U64(uint64_t v) { Raw(SwapIf(swap_, v)); }
  void Bytes(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  void Zeros(size_t n) { buf_.insert(buf_.end(), n, 0); }
  // The string, its NUL, then zeros up to a multiple of align (counting from the string).
  void PaddedString(std::string_view s, size_t align) {
    size_t len = (s.size() + 1 + align - 1) / align * align;
    Bytes(s.data(), s.size());
    Zeros(len - s.size());
  }
  void PadTo(size_t align) {
    while (buf_.size() % align != 0)
      buf_.push_back(0);
  }
  void Patch16(size_t off, uint16_t v) { Patch(off, v); }
  void Patch32(size_t off, uint32_t v) { Patch(off, v); }
  void Patch64(size_t off, uint64_t v) { Patch(off, v); }

  size_t size() const { return buf_.size(); }
  bool swap() const { return swap_; }
  std::vector<uint8_t>& buffer() { return buf_; }
  const std::vector<uint8_t>& buffer() const { return buf_; }

 private:
  template <typename T>
  void Raw(T v) {
    uint8_t b[sizeof(T)];
    memcpy(b, &v, sizeof(T));
    buf_.insert(buf_.end(), b, b + sizeof(T));
  }
  template <typename T>
  void Patch(size_t off, T v) {
    v = SwapIf(swap_, v);
    memcpy(buf_.data() + off, &v, sizeof(T));
  }

  std::vector<uint8_t> buf_;
  bool swap_;
};

}  // namespace internal
}  // namespace pbid

#endif  // PBID_LIB_BYTE_IO_H_
