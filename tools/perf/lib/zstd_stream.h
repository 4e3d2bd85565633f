// SPDX-License-Identifier: GPL-2.0
//
// perf's compressed records (perf record -z): one zstd stream runs through all the
// PERF_RECORD_COMPRESSED records of a file, and a record's bytes may end inside a perf record
// that the next compressed record completes.
#ifndef PBID_LIB_ZSTD_STREAM_H_
#define PBID_LIB_ZSTD_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pbid/result.h"

typedef struct ZSTD_DCtx_s ZSTD_DCtx;
typedef struct ZSTD_CCtx_s ZSTD_CCtx;

namespace pbid {
namespace internal {

class ZstdDecompressor {
 public:
  ZstdDecompressor();
  ~ZstdDecompressor();
  ZstdDecompressor(const ZstdDecompressor&) = delete;
  ZstdDecompressor& operator=(const ZstdDecompressor&) = delete;

  // Appends what in[0, n) decompresses to to *out, at most max_out bytes (perf's bound for one
  // record: HEADER_COMPRESSED's mmap_len). Errors name `offset`, the compressed record's.
  Status Decompress(const uint8_t* in, size_t n, uint64_t max_out, std::vector<uint8_t>* out,
                    uint64_t offset);
  // Whether the stream stands between zstd blocks, where a writer's flush leaves it: anywhere
  // else, the last record's payload was cut short.
  bool AtBlockBoundary() const;

 private:
  ZSTD_DCtx* ctx_;
  size_t hint_ = 0;  // zstd's last "next input size": 0 at a frame's end
};

class ZstdCompressor {
 public:
  // level: 1..22, as perf's --compression-level.
  static Result<std::unique_ptr<ZstdCompressor>> Create(int level);
  ~ZstdCompressor();
  ZstdCompressor(const ZstdCompressor&) = delete;
  ZstdCompressor& operator=(const ZstdCompressor&) = delete;

  // The most bytes one record of CompressToRecords decompresses to.
  static constexpr size_t kMaxInputPerRecord = size_t{32} << 10;
  // Appends PERF_RECORD_COMPRESSED records holding in[0, n) to *out, flushed: a reader can
  // decompress everything so far. Each record's payload holds whole zstd blocks of at most
  // kMaxInputPerRecord bytes, so that every record decompresses to some bytes: perf 6.1 takes
  // a record that yields none for an error.
  Status CompressToRecords(const uint8_t* in, size_t n, std::vector<uint8_t>* out);

 private:
  ZstdCompressor() = default;
  ZSTD_CCtx* ctx_ = nullptr;
};

}  // namespace internal
}  // namespace pbid

#endif  // PBID_LIB_ZSTD_STREAM_H_
