// SPDX-License-Identifier: GPL-2.0
#include "zstd_stream.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "pbid/record_builder.h"
#include "pbid/records.h"

namespace pbid {
namespace internal {

namespace {

// zstd's block header (ZSTD_blockHeaderSize, which zstd.h exports only to static linking):
// the next input a decoder asks for between two blocks of a frame.
constexpr size_t kBlockHeaderSize = 3;

}  // namespace

ZstdDecompressor::ZstdDecompressor() : ctx_(ZSTD_createDCtx()) {}

ZstdDecompressor::~ZstdDecompressor() {
  ZSTD_freeDCtx(ctx_);
}

Status ZstdDecompressor::Decompress(const uint8_t* in, size_t n, uint64_t max_out,
                                    std::vector<uint8_t>* out, uint64_t offset) {
  if (ctx_ == nullptr) {
    Error e("data.compressed", offset, "cannot create a zstd decompression context");
    e.kind = ErrorKind::kIo;
    return e;
  }
  ZSTD_inBuffer input{in, n, 0};
  uint64_t produced = 0;
  const size_t kStep = ZSTD_DStreamOutSize();
  bool output_full = false;
  while (input.pos < input.size || output_full) {
    // Past the bound, one more byte is asked for only to tell whether there is one.
    size_t room = static_cast<size_t>(std::min<uint64_t>(kStep, max_out - produced));
    size_t ask = room == 0 ? 1 : room;
    size_t old = out->size();
    out->resize(old + ask);
    ZSTD_outBuffer output{out->data() + old, ask, 0};
    size_t in_before = input.pos;
    size_t r = ZSTD_decompressStream(ctx_, &output, &input);
    out->resize(old + output.pos);
    if (ZSTD_isError(r)) {
      return Error("data.compressed", offset,
                   std::string("corrupt compressed payload: zstd: ") + ZSTD_getErrorName(r));
    }
    hint_ = r;
    produced += output.pos;
    if (produced > max_out) {
      return Error("data.compressed", offset,
                   "payload decompresses to more than HEADER_COMPRESSED's mmap_len (" +
                       std::to_string(max_out) + " bytes)");
    }
    output_full = output.pos == ask;
    if (output.pos == 0 && input.pos == in_before) {
      if (input.pos == input.size)
        break;  // a full output buffer, and nothing was left behind it
      return Error("data.compressed", offset, "corrupt compressed payload: zstd made no progress");
    }
  }
  return Ok();
}

bool ZstdDecompressor::AtBlockBoundary() const {
  return hint_ == 0 || hint_ == kBlockHeaderSize;
}

Result<std::unique_ptr<ZstdCompressor>> ZstdCompressor::Create(int level) {
  std::unique_ptr<ZstdCompressor> c(new ZstdCompressor());
  c->ctx_ = ZSTD_createCCtx();
  if (c->ctx_ == nullptr)
    return Error::Of(ErrorKind::kIo, "compression", "cannot create a zstd compression context");
  size_t r = ZSTD_CCtx_setParameter(c->ctx_, ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(r)) {
    return Error::Of(ErrorKind::kInvalidArgument, "compression-level",
                     std::string("zstd: ") + ZSTD_getErrorName(r));
  }
  return c;
}

ZstdCompressor::~ZstdCompressor() {
  ZSTD_freeCCtx(ctx_);
}

Status ZstdCompressor::CompressToRecords(const uint8_t* in, size_t n, std::vector<uint8_t>* out) {
  // As perf: a record's payload is at most PERF_SAMPLE_MAX_SIZE less its header, less one.
  constexpr size_t kMaxPayload = kMaxRecordSize + 1 - 8 - 1;
  static_assert(kMaxInputPerRecord + 256 < kMaxPayload, "a flushed slice fits one record");
  for (size_t done = 0; done < n;) {
    size_t take = std::min(kMaxInputPerRecord, n - done);
    ZSTD_inBuffer input{in + done, take, 0};
    size_t start = out->size();
    out->resize(start + 8 + kMaxPayload);
    ZSTD_outBuffer output{out->data() + start + 8, kMaxPayload, 0};
    size_t r = ZSTD_compressStream2(ctx_, &output, &input, ZSTD_e_flush);
    if (ZSTD_isError(r)) {
      out->resize(start);
      return Error::Of(ErrorKind::kIo, "compression", std::string("zstd: ") + ZSTD_getErrorName(r));
    }
    if (r != 0 || input.pos != take) {  // cannot happen with the bound above; never half a slice
      out->resize(start);
      return Error::Of(ErrorKind::kIo, "compression", "a flushed slice did not fit one record");
    }
    out->resize(start + 8 + output.pos);
    uint32_t type = kRecordCompressed;
    uint16_t misc = 0, size = static_cast<uint16_t>(8 + output.pos);
    std::memcpy(out->data() + start, &type, 4);
    std::memcpy(out->data() + start + 4, &misc, 2);
    std::memcpy(out->data() + start + 6, &size, 2);
    done += take;
  }
  return Ok();
}

}  // namespace internal
}  // namespace pbid
