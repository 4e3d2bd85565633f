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
#include <vector>

#include "pbid/result.h"

namespace pbid {
namespace internal {

inline uint16_t Swap16(uint16_t v) {
  return __builtin_bswap16(v);
}
inline uint32_t Swap32(uint32_t v) {
  return __builtin_bswap32(v);
}
inline uint64_t Swap64(uint64_t v) {
  return __builtin_bswap64(v);
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

  Result<uint64_t> U64(size_t off, const char* field) const {
    if (!Has(off, 8))
      return OutOfBounds(off, 8, field);
    uint64_t v;
    memcpy(&v, data_ + off, 8);
    return swap_ ? Swap64(v) : v;
  }
  Result<uint32_t> U32(size_t off, const char* field) const {
    if (!Has(off, 4))
      return OutOfBounds(off, 4, field);
    uint32_t v;
    memcpy(&v, data_ + off, 4);
    return swap_ ? Swap32(v) : v;
  }
  Result<uint16_t> U16(size_t off, const char* field) const {
    if (!Has(off, 2))
      return OutOfBounds(off, 2, field);
    uint16_t v;
    memcpy(&v, data_ + off, 2);
    return swap_ ? Swap16(v) : v;
  }
  // Unchecked variants for callers that validated the whole span with Has() first.
  uint64_t U64At(size_t off) const {
    uint64_t v;
    memcpy(&v, data_ + off, 8);
    return swap_ ? Swap64(v) : v;
  }
  uint32_t U32At(size_t off) const {
    uint32_t v;
    memcpy(&v, data_ + off, 4);
    return swap_ ? Swap32(v) : v;
  }
  uint16_t U16At(size_t off) const {
    uint16_t v;
    memcpy(&v, data_ + off, 2);
    return swap_ ? Swap16(v) : v;
  }

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
  void U16(uint16_t v) { Raw(swap_ ? Swap16(v) : v); }
  void U32(uint32_t v) { Raw(swap_ ? Swap32(v) : v); }
  void U64(uint64_t v) { Raw(swap_ ? Swap64(v) : v); }
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
  void Patch16(size_t off, uint16_t v) {
    v = swap_ ? Swap16(v) : v;
    memcpy(buf_.data() + off, &v, 2);
  }
  void Patch32(size_t off, uint32_t v) {
    v = swap_ ? Swap32(v) : v;
    memcpy(buf_.data() + off, &v, 4);
  }
  void Patch64(size_t off, uint64_t v) {
    v = swap_ ? Swap64(v) : v;
    memcpy(buf_.data() + off, &v, 8);
  }

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

  std::vector<uint8_t> buf_;
  bool swap_;
};

}  // namespace internal
}  // namespace pbid

#endif  // PBID_LIB_BYTE_IO_H_
