// SPDX-License-Identifier: GPL-2.0
//
// The feature sections of perf.data: one row per bit with its name, encoder and decoder.
#include <cstring>
#include <unordered_map>

#include "pbid/record_builder.h"
#include "perf_data_format.h"

namespace pbid {
namespace internal {

void WriteString(ByteWriter& w, const std::string& s) {
  size_t len = (s.size() + 1 + kNameAlign - 1) / kNameAlign * kNameAlign;
  w.U32(static_cast<uint32_t>(len));
  w.PaddedString(s, kNameAlign);
}

Result<std::string> ReadString(const ByteReader& br, size_t* off, const std::string& field) {
  PBID_ASSIGN_OR_RETURN(uint32_t len, br.U32(*off, (field + ".len").c_str()));
  PBID_ASSIGN_OR_RETURN(std::string_view s, br.CString(*off + 4, len, field.c_str()));
  *off += 4 + len;
  return std::string(s);
}

namespace {

ByteReader Reader(const FeatureSection& s) {
  return ByteReader(s.base + s.off, s.size, s.swap, s.off);
}

// The string features: one perf string each.
template <int kBit, std::optional<std::string> Features::*kMember>
Result<bool> EncodeString(const Features& f, const std::vector<EventAttr>&, ByteWriter& w) {
  if (!(f.*kMember))
    return false;
  WriteString(w, *(f.*kMember));
  return true;
}

template <int kBit, std::optional<std::string> Features::*kMember>
Status DecodeString(const FeatureSection& s, Features* f, std::vector<EventAttr>*) {
  size_t pos = 0;
  PBID_ASSIGN_OR_RETURN(f->*kMember, ReadString(Reader(s), &pos, FeatureField(kBit, "")));
  return Ok();
}

// HEADER_BUILD_ID: PERF_RECORD_HEADER_BUILD_ID records back to back.
Result<bool> EncodeBuildIds(const Features& f, const std::vector<EventAttr>&, ByteWriter& w) {
  if (!f.build_ids)
    return false;
  for (const BuildIdEntry& e : *f.build_ids) {
    PBID_ASSIGN_OR_RETURN(RecordBytes rec,
                          BuildHeaderBuildId(e.pid, e.misc, e.build_id, e.filename));
    w.Bytes(rec.data(), rec.size());
  }
  return true;
}

Status DecodeBuildIds(const FeatureSection& s, Features* f, std::vector<EventAttr>*) {
  std::vector<BuildIdEntry> entries;
  uint64_t pos = 0;
  while (pos < s.size) {
    auto h = ParseRecordHeader(s.base + s.off + pos, s.size - pos, s.swap, s.off + pos);
    if (!h.ok()) {
      Error e = h.error();
      e.field = "feature[BUILD_ID]." + e.field;
      return e;
    }
    auto b = ParseHeaderBuildId(RecordView{*h, s.base + s.off + pos, s.off + pos, s.swap});
    if (!b.ok()) {
      Error e = b.error();
      e.field = "feature[BUILD_ID]." + e.field;
      return e;
    }
    entries.push_back(BuildIdEntry{b->pid, static_cast<uint16_t>(b->misc & kMiscCpumodeMask),
                                   b->build_id, std::string(b->filename)});
    pos += h->size;
  }
  f->build_ids = std::move(entries);
  return Ok();
}

// HEADER_NRCPUS: u32 available, u32 online; written only when both are known.
Result<bool> EncodeNrcpus(const Features& f, const std::vector<EventAttr>&, ByteWriter& w) {
  if (!f.nr_cpus_avail || !f.nr_cpus_online)
    return false;
  w.U32(*f.nr_cpus_avail);
  w.U32(*f.nr_cpus_online);
  return true;
}

Status DecodeNrcpus(const FeatureSection& s, Features* f, std::vector<EventAttr>*) {
  ByteReader br = Reader(s);
  PBID_ASSIGN_OR_RETURN(uint32_t avail, br.U32(0, "feature[NRCPUS].nr_cpus_avail"));
  PBID_ASSIGN_OR_RETURN(uint32_t online, br.U32(4, "feature[NRCPUS].nr_cpus_online"));
  f->nr_cpus_avail = avail;
  f->nr_cpus_online = online;
  return Ok();
}

// HEADER_CMDLINE: u32 count, then that many perf strings.
Result<bool> EncodeCmdline(const Features& f, const std::vector<EventAttr>&, ByteWriter& w) {
  if (!f.cmdline)
    return false;
  w.U32(static_cast<uint32_t>(f.cmdline->size()));
  for (const std::string& a : *f.cmdline)
    WriteString(w, a);
  return true;
}

Status DecodeCmdline(const FeatureSection& s, Features* f, std::vector<EventAttr>*) {
  ByteReader br = Reader(s);
  PBID_ASSIGN_OR_RETURN(uint32_t nr, br.U32(0, "feature[CMDLINE].nr"));
  if (nr > s.size / 4)
    return Error("feature[CMDLINE].nr", s.off, "count exceeds the section");
  size_t pos = 4;
  std::vector<std::string> args;
  for (uint32_t i = 0; i < nr; i++) {
    PBID_ASSIGN_OR_RETURN(std::string a,
                          ReadString(br, &pos, "feature[CMDLINE].arg[" + std::to_string(i) + "]"));
    args.push_back(std::move(a));
  }
  f->cmdline = std::move(args);
  return Ok();
}

// HEADER_EVENT_DESC: u32 events, u32 attr size, then per event the attr, u32 id count, its
// name (perf string) and its ids. Always written, from the attrs' names and ids.
Result<bool> EncodeEventDesc(const Features&, const std::vector<EventAttr>& attrs, ByteWriter& w) {
  w.U32(static_cast<uint32_t>(attrs.size()));
  w.U32(kWrittenAttrSize);
  for (const EventAttr& a : attrs) {
    auto bytes = EncodeAttr(a.attr, false);
    w.Bytes(bytes.data(), bytes.size());
    w.U32(static_cast<uint32_t>(a.ids.size()));
    WriteString(w, a.name);
    for (uint64_t id : a.ids)
      w.U64(id);
  }
  return true;
}

Status DecodeEventDesc(const FeatureSection& s, Features*, std::vector<EventAttr>* attrs) {
  ByteReader br = Reader(s);
  auto nre = br.U32(0, "feature[EVENT_DESC].nr");
  auto sz = br.U32(4, "feature[EVENT_DESC].attr_size");
  if (!nre.ok())
    return nre.error();
  if (!sz.ok())
    return sz.error();
  if (*sz < PERF_ATTR_SIZE_VER0 || *nre > s.size / *sz) {
    return Error("feature[EVENT_DESC].attr_size", s.off + 4, "inconsistent with the section");
  }
  size_t pos = 8;
  // Attrs by their first id, built once: matching each description against every attr
  // would be quadratic in the number of events.
  std::unordered_multimap<uint64_t, size_t> by_first_id;
  for (size_t a = 0; a < attrs->size(); a++) {
    if (!(*attrs)[a].ids.empty())
      by_first_id.emplace((*attrs)[a].ids[0], a);
  }
  auto name_attr = [&](size_t a, const std::string& name) {
    if ((*attrs)[a].name.empty())
      (*attrs)[a].name = name;
  };
  for (uint32_t i = 0; i < *nre; i++) {
    std::string field = "feature[EVENT_DESC].event[" + std::to_string(i) + "]";
    if (!br.Has(pos, *sz))
      return br.OutOfBounds(pos, *sz, field.c_str());
    pos += *sz;
    auto nri = br.U32(pos, (field + ".nr_ids").c_str());
    if (!nri.ok())
      return nri.error();
    pos += 4;
    auto name = ReadString(br, &pos, field + ".name");
    if (!name.ok())
      return name.error();
    if (!br.Has(pos, static_cast<uint64_t>(*nri) * 8)) {
      return br.OutOfBounds(pos, static_cast<uint64_t>(*nri) * 8, (field + ".ids").c_str());
    }
    uint64_t first_id = *nri ? br.U64At(pos) : 0;
    pos += static_cast<uint64_t>(*nri) * 8;
    // Names belong to the attr with the same ids, or the same index when ids are absent.
    if (*nri == 0) {
      if (i < attrs->size())
        name_attr(i, *name);
    } else {
      auto [lo, hi] = by_first_id.equal_range(first_id);
      for (auto it = lo; it != hi; ++it)
        name_attr(it->second, *name);
    }
  }
  return Ok();
}

// HEADER_COMPRESSED: u32 version, type, level, ratio, mmap_len.
Result<bool> EncodeCompressed(const Features& f, const std::vector<EventAttr>&, ByteWriter& w) {
  if (!f.compressed)
    return false;
  const Compression& c = *f.compressed;
  for (uint32_t v : {c.version, c.type, c.level, c.ratio, c.mmap_len})
    w.U32(v);
  return true;
}

Status DecodeCompressed(const FeatureSection& s, Features* f, std::vector<EventAttr>*) {
  ByteReader br = Reader(s);
  if (!br.Has(0, 20))
    return br.OutOfBounds(0, 20, "feature[COMPRESSED]");
  Compression c;
  c.version = br.U32At(0);
  c.type = br.U32At(4);
  c.level = br.U32At(8);
  c.ratio = br.U32At(12);
  c.mmap_len = br.U32At(16);
  if (c.type != Compression::kZstd) {
    Error e("feature[COMPRESSED].type", s.off + 4,
            "compression type " + std::to_string(c.type) + " (perf knows only 1, zstd)");
    e.kind = ErrorKind::kUnsupported;
    return e;
  }
  f->compressed = c;
  return Ok();
}

// kFeatPbidMappingIds: u32 version (1), u32 entry size, u64 count, then per entry u64 time,
// u64 start, u64 pgoff, u32 pid, u8 kind, u8 id size, u16 zero, the id in 20 bytes
// (zero-padded) and u32 zero. A later version of these entries may append fields: the entry
// size says how far to skip.
constexpr uint32_t kMappingIdsVersion = 1;
constexpr uint32_t kMappingIdEntrySize = 56;

Result<bool> EncodeMappingIds(const Features& f, const std::vector<EventAttr>&, ByteWriter& w) {
  if (!f.mapping_ids)
    return false;
  w.U32(kMappingIdsVersion);
  w.U32(kMappingIdEntrySize);
  w.U64(f.mapping_ids->size());
  for (const MappingIdEntry& e : *f.mapping_ids) {
    const size_t at = w.size();
    w.U64(e.time);
    w.U64(e.start);
    w.U64(e.pgoff);
    w.U32(e.pid);
    w.U8(static_cast<uint8_t>(e.kind));
    w.U8(static_cast<uint8_t>(e.build_id.size()));
    w.U16(0);
    auto padded = e.build_id.Padded();
    w.Bytes(padded.data(), padded.size());
    w.Zeros(kMappingIdEntrySize - (w.size() - at));
  }
  return true;
}

Status DecodeMappingIds(const FeatureSection& s, Features* f, std::vector<EventAttr>*) {
  ByteReader br = Reader(s);
  const std::string name = FeatureField(kFeatPbidMappingIds, "");
  PBID_ASSIGN_OR_RETURN(uint32_t version, br.U32(0, (name + ".version").c_str()));
  PBID_ASSIGN_OR_RETURN(uint32_t entry_size, br.U32(4, (name + ".entry_size").c_str()));
  PBID_ASSIGN_OR_RETURN(uint64_t nr, br.U64(8, (name + ".nr").c_str()));
  // Another version is another writer's format: its mappings are read as having no such id,
  // as perf skips a section it does not know.
  if (version != kMappingIdsVersion)
    return Ok();
  if (entry_size < kMappingIdEntrySize)
    return Error(name + ".entry_size", s.off + 4, "smaller than an entry of version 1");
  if (nr > (s.size - 16) / entry_size)
    return Error(name + ".nr", s.off + 8, "count exceeds the section");
  std::vector<MappingIdEntry> entries;
  entries.reserve(nr);
  for (uint64_t i = 0; i < nr; i++) {
    const size_t at = 16 + i * entry_size;
    const std::string field = name + ".entry[" + std::to_string(i) + "]";
    ByteCursor c(br, at);
    MappingIdEntry e;
    e.time = c.U64();
    e.start = c.U64();
    e.pgoff = c.U64();
    e.pid = c.U32();
    // Where each byte field sits, for its error: the cursor knows, the format is written once.
    const size_t kind_at = c.offset();
    const uint8_t kind = c.U8();
    const size_t id_size_at = c.offset();
    const uint8_t id_size = c.U8();
    c.Skip(2);
    const uint8_t* id = br.data() + c.offset();
    if (kind == static_cast<uint8_t>(MappingIdEntry::Kind::kBpf)) {
      e.kind = MappingIdEntry::Kind::kBpf;
      auto b = BuildId::FromBytes(id, id_size);
      if (!b.ok() || id_size == 0)
        return Error(field + ".id_size", s.off + id_size_at, "not a build ID size");
      e.build_id = *b;
    } else if (kind == static_cast<uint8_t>(MappingIdEntry::Kind::kDisputed)) {
      e.kind = MappingIdEntry::Kind::kDisputed;
    } else {
      return Error(field + ".kind", s.off + kind_at, "unknown kind " + std::to_string(kind));
    }
    entries.push_back(std::move(e));
  }
  f->mapping_ids = std::move(entries);
  return Ok();
}

// kFeatPbidFileIds: u32 version (1), u32 file entry size, u32 mapping entry size, u32 zero,
// u64 file count, u64 mapping count; then the files, each u8 flags (1: file hash, 2: Go build
// ID), u8 zero, u16 Go build ID length, u32 zero, the file hash in 16 bytes (zeros when
// absent), up to the file entry size, then the Go build ID's bytes padded with zeros to 8;
// then the mappings, each u64 time, u64 start, u64 pgoff, u32 pid, u32 file index, up to the
// mapping entry size. As in kFeatPbidMappingIds, a later version may append fields to either
// entry: the sizes say how far to skip.
constexpr uint32_t kFileIdsVersion = 1;
constexpr uint32_t kFileEntrySize = 24;
constexpr uint32_t kFileMappingEntrySize = 32;
constexpr uint8_t kFileHasHash = 1, kFileHasGo = 2;

Result<bool> EncodeFileIds(const Features& f, const std::vector<EventAttr>&, ByteWriter& w) {
  if (!f.file_ids)
    return false;
  w.U32(kFileIdsVersion);
  w.U32(kFileEntrySize);
  w.U32(kFileMappingEntrySize);
  w.U32(0);
  w.U64(f.file_ids->files.size());
  w.U64(f.file_ids->mappings.size());
  for (const FileIds& ids : f.file_ids->files) {
    const std::string go = ids.go_build_id.value_or("");
    if (go.size() > UINT16_MAX)
      return Error(FeatureField(kFeatPbidFileIds, ".go_build_id"), "longer than 65535 bytes");
    w.U8((ids.file_hash ? kFileHasHash : 0) | (ids.go_build_id ? kFileHasGo : 0));
    w.U8(0);
    w.U16(static_cast<uint16_t>(go.size()));
    w.U32(0);
    if (ids.file_hash)
      w.Bytes(ids.file_hash->data(), FileHash::kSize);
    else
      w.Zeros(FileHash::kSize);
    w.Bytes(go.data(), go.size());
    w.Zeros((8 - go.size() % 8) % 8);
  }
  for (const MappingFileIds::Mapping& m : f.file_ids->mappings) {
    if (m.file >= f.file_ids->files.size())
      return Error(FeatureField(kFeatPbidFileIds, ".mapping.file"), "no such file");
    w.U64(m.time);
    w.U64(m.start);
    w.U64(m.pgoff);
    w.U32(m.pid);
    w.U32(m.file);
  }
  return true;
}

Status DecodeFileIds(const FeatureSection& s, Features* f, std::vector<EventAttr>*) {
  ByteReader br = Reader(s);
  const std::string name = FeatureField(kFeatPbidFileIds, "");
  PBID_ASSIGN_OR_RETURN(uint32_t version, br.U32(0, (name + ".version").c_str()));
  // Another version is another writer's format: read as no such ids, as perf skips a section
  // it does not know.
  if (version != kFileIdsVersion)
    return Ok();
  PBID_ASSIGN_OR_RETURN(uint32_t file_size, br.U32(4, (name + ".file_entry_size").c_str()));
  PBID_ASSIGN_OR_RETURN(uint32_t map_size, br.U32(8, (name + ".mapping_entry_size").c_str()));
  PBID_ASSIGN_OR_RETURN(uint64_t nr_files, br.U64(16, (name + ".nr_files").c_str()));
  PBID_ASSIGN_OR_RETURN(uint64_t nr_maps, br.U64(24, (name + ".nr_mappings").c_str()));
  if (file_size < kFileEntrySize)
    return Error(name + ".file_entry_size", s.off + 4, "smaller than a file of version 1");
  if (map_size < kFileMappingEntrySize)
    return Error(name + ".mapping_entry_size", s.off + 8, "smaller than a mapping of version 1");
  if (nr_files > s.size / file_size)
    return Error(name + ".nr_files", s.off + 16, "count exceeds the section");
  MappingFileIds out;
  out.files.reserve(nr_files);
  size_t pos = 32;
  for (uint64_t i = 0; i < nr_files; i++) {
    const std::string field = name + ".file[" + std::to_string(i) + "]";
    if (!br.Has(pos, file_size))
      return br.OutOfBounds(pos, file_size, field.c_str());
    ByteCursor c(br, pos);
    const uint8_t flags = c.U8();
    c.Skip(1);
    const uint16_t go_len = br.U16At(c.offset());
    c.Skip(2 + 4);
    FileIds ids;
    if (flags & kFileHasHash) {
      uint8_t h[FileHash::kSize];
      memcpy(h, br.data() + c.offset(), sizeof(h));
      ids.file_hash = FileHash::FromBytes(h);
    }
    pos += file_size;
    const size_t padded = (go_len + 7u) / 8 * 8;
    if (!br.Has(pos, padded))
      return br.OutOfBounds(pos, padded, (field + ".go_build_id").c_str());
    if (flags & kFileHasGo) {
      if (go_len == 0)
        return Error(field + ".go_len", s.off + pos - file_size + 2, "an empty Go build ID");
      ids.go_build_id = std::string(reinterpret_cast<const char*>(br.data() + pos), go_len);
    }
    pos += padded;
    out.files.push_back(std::move(ids));
  }
  if (nr_maps > (s.size - pos) / map_size)
    return Error(name + ".nr_mappings", s.off + 24, "count exceeds the section");
  out.mappings.reserve(nr_maps);
  for (uint64_t i = 0; i < nr_maps; i++, pos += map_size) {
    ByteCursor c(br, pos);
    MappingFileIds::Mapping m;
    m.time = c.U64();
    m.start = c.U64();
    m.pgoff = c.U64();
    m.pid = c.U32();
    const size_t file_at = c.offset();
    m.file = c.U32();
    if (m.file >= out.files.size()) {
      return Error(name + ".mapping[" + std::to_string(i) + "].file", s.off + file_at,
                   "no file " + std::to_string(m.file) + " in the section");
    }
    out.mappings.push_back(m);
  }
  f->file_ids = std::move(out);
  return Ok();
}

// perf's feat_ops[] for the bits this library knows; a new feature is one row here, at its
// bit's place.
constexpr FeatureOps kFeatures[] = {
    {0, "RESERVED", nullptr, nullptr},
    {kFeatTracingData, "TRACING_DATA", nullptr, nullptr},
    {kFeatBuildId, "BUILD_ID", EncodeBuildIds, DecodeBuildIds},
    {kFeatHostname, "HOSTNAME", EncodeString<kFeatHostname, &Features::hostname>,
     DecodeString<kFeatHostname, &Features::hostname>},
    {kFeatOsrelease, "OSRELEASE", EncodeString<kFeatOsrelease, &Features::osrelease>,
     DecodeString<kFeatOsrelease, &Features::osrelease>},
    {kFeatVersion, "VERSION", EncodeString<kFeatVersion, &Features::version>,
     DecodeString<kFeatVersion, &Features::version>},
    {kFeatArch, "ARCH", EncodeString<kFeatArch, &Features::arch>,
     DecodeString<kFeatArch, &Features::arch>},
    {kFeatNrcpus, "NRCPUS", EncodeNrcpus, DecodeNrcpus},
    {kFeatCpudesc, "CPUDESC", EncodeString<kFeatCpudesc, &Features::cpudesc>,
     DecodeString<kFeatCpudesc, &Features::cpudesc>},
    {kFeatCpuid, "CPUID", nullptr, nullptr},
    {kFeatTotalMem, "TOTAL_MEM", nullptr, nullptr},
    {kFeatCmdline, "CMDLINE", EncodeCmdline, DecodeCmdline},
    {kFeatEventDesc, "EVENT_DESC", EncodeEventDesc, DecodeEventDesc},
    {kFeatCompressed, "COMPRESSED", EncodeCompressed, DecodeCompressed},
    {kFeatPbidMappingIds, "PBID_MAPPING_IDS", EncodeMappingIds, DecodeMappingIds, false},
    {kFeatPbidFileIds, "PBID_FILE_IDS", EncodeFileIds, DecodeFileIds, false},
};

constexpr bool InBitOrder() {
  for (size_t i = 1; i < sizeof(kFeatures) / sizeof(kFeatures[0]); i++) {
    if (kFeatures[i].bit <= kFeatures[i - 1].bit)
      return false;
  }
  return kFeatures[0].bit >= 0 &&
         kFeatures[sizeof(kFeatures) / sizeof(kFeatures[0]) - 1].bit < kFeatBits;
}
// The writer emits sections in table order; perf assigns them to bits in ascending order.
static_assert(InBitOrder(), "the feature table must be in ascending bit order");

}  // namespace

FeatureList FeatureTable() {
  return {kFeatures, kFeatures + sizeof(kFeatures) / sizeof(kFeatures[0])};
}

const FeatureOps* FindFeature(int bit) {
  for (const FeatureOps& op : FeatureTable()) {
    if (op.bit == bit)
      return &op;
  }
  return nullptr;
}

std::string FeatureField(int bit, const char* what) {
  const FeatureOps* op = FindFeature(bit);
  return std::string("feature[") + (op ? op->name : std::to_string(bit)) + "]" + what;
}

}  // namespace internal
}  // namespace pbid
