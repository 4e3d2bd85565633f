// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "byte_io.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"
#include "perf_data_format.h"
#include "zstd_stream.h"

namespace pbid {

using internal::ByteWriter;
using internal::kAttrEntrySize;
using internal::kFileHeaderSize;
using internal::kMagic;
using internal::kPipeHeaderSize;

namespace {

constexpr size_t kBufSize = 1 << 16;

ByteWriter Header(uint64_t attrs_off, uint64_t attrs_size, uint64_t data_off, uint64_t data_size,
                  const uint64_t feat[4]) {
  ByteWriter w;
  w.U64(kMagic);
  w.U64(kFileHeaderSize);
  w.U64(kAttrEntrySize);
  w.U64(attrs_off);
  w.U64(attrs_size);
  w.U64(data_off);
  w.U64(data_size);
  w.U64(0);  // event_types: unused since perf 3.x
  w.U64(0);
  for (int i = 0; i < 4; i++)
    w.U64(feat[i]);
  static_assert(internal::kFeaturesOff + 4 * 8 == kFileHeaderSize, "the bits end the header");
  return w;
}

}  // namespace

Result<std::unique_ptr<PerfDataWriter>> PerfDataWriter::Create(const std::string& path,
                                                               std::vector<EventAttr> attrs) {
  if (attrs.empty())
    return Error("attrs", "a perf.data file needs at least one event");
  std::unique_ptr<PerfDataWriter> w(new PerfDataWriter());
  w->path_ = path;
  std::vector<char> tmp(path.begin(), path.end());
  const char kSuffix[] = ".tmp.XXXXXX";
  tmp.insert(tmp.end(), kSuffix, kSuffix + sizeof(kSuffix));
  w->fd_ = mkostemp(tmp.data(), O_CLOEXEC);
  if (w->fd_ < 0)
    return Error::Sys(path, errno, "cannot create");
  w->tmp_path_ = tmp.data();
  w->attrs_ = std::move(attrs);

  // Layout: header, id arrays, attr table, data. Everything before the data is final now.
  ByteWriter pre;
  uint64_t off = kFileHeaderSize;
  std::vector<uint64_t> id_offs;
  for (const EventAttr& a : w->attrs_) {
    id_offs.push_back(off + pre.size());
    for (uint64_t id : a.ids)
      pre.U64(id);
  }
  w->attrs_off_ = off + pre.size();
  for (size_t i = 0; i < w->attrs_.size(); i++) {
    auto bytes = EncodeAttr(w->attrs_[i].attr, false);
    pre.Bytes(bytes.data(), bytes.size());
    pre.U64(id_offs[i]);
    pre.U64(w->attrs_[i].ids.size() * 8);
  }
  pre.PadTo(8);
  w->data_off_ = off + pre.size();
  uint64_t nofeat[4] = {};
  ByteWriter hdr =
      Header(w->attrs_off_, w->attrs_.size() * kAttrEntrySize, w->data_off_, 0, nofeat);
  Status s = w->WriteAt(0, hdr.buffer().data(), hdr.size());
  if (s.ok())
    s = w->WriteAt(kFileHeaderSize, pre.buffer().data(), pre.size());
  if (!s.ok())
    return s.error();
  if (lseek(w->fd_, w->data_off_, SEEK_SET) < 0)
    return Error::Sys(path, errno, "lseek");
  w->buf_.reserve(kBufSize);
  return w;
}

Result<std::unique_ptr<PerfDataWriter>> PerfDataWriter::CreatePipe(int fd, const std::string& name,
                                                                   std::vector<EventAttr> attrs) {
  if (attrs.empty())
    return Error("attrs", "a perf.data file needs at least one event");
  std::unique_ptr<PerfDataWriter> w(new PerfDataWriter());
  w->path_ = name;
  w->fd_ = fd;
  w->pipe_ = true;
  w->attrs_ = std::move(attrs);
  ByteWriter pre;
  pre.U64(kMagic);
  pre.U64(kPipeHeaderSize);
  for (const EventAttr& a : w->attrs_) {
    auto bytes = EncodeAttr(a.attr, false);
    uint64_t size = 8 + bytes.size() + 8 * a.ids.size();
    if (size > kMaxRecordSize)
      return Error("attrs", "an event with " + std::to_string(a.ids.size()) +
                                " ids does not fit a HEADER_ATTR record");
    pre.U32(kRecordHeaderAttr);
    pre.U16(0);
    pre.U16(static_cast<uint16_t>(size));
    pre.Bytes(bytes.data(), bytes.size());
    for (uint64_t id : a.ids)
      pre.U64(id);
  }
  Status s = w->WriteAt(0, pre.buffer().data(), pre.size());
  if (!s.ok())
    return s.error();
  w->buf_.reserve(kBufSize);
  return w;
}

PerfDataWriter::~PerfDataWriter() {
  if (fd_ >= 0 && !pipe_)
    close(fd_);
  if (!tmp_path_.empty())
    unlink(tmp_path_.c_str());
}

Status PerfDataWriter::Publish() {
  if (tmp_path_.empty())
    return Ok();
  if (rename(tmp_path_.c_str(), path_.c_str()) < 0)
    return Error::Sys(path_, errno, "cannot rename " + tmp_path_ + " into place");
  tmp_path_.clear();
  return Ok();
}

Status PerfDataWriter::WriteAt(uint64_t off, const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    // A pipe-mode stream only ever appends.
    ssize_t r = pipe_ ? write(fd_, b, n) : pwrite(fd_, b, n, off);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return Error::Sys(path_, errno, "write failed");
    }
    if (r == 0)  // no progress and no errno: retrying would spin forever
      return Error(path_, "write failed: pwrite wrote 0 of " + std::to_string(n) + " bytes");
    b += r;
    n -= r;
    off += r;
  }
  return Ok();
}

Status PerfDataWriter::Flush() {
  if (buf_.empty())
    return Ok();
  if (zstd_) {
    // data_size_ counts what is on disk: the compressed records.
    packed_.clear();
    Status s = zstd_->CompressToRecords(buf_.data(), buf_.size(), &packed_);
    buf_.clear();
    if (!s.ok())
      return s;
    s = WriteAt(data_off_ + data_size_, packed_.data(), packed_.size());
    data_size_ += packed_.size();
    return s;
  }
  Status s = WriteAt(data_off_ + data_size_ - buf_.size(), buf_.data(), buf_.size());
  buf_.clear();
  return s;
}

namespace {

// HEADER_COMPRESSED's mmap_len: the most one of our compressed records decompresses to.
Compression CompressionOf(int level, uint64_t raw, uint64_t packed) {
  Compression c;
  c.level = static_cast<uint32_t>(level);
  c.mmap_len = internal::ZstdCompressor::kMaxInputPerRecord;
  if (packed > 0)  // rounded, as perf
    c.ratio = static_cast<uint32_t>(static_cast<double>(raw) / static_cast<double>(packed) + 0.5);
  return c;
}

}  // namespace

Status PerfDataWriter::EnableCompression(int level) {
  if (finished_ || records_size_ > 0 || zstd_)
    return Error("writer", "compression enabled after the first record");
  PBID_ASSIGN_OR_RETURN(zstd_, internal::ZstdCompressor::Create(level));
  comp_level_ = level;
  if (!pipe_)
    return Ok();
  // perf, in pipe mode, writes every feature before the data; this one has to come first.
  Features f;
  f.compressed = CompressionOf(level, 0, 0);
  ByteWriter w;
  for (const internal::FeatureOps& op : internal::FeatureTable()) {
    if (op.bit != kFeatCompressed)
      continue;
    Result<bool> encoded = op.encode(f, attrs_, w);
    if (!encoded.ok())
      return encoded.error();
  }
  ByteWriter rec;
  rec.U32(kRecordHeaderFeature);
  rec.U16(0);
  rec.U16(static_cast<uint16_t>(16 + w.size()));
  rec.U64(kFeatCompressed);
  rec.Bytes(w.buffer().data(), w.size());
  return WriteAt(0, rec.buffer().data(), rec.size());
}

Status PerfDataWriter::WriteRecord(const void* data, size_t size) {
  if (finished_)
    return Error("writer", "record written after Finish()");
  if (size < 8)
    return Error("record.size", "record smaller than its header");
  uint16_t hsize;
  memcpy(&hsize, static_cast<const uint8_t*>(data) + 6, 2);
  if (hsize != size) {
    return Error("record.header.size", "header says " + std::to_string(hsize) +
                                           " bytes, record has " + std::to_string(size));
  }
  if (buf_.size() + size > kBufSize) {
    Status s = Flush();
    if (!s.ok())
      return s;
  }
  const uint8_t* b = static_cast<const uint8_t*>(data);
  buf_.insert(buf_.end(), b, b + size);
  records_size_ += size;
  if (!zstd_)
    data_size_ += size;
  return Ok();
}

Status PerfDataWriter::Checkpoint() {
  if (finished_)
    return Error("writer", "Checkpoint() after Finish()");
  Status s = Flush();
  if (!s.ok() || pipe_)
    return s;
  uint64_t nofeat[4] = {};
  ByteWriter hdr =
      Header(attrs_off_, attrs_.size() * kAttrEntrySize, data_off_, data_size_, nofeat);
  return WriteAt(0, hdr.buffer().data(), hdr.size());
}

Status PerfDataWriter::Finish(const Features& f) {
  if (finished_)
    return Error("writer", "Finish() called twice");
  Status s = Flush();
  if (!s.ok())
    return s;
  finished_ = true;

  // Feature payloads in the table's order, which is bit order: perf assigns the section
  // entries to the set bits in ascending order.
  std::vector<std::pair<int, ByteWriter>> feats;
  Features all = f;
  if (zstd_)
    all.compressed = CompressionOf(comp_level_, records_size_, data_size_);
  for (const internal::FeatureOps& op : internal::FeatureTable()) {
    if (!op.encode || (pipe_ && !op.in_pipe))
      continue;
    if (pipe_ && op.bit == kFeatCompressed)
      continue;  // written first (EnableCompression)
    ByteWriter w;
    PBID_ASSIGN_OR_RETURN(bool present, op.encode(all, attrs_, w));
    if (present)
      feats.emplace_back(op.bit, std::move(w));
  }

  if (pipe_) {
    // As perf in pipe mode: the build-id table as HEADER_BUILD_ID records (they already are),
    // every other feature as one HEADER_FEATURE record.
    ByteWriter out;
    for (auto& [bit, w] : feats) {
      if (bit == kFeatBuildId) {
        out.Bytes(w.buffer().data(), w.size());
        continue;
      }
      w.PadTo(8);
      uint64_t size = 16 + w.size();  // header, u64 bit, payload
      if (size > kMaxRecordSize) {
        return Error(path_, internal::FeatureField(bit, "") + " of " + std::to_string(w.size()) +
                                " bytes does not fit a HEADER_FEATURE record");
      }
      out.U32(kRecordHeaderFeature);
      out.U16(0);
      out.U16(static_cast<uint16_t>(size));
      out.U64(static_cast<uint64_t>(bit));
      out.Bytes(w.buffer().data(), w.size());
    }
    return WriteAt(0, out.buffer().data(), out.size());
  }

  uint64_t feat_off = data_off_ + data_size_;
  uint64_t off = feat_off + feats.size() * internal::kFeatureEntrySize;
  ByteWriter table;
  ByteWriter payload;
  uint64_t bits[4] = {};
  for (auto& [bit, w] : feats) {
    bits[bit / 64] |= 1ULL << (bit % 64);
    table.U64(off + payload.size());
    table.U64(w.size());
    payload.Bytes(w.buffer().data(), w.size());
  }
  s = WriteAt(feat_off, table.buffer().data(), table.size());
  if (s.ok())
    s = WriteAt(feat_off + table.size(), payload.buffer().data(), payload.size());
  if (!s.ok())
    return s;
  ByteWriter hdr = Header(attrs_off_, attrs_.size() * kAttrEntrySize, data_off_, data_size_, bits);
  s = WriteAt(0, hdr.buffer().data(), hdr.size());
  if (!s.ok())
    return s;
  if (ftruncate(fd_, feat_off + table.size() + payload.size()) < 0) {
    return Error::Sys(path_, errno, "ftruncate");
  }
  s = Publish();
  if (!s.ok())
    return s;
  if (close(fd_) < 0) {
    fd_ = -1;
    return Error::Sys(path_, errno, "close");
  }
  fd_ = -1;
  return Ok();
}

}  // namespace pbid
