// SPDX-License-Identifier: GPL-2.0
//
// Internal: the perf.data layout, once, for the reader and the writer
// (tools/perf/Documentation/perf.data-file-format.txt): magic, header, attr entries, the perf
// string encoding and the feature table. A feature section is added in one place, the table
// in perf_data_features.cpp, and both sides walk that table in bit order, as perf's feat_ops[]
// is walked: perf assigns the file's section entries to the set bits in ascending order.
#ifndef PBID_LIB_PERF_DATA_FORMAT_H_
#define PBID_LIB_PERF_DATA_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "byte_io.h"
#include "pbid/perf_data.h"
#include "pbid/records.h"
#include "pbid/result.h"

namespace pbid {
namespace internal {

inline constexpr uint64_t kMagic = 0x32454c4946524550ULL;    // "PERFILE2"
inline constexpr uint64_t kMagicV1 = 0x454c494646524550ULL;  // "PERFFILE" (perf < 2.6.38)

// struct perf_file_section
struct FileSection {
  uint64_t offset;
  uint64_t size;
};

// struct perf_file_header. Never read or written as a struct (the file may be in the other
// byte order): it gives the offsets below, and the asserts pin them to the format.
struct FileHeader {
  uint64_t magic;
  uint64_t size;
  uint64_t attr_size;  // one entry of the attrs section: the attr, then its ids' section
  FileSection attrs;
  FileSection data;
  FileSection event_types;  // unused since perf 3.x
  uint64_t adds_features[4];
};
inline constexpr uint64_t kFileHeaderSize = sizeof(FileHeader);
inline constexpr uint64_t kHeaderSizeOff = offsetof(FileHeader, size);
inline constexpr uint64_t kAttrSizeOff = offsetof(FileHeader, attr_size);
inline constexpr uint64_t kAttrsOff = offsetof(FileHeader, attrs);
inline constexpr uint64_t kAttrsSizeOff = offsetof(FileHeader, attrs) + sizeof(uint64_t);
inline constexpr uint64_t kDataOff = offsetof(FileHeader, data);
inline constexpr uint64_t kDataSizeOff = offsetof(FileHeader, data) + sizeof(uint64_t);
inline constexpr uint64_t kFeaturesOff = offsetof(FileHeader, adds_features);
static_assert(kFileHeaderSize == 104, "perf_file_header is 104 bytes");
static_assert(kAttrSizeOff == 16 && kAttrsOff == 24 && kDataOff == 40 && kFeaturesOff == 72,
              "perf_file_header field offsets");
static_assert(sizeof(FileHeader::adds_features) * 8 == kFeatBits, "one bit per feature");

// struct perf_pipe_file_header: magic and size only.
inline constexpr uint64_t kPipeHeaderSize = 16;

// What the writer puts in the attrs section: the attr, then the perf_file_section of its ids.
inline constexpr uint64_t kAttrEntrySize = kWrittenAttrSize + sizeof(FileSection);

// The feature table: u64 offset and size per set bit, after the data section.
inline constexpr uint64_t kFeatureEntrySize = sizeof(FileSection);

// A perf string: u32 length (the padded length), then the string, its NUL and zeros up to a
// multiple of 64 (NAME_ALIGN in perf's header.c).
inline constexpr size_t kNameAlign = 64;
void WriteString(ByteWriter& w, const std::string& s);
Result<std::string> ReadString(const ByteReader& br, size_t* off, const std::string& field);

// What a feature's decoder sees: its section, the file's events (EVENT_DESC names them) and
// the features decoded so far.
struct FeatureSection {
  const uint8_t* base;  // the file
  bool swap;
  uint64_t off, size;  // the section within the file
};

struct FeatureOps {
  int bit;
  const char* name;  // perf's HEADER_ name without the prefix
  // Appends the section to w, or returns false when f does not have the feature. nullptr:
  // this library never writes it.
  Result<bool> (*encode)(const Features& f, const std::vector<EventAttr>& attrs, ByteWriter& w);
  // nullptr: read as raw bytes only (PerfDataReader::FeatureBytes).
  Status (*decode)(const FeatureSection& s, Features* f, std::vector<EventAttr>* attrs);
  // Whether a pipe-mode stream carries it (as a HEADER_FEATURE record): perf stops on a
  // feature record it does not know, though it skips such a section in a file.
  bool in_pipe = true;
};

// Every feature this library knows, in ascending bit order (checked at compile time).
struct FeatureList {
  const FeatureOps* first;
  const FeatureOps* last;
  const FeatureOps* begin() const { return first; }
  const FeatureOps* end() const { return last; }
};
FeatureList FeatureTable();
// The entry for bit, or nullptr.
const FeatureOps* FindFeature(int bit);
// "feature[HOSTNAME]" + what (the bit number for features without a name).
std::string FeatureField(int bit, const char* what);

}  // namespace internal
}  // namespace pbid

#endif  // PBID_LIB_PERF_DATA_FORMAT_H_
