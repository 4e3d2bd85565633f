// SPDX-License-Identifier: GPL-2.0
//
// Compressed records (perf record -z): what the writer compresses the reader gives back record
// for record, in files and pipe-mode streams, across compressed records and with plain ones
// between them; a corrupt or truncated payload is an error at the compressed record's offset.
// Files of the real perf are read in tools/perf/tests/compressed.sh.
#include "zstd_stream.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../tests/record_fixtures.h"
#include "byte_io.h"
#include "pbid/perf_data.h"
#include "pbid/record_builder.h"
#include "pbid/session.h"
#include "util/test_util.h"

namespace pbid {
namespace {

using Bytes = std::vector<uint8_t>;

EventAttr Attr() {
  return fixtures::SampleAttr({1});
}

// Samples with an MMAP2 now and then: about 190 KiB, several flushes of the writer and many
// compressed records, whose slices end inside records.
std::vector<Bytes> Records(size_t n = 4000) {
  EventAttr a = Attr();
  std::vector<Bytes> recs;
  for (size_t i = 0; i < n; i++) {
    if (i % 50 == 0) {
      std::string path = "/lib/x" + std::to_string(i) + ".so";
      recs.push_back(*BuildMmap2(fixtures::Mmap2(10, 0x400000 + i * 0x1000, 0x1000, path, 1, i),
                                 PERF_RECORD_MISC_USER, &a));
    }
    recs.push_back(*BuildSample(
        fixtures::Sample(PERF_RECORD_MISC_USER, 0x400000 + i * 7, 10, 1, 1000 + i), {}, a));
  }
  return recs;
}

// The records a pass hands out, copied.
std::vector<Bytes> Walk(const PerfDataReader& r, Status* st) {
  std::vector<Bytes> out;
  *st = r.ForEachRecord([&](const RecordView& v) {
    out.emplace_back(v.data, v.data + v.header.size);
    return Ok();
  });
  return out;
}

// level 0: plain records.
std::string Write(const char* name, const std::vector<Bytes>& recs, int level) {
  std::string path = testing::TempPath(name);
  auto w = PerfDataWriter::Create(path, {Attr()});
  EXPECT_TRUE(w.ok()) << w.error().ToString();
  if (level > 0) {
    EXPECT_TRUE((*w)->EnableCompression(level).ok());
  }
  for (const Bytes& r : recs)
    EXPECT_TRUE((*w)->WriteRecord(r).ok());
  Status s = (*w)->Finish(Features());
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return path;
}

// The records of a file's data section as they are on disk.
std::vector<Bytes> RawRecords(const std::string& path) {
  std::string f = testing::ReadFile(path);
  uint64_t off, size;
  memcpy(&off, f.data() + 40, 8);
  memcpy(&size, f.data() + 48, 8);
  std::vector<Bytes> recs;
  for (uint64_t end = off + size; off < end;) {
    uint16_t n;
    memcpy(&n, f.data() + off + 6, 2);
    recs.emplace_back(f.data() + off, f.data() + off + n);
    off += n;
  }
  return recs;
}

uint32_t Type(const Bytes& r) {
  uint32_t t;
  memcpy(&t, r.data(), 4);
  return t;
}

// A file of these records as they are, with HEADER_COMPRESSED when c is given; *offsets: where
// each record is.
std::string WriteRaw(const char* name, const std::vector<Bytes>& recs, std::optional<Compression> c,
                     std::vector<uint64_t>* offsets = nullptr) {
  std::string path = testing::TempPath(name);
  auto w = PerfDataWriter::Create(path, {Attr()});
  EXPECT_TRUE(w.ok()) << w.error().ToString();
  uint64_t data_off = 0;
  for (const Bytes& r : recs) {
    if (offsets)
      offsets->push_back((*w)->data_size());
    EXPECT_TRUE((*w)->WriteRecord(r).ok());
  }
  Features f;
  f.compressed = c;
  Status s = (*w)->Finish(f);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  std::string bytes = testing::ReadFile(path);
  memcpy(&data_off, bytes.data() + 40, 8);
  if (offsets) {
    for (uint64_t& o : *offsets)
      o += data_off;
  }
  return path;
}

Compression Zstd(uint32_t mmap_len = internal::ZstdCompressor::kMaxInputPerRecord) {
  Compression c;
  c.mmap_len = mmap_len;
  return c;
}

TEST(ZstdStreamTest, CompressedFileReadsAsThePlainOne) {
  const std::vector<Bytes> recs = Records();
  std::string path = Write("z-roundtrip.data", recs, 3);
  std::vector<Bytes> raw = RawRecords(path);
  size_t compressed = 0;
  for (const Bytes& r : raw)
    compressed += Type(r) == kRecordCompressed;
  EXPECT_EQ(raw.size(), compressed);  // everything the writer was given
  EXPECT_GE(compressed, 5u);
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_TRUE((*r)->features().compressed.has_value());
  EXPECT_EQ(3u, (*r)->features().compressed->level);
  EXPECT_EQ(internal::ZstdCompressor::kMaxInputPerRecord, (*r)->features().compressed->mmap_len);
  EXPECT_GE((*r)->features().compressed->ratio, 2u);
  Status st;
  std::vector<Bytes> got = Walk(**r, &st);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_TRUE(got == recs) << got.size() << " records, " << recs.size() << " written";
  // The session's passes read them again by offset.
  Session s(**r);
  uint64_t samples = 0;
  st = s.Process([&](const SampleContext&) { samples++; });
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(4000u, samples);
}

TEST(ZstdStreamTest, CompressedPipeStreamReadsAsThePlainOne) {
  const std::vector<Bytes> recs = Records();
  std::string path = testing::TempPath("z-pipe.data");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  {
    auto w = PerfDataWriter::CreatePipe(fd, "pipe", {Attr()});
    ASSERT_TRUE(w.ok()) << w.error().ToString();
    ASSERT_TRUE((*w)->EnableCompression(1).ok());
    for (const Bytes& r : recs)
      ASSERT_TRUE((*w)->WriteRecord(r).ok());
    Features f;
    f.hostname = "compressed-host";  // a HEADER_FEATURE record after the compressed ones
    ASSERT_TRUE((*w)->Finish(f).ok());
  }
  close(fd);
  std::string bytes = testing::ReadFile(path);
  unlink(path.c_str());
  auto r = PerfDataReader::FromBytes(Bytes(bytes.begin(), bytes.end()));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE((*r)->pipe_mode());
  ASSERT_TRUE((*r)->features().compressed.has_value());
  EXPECT_EQ("compressed-host", (*r)->features().hostname.value_or(""));
  Status st;
  std::vector<Bytes> got = Walk(**r, &st);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  std::vector<Bytes> data;  // less the pipe's own records
  for (Bytes& g : got) {
    if (Type(g) < kRecordHeaderAttr || Type(g) == kRecordFinishedRound)
      data.push_back(std::move(g));
  }
  EXPECT_TRUE(data == recs) << data.size() << " records, " << recs.size() << " written";
}

// perf's writer flushes the ring buffer in two pieces where it wraps: the first compressed
// record ends inside a record, and a synthesized one may be written plainly before the rest.
TEST(ZstdStreamTest, ARecordSplitAcrossCompressedRecordsAroundAPlainOne) {
  const std::vector<Bytes> recs = Records(40);
  Bytes all;
  for (const Bytes& r : recs)
    all.insert(all.end(), r.begin(), r.end());
  size_t cut = recs[0].size() + recs[1].size() + 5;  // inside the third record
  auto z = internal::ZstdCompressor::Create(1);
  ASSERT_TRUE(z.ok());
  Bytes first, second;
  ASSERT_TRUE((*z)->CompressToRecords(all.data(), cut, &first).ok());
  ASSERT_TRUE((*z)->CompressToRecords(all.data() + cut, all.size() - cut, &second).ok());
  Bytes round = BuildEmptyRecord(kRecordFinishedRound);
  std::string path = WriteRaw("z-split.data", {first, round, second}, Zstd());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  Status st;
  std::vector<Bytes> got = Walk(**r, &st);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  std::vector<Bytes> want = {recs[0], recs[1], round};
  want.insert(want.end(), recs.begin() + 2, recs.end());
  EXPECT_TRUE(got == want) << got.size() << " records, " << want.size() << " expected";
}

// perf 6.15's PERF_RECORD_COMPRESSED2: data_size says how much of the padded payload is zstd's.
TEST(ZstdStreamTest, Compressed2ReadsAsCompressed) {
  const std::vector<Bytes> recs = Records();
  std::string path = Write("z-v1.data", recs, 1);
  std::vector<Bytes> raw = RawRecords(path);
  unlink(path.c_str());
  std::vector<Bytes> v2;
  for (const Bytes& r : raw) {
    uint64_t n = r.size() - 8, padded = (n + 7) / 8 * 8;
    ASSERT_LE(16 + padded, kMaxRecordSize) << "a payload that does not fit COMPRESSED2";
    internal::ByteWriter w;
    w.U32(kRecordCompressed2);
    w.U16(0);
    w.U16(static_cast<uint16_t>(16 + padded));
    w.U64(n);
    w.Bytes(r.data() + 8, n);
    w.PadTo(8);
    v2.push_back(w.buffer());
  }
  path = WriteRaw("z-v2.data", v2, Zstd());
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  Status st;
  std::vector<Bytes> got = Walk(**r, &st);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_TRUE(got == recs) << got.size() << " records, " << recs.size() << " written";

  // A data_size past its record.
  v2[0][8] = 0xff;
  v2[0][9] = 0xff;
  std::vector<uint64_t> offsets;
  path = WriteRaw("z-v2-bad.data", v2, Zstd(), &offsets);
  r = PerfDataReader::Open(path);
  unlink(path.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ("data.compressed2.data_size", r.error().field);
  EXPECT_EQ(offsets[0] + 8, r.error().offset);
}

Result<std::unique_ptr<PerfDataReader>> OpenDamaged(const char* name, std::vector<Bytes> recs,
                                                    std::vector<uint64_t>* offsets,
                                                    Compression c = Zstd()) {
  std::string path = WriteRaw(name, recs, c, offsets);
  auto r = PerfDataReader::Open(path);
  unlink(path.c_str());
  return r;
}

TEST(ZstdStreamTest, ACorruptPayloadIsAnErrorAtItsRecord) {
  std::string path = Write("z-corrupt-src.data", Records(), 1);
  std::vector<Bytes> raw = RawRecords(path);
  unlink(path.c_str());
  ASSERT_GE(raw.size(), 3u);
  // The frame's magic number, at the start of the first payload.
  raw[0][8] ^= 0xff;
  std::vector<uint64_t> offsets;
  auto r = OpenDamaged("z-corrupt.data", raw, &offsets);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ("data.compressed", r.error().field);
  EXPECT_EQ(offsets[0], r.error().offset);
  EXPECT_NE(std::string::npos, r.error().message.find("corrupt compressed payload"))
      << r.error().ToString();
  EXPECT_EQ(ErrorKind::kCorruptInput, r.error().kind);
}

TEST(ZstdStreamTest, ATruncatedPayloadIsAnErrorAtItsRecord) {
  std::string path = Write("z-trunc-src.data", Records(), 1);
  std::vector<Bytes> raw = RawRecords(path);
  unlink(path.c_str());
  // The last compressed record keeps half its payload.
  Bytes& last = raw.back();
  uint16_t size = static_cast<uint16_t>(8 + (last.size() - 8) / 2);
  last.resize(size);
  memcpy(last.data() + 6, &size, 2);
  std::vector<uint64_t> offsets;
  auto r = OpenDamaged("z-trunc.data", raw, &offsets);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ("data.compressed", r.error().field);
  EXPECT_EQ(offsets.back(), r.error().offset) << r.error().ToString();
  EXPECT_NE(std::string::npos, r.error().message.find("truncated")) << r.error().ToString();
}

// What one record decompresses to is bounded by HEADER_COMPRESSED's mmap_len, as in perf.
TEST(ZstdStreamTest, APayloadLargerThanMmapLenIsAnError) {
  std::string path = Write("z-bound-src.data", Records(), 1);
  std::vector<Bytes> raw = RawRecords(path);
  unlink(path.c_str());
  std::vector<uint64_t> offsets;
  auto r = OpenDamaged("z-bound.data", raw, &offsets, Zstd(4096));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ("data.compressed", r.error().field);
  EXPECT_EQ(offsets[0], r.error().offset);
  EXPECT_NE(std::string::npos, r.error().message.find("mmap_len")) << r.error().ToString();
}

// Garbage that decompresses: records of size 0 stop the walk at the compressed record.
TEST(ZstdStreamTest, ADecompressedRecordSmallerThanItsHeaderIsAnError) {
  Bytes zeros(64, 0);
  auto z = internal::ZstdCompressor::Create(1);
  ASSERT_TRUE(z.ok());
  Bytes rec;
  ASSERT_TRUE((*z)->CompressToRecords(zeros.data(), zeros.size(), &rec).ok());
  std::vector<uint64_t> offsets;
  auto r = OpenDamaged("z-zeros.data", {rec}, &offsets);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ("data.compressed", r.error().field);
  EXPECT_EQ(offsets[0], r.error().offset);
}

TEST(ZstdStreamTest, CompressionOnlyBeforeTheFirstRecord) {
  std::string path = testing::TempPath("z-late.data");
  auto w = PerfDataWriter::Create(path, {Attr()});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WriteRecord(BuildEmptyRecord(kRecordFinishedRound)).ok());
  EXPECT_FALSE((*w)->EnableCompression(1).ok());
}

}  // namespace
}  // namespace pbid
