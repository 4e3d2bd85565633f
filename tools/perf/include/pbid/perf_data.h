// SPDX-License-Identifier: GPL-2.0
//
// perf.data files: a validating reader and a writer whose output Linux perf (6.1)
// reads without warnings. Format: tools/perf/Documentation/perf.data-file-format.txt.
//
// Reader usage:
//   auto r = pbid::PerfDataReader::Open("perf.data");
//   if (!r.ok()) { fprintf(stderr, "%s\n", r.error().ToString().c_str()); ... }
//   pbid::Status st = (*r)->ForEachRecord([&](const pbid::RecordView& rec) -> pbid::Status {
//     const pbid::EventAttr* attr = (*r)->AttrForRecord(rec);
//     if (rec.header.type == PERF_RECORD_MMAP2) { auto m = pbid::ParseMmap2(rec, attr); ... }
//     return pbid::Ok();
//   });
// Open() checks the header, the events and every section's offset+size against the file size.
// It does not read the data section of a file (a pipe-mode stream declares its events in its
// records, which are read then), unless the file holds compressed records (perf record -z):
// those are decompressed then, once, into memory, and every pass sees the records they hold
// in their place as if they had been written plainly; a record's offset is then its offset in
// that decompressed data section, which starts where the file's does. ForEachRecord checks each
// record header as it comes to it, so that a pass over the file is one pass, and a command that
// needs only the header reads only the header. The record decoders in records.h then check each
// record's fields against its own size.
#ifndef PBID_PERF_DATA_H_
#define PBID_PERF_DATA_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/file_hash.h"
#include "pbid/records.h"
#include "pbid/result.h"

namespace pbid {

namespace internal {
class ZstdCompressor;
}

// Feature bits of the perf.data header (tools/perf/util/header.h). Each one's name, encoder
// and decoder are a row of the feature table in lib/perf_data_features.cpp.
enum Feature : int {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsrelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrcpus = 7,
  kFeatCpudesc = 8,
  kFeatCpuid = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCompressed = 27,
  // This project's own section, at a bit far above perf's (perf 6.x ends near 32): perf skips
  // bits it does not know. Its layout is in Documentation/perf-buildid.md.
  kFeatPbidMappingIds = 192,
  // The recorder's second section: identities other than the GNU build ID (Go build ID,
  // OpenTelemetry file hash), per mapping. The next bit, as perf numbers its own.
  kFeatPbidFileIds = 193,
  kFeatBits = 256,
};

// One entry of the HEADER_BUILD_ID table (owning copy).
struct BuildIdEntry {
  int32_t pid = -1;   // machine pid: -1 = host
  uint16_t misc = 0;  // cpumode: PERF_RECORD_MISC_KERNEL or PERF_RECORD_MISC_USER
  BuildId build_id;
  std::string filename;
};

// A mapping's build ID decided after its MMAP2 record was written (the BPF path of record),
// named by the record's pid, start, pgoff and sample time. perf's own HEADER_BUILD_ID table
// is keyed by file name only, which cannot tell apart two files that had one path in turn.
struct MappingIdEntry {
  enum class Kind : uint8_t {
    kBpf = 1,       // build_id came from bpf_get_stack(BPF_F_USER_BUILD_ID)
    kDisputed = 2,  // two sources gave different ids: the mapping has none
  };
  uint32_t pid = 0;
  uint64_t start = 0, pgoff = 0, time = 0;
  Kind kind = Kind::kBpf;
  BuildId build_id;  // empty when disputed
};

// HEADER_COMPRESSED, as perf record -z writes it: five u32. The data section then holds
// PERF_RECORD_COMPRESSED records, one zstd stream across all of them.
struct Compression {
  static constexpr uint32_t kZstd = 1;  // perf's PERF_COMP_ZSTD
  uint32_t version = 0;                 // perf leaves it 0
  uint32_t type = kZstd;
  uint32_t level = 1;
  uint32_t ratio = 0;  // uncompressed / compressed bytes, rounded
  // The most bytes one compressed record decompresses to (perf: its ring buffer's size).
  uint32_t mmap_len = 0;
};

// A mapped file's identities other than its GNU build ID, read by the recorder while the file
// existed. perf's HEADER_BUILD_ID never holds them: perf would take them for GNU build IDs.
struct FileIds {
  std::optional<std::string> go_build_id;  // the "Go" note of type 4 (.note.go.buildid)
  std::optional<FileHash> file_hash;       // OpenTelemetry's htlhash (pbid/file_hash.h)
  bool empty() const { return !go_build_id && !file_hash; }
  friend bool operator==(const FileIds& a, const FileIds& b) {
    return a.go_build_id == b.go_build_id && a.file_hash == b.file_hash;
  }
  friend bool operator!=(const FileIds& a, const FileIds& b) { return !(a == b); }
};

// kFeatPbidFileIds: each file once, and each mapping, named as in MappingIdEntry by its MMAP2
// record's pid, start, pgoff and time, pointing at its file.
struct MappingFileIds {
  struct Mapping {
    uint32_t pid = 0;
    uint64_t start = 0, pgoff = 0, time = 0;
    uint32_t file = 0;  // index into files
  };
  std::vector<FileIds> files;
  std::vector<Mapping> mappings;
};

// The feature sections this library reads and writes. Unset optionals are not written.
struct Features {
  std::optional<std::string> hostname, osrelease, version, arch, cpudesc;
  std::optional<uint32_t> nr_cpus_avail, nr_cpus_online;   // written together
  std::optional<std::vector<std::string>> cmdline;         // argv[0] = path of the tool
  std::optional<std::vector<BuildIdEntry>> build_ids;      // HEADER_BUILD_ID
  std::optional<std::vector<MappingIdEntry>> mapping_ids;  // kFeatPbidMappingIds
  // Set by the writer when it compresses; read from the file by the reader.
  std::optional<Compression> compressed;
  std::optional<MappingFileIds> file_ids;  // kFeatPbidFileIds
  // EVENT_DESC is always written, from the attrs' names and ids.
};

// Fills hostname, osrelease, arch (uname), nrcpus (sysconf), cpudesc (/proc/cpuinfo) and
// version (VersionString(), where perf puts its own version).
Features HostFeatures();

// One thread at a time: a reader's passes and RecordAt share its window (a cache of the file's
// bytes), const as they are.
class PerfDataReader {
 public:
  // Maps the file read-only and validates it. Errors name the field and its file offset.
  static Result<std::unique_ptr<PerfDataReader>> Open(const std::string& path);
  // Same validation over bytes in memory (tests, pipes read to memory).
  static Result<std::unique_ptr<PerfDataReader>> FromBytes(std::vector<uint8_t> bytes);
  // Reads `fd` to its end (a pipe-mode stream, `-i -`), then validates like FromBytes. The
  // magic, the header size and each pipe-mode record header are checked as they arrive, and
  // at most max_bytes are held: bad input fails before the writer is done. `name` (e.g.
  // "stdin") names the input in read errors. fd is not closed.
  static constexpr uint64_t kMaxStreamBytes = uint64_t{2} << 30;
  static Result<std::unique_ptr<PerfDataReader>> FromStream(int fd, const std::string& name,
                                                            uint64_t max_bytes = kMaxStreamBytes);

  ~PerfDataReader();
  PerfDataReader(const PerfDataReader&) = delete;
  PerfDataReader& operator=(const PerfDataReader&) = delete;

  bool swapped() const { return swap_; }    // file written on the other endianness
  bool pipe_mode() const { return pipe_; }  // header is the 16-byte pipe header
  uint64_t file_size() const { return size_; }
  uint64_t data_offset() const { return data_off_; }
  uint64_t data_size() const { return data_size_; }

  const std::vector<EventAttr>& attrs() const { return attrs_; }
  // The event a record belongs to: by its sample id when the file has several attrs, else the
  // only one. Id 0 (records the recording tool synthesized) maps to the one attr with mmap2
  // when exactly one has it (perf's tracking event, which carries build_id), else to the
  // first attr, as in perf. With several attrs, a non-zero id that no attr owns gives
  // nullptr: the record's layout is unknown.
  const EventAttr* AttrForRecord(const RecordView& r) const;
  // Where this file's records keep their event id (the layout every attr shares): for a
  // reader that looks up the event of every record itself.
  const EventIdPlace& id_place() const { return id_place_; }
  const EventAttr* AttrForId(uint64_t id) const;

  bool HasFeature(int bit) const { return bit >= 0 && bit < kFeatBits && feat_bits_[bit]; }
  const Features& features() const { return features_; }
  // Raw bytes of any feature section (nullptr, 0 if absent), for features not decoded here.
  std::pair<const uint8_t*, size_t> FeatureBytes(int bit) const;

  // Calls f(const RecordView&), which returns a Status, for each record of the data section
  // in file order. Each record's header is checked before f sees it: its size, and the payload
  // that AUXTRACE and TRACING_DATA records carry after it.
  // Returns the first error, the file's or f's; the records before it have been seen.
  // A view's bytes are valid until f returns (the window below may take them over for the next
  // record): a reader keeps what it needs of a record, not the view.
  template <typename F>
  Status ForEachRecord(F&& f) const {
    uint64_t off = data_off_, end = data_off_ + data_size_;
    // The walk waited on its first load from each record. Each line once, since records of a
    // hundred bytes or so span two; of a payload the walk skips (AUXTRACE), no more than
    // kPrefetchAhead bytes.
    constexpr uint64_t kPrefetchAhead = 512, kLine = 64;
    uint64_t prefetched = off;
    while (off < end) {
      const uint8_t* p = Bytes(off, std::min<uint64_t>(8, end - off), true);
      prefetched = std::max(prefetched, off);
      for (uint64_t to = std::min(off + kPrefetchAhead, end); prefetched < to; prefetched += kLine)
        __builtin_prefetch(p + (prefetched - off));
      RecordView v;
      uint64_t next;
      if (!PlainRecord(off, p, &v, &next)) {
        Status s = CheckRecord(off, &v, &next);
        if (!s.ok())
          return s;
      }
      Status s = f(v);
      if (!s.ok())
        return s;
      off = next;
    }
    return Ok();
  }
  // The record at `offset`, which ForEachRecord has handed out before: read again, not
  // checked again. Valid until the callback of the pass that asks returns.
  RecordView RecordAt(uint64_t offset) const;

  // Lets the kernel take back every page of a mapped file. They stay readable: the next
  // access maps them again from the page cache. A pass starts with this, then a PageReleaser
  // keeps what it leaves resident to about one stretch of kReleasePagesEvery bytes (the one
  // mapped ahead and being read) and the records a replay reads again, so that memory does
  // not grow with the file it reads. Where the window serves a pass, the pass maps only the
  // records it reads again from beyond the window, and only those are released.
  // Resident file pages count in a process's RSS like its heap. Each stretch costs two
  // madvise() calls (release, map ahead): about two thousand in a pass over 1 GiB, which take
  // no measurable time; at 4 MiB a stretch held up to 8 MiB, a third of a small report's peak.
  void ReleasePages() const;
  static constexpr uint64_t kReleasePagesEvery = uint64_t{1} << 20;
  // Follows a pass through the data section in file order. After every kReleasePagesEvery
  // bytes it releases the pages read since the last time, and maps the next stretch in one
  // call, so that the pass takes a page fault per stretch, not one per 64 KiB.
  class PageReleaser {
   public:
    explicit PageReleaser(const PerfDataReader& reader)
        : reader_(reader), from_(reader.data_off_), pos_(reader.data_off_) {
      reader_.MapAhead(pos_);
    }
    // The pass is over: what it left resident goes too.
    ~PageReleaser() { reader_.ReleasePages(from_, pos_); }
    PageReleaser(const PageReleaser&) = delete;
    PageReleaser& operator=(const PageReleaser&) = delete;
    void Read(uint64_t bytes) {
      pos_ += bytes;
      if (pos_ - from_ >= kReleasePagesEvery) {
        reader_.ReleasePages(from_, pos_);
        from_ = pos_;
        reader_.MapAhead(pos_);
      }
    }
    // A record at `offset` was read out of file order (a replay in time order goes back to
    // the records it held): its pages go with the next release.
    void Reread(uint64_t offset) { from_ = std::min(from_, offset); }

   private:
    const PerfDataReader& reader_;
    uint64_t from_, pos_;
  };

  // The window: a pass over a mapped file reads the data section with pread() into a ring of
  // kWindowChunks buffers of kWindowChunk bytes each, and its records are seen there; a record
  // read again (RecordAt) is taken from the ring while its chunk is still in it, else from the
  // mapping. Reading the mapping itself cost a page-table entry per 4 KiB, set and taken down
  // again, and a TLB miss per page: on a virtual machine, 30 ms of a 64 MB file against 11 ms
  // for read() into a buffer used again. A chunk's buffer has room for the record that starts
  // last in it to run on past its end (a record is at most 64 KiB), read when that record is.
  // The ring's 1 MiB is a trade: the replays of the -a -g bench files read at most 0.06% of
  // their records again from beyond it, that of the DWARF file (samples of up to 8 KiB) 17%;
  // with twice the ring, none, for 1 MB more of a small report's peak. A thread reads up to
  // eight chunks ahead of the pass (perf_data_reader.cpp says why), in buffers of its own.
  static constexpr uint64_t kWindowChunkShift = 17;
  static constexpr uint64_t kWindowChunk = uint64_t{1} << kWindowChunkShift;
  static constexpr uint64_t kWindowChunks = 8;  // a power of two
  // What the window has done, for tests: chunks read, and records taken from the mapping
  // instead (read again from beyond the window, or a read that failed).
  struct WindowStats {
    uint64_t chunks_read = 0;
    uint64_t chunks_read_ahead = 0;  // of chunks_read, those the read-ahead thread had read
    uint64_t from_mapping = 0;
  };
  // nullopt when no window serves this reader (bytes in memory, decompressed records).
  std::optional<WindowStats> window_stats() const;

 private:
  PerfDataReader() = default;
  static Status CheckMagic(const uint8_t* p, bool* swap);  // p: at least 8 bytes
  Status Validate();
  // PageReleaser's: the pages from the one that holds `from` up to, not including, the one that
  // holds `to`.
  void ReleasePages(uint64_t from, uint64_t to) const;
  // PageReleaser's: the same for [from, from + kReleasePagesEvery), mapped in one call.
  void MapAhead(uint64_t from) const;
  Status ParseFileHeader();
  Status ParsePipeStream();
  Status ParseFeatures(uint64_t feat_off);
  Status ParseFeature(int bit, uint64_t off, uint64_t size);
  Status ReadPipeHeaderRecords();
  // Replaces the data section by a copy in which every compressed record is replaced by the
  // records it holds. max_out: HEADER_COMPRESSED's mmap_len, 0 when the header has none (a
  // pipe-mode stream declares it in a HEADER_FEATURE record before its compressed records).
  Status Decompress(uint64_t max_out);
  // The records' bytes are in memory of their own (Decompress), not in the file's pages.
  bool decompressed() const { return data_ != base_; }
  // The record at `off` if its header fits in the data section; *next: the record after it.
  Status CheckRecord(uint64_t off, RecordView* v, uint64_t* next) const;
  // CheckRecord's common case, inline, for off inside the data section and p = Bytes(off, 8 or
  // what is left): true only where CheckRecord would return Ok with the same *v and *next.
  // Whatever one of its checks looks at (the other byte order, a header that may not fit, a
  // type with a rule of its own) is left to it: false.
  bool PlainRecord(uint64_t off, const uint8_t* p, RecordView* v, uint64_t* next) const {
    uint64_t avail = data_off_ + data_size_ - off;
    if (swap_ || avail < 8)
      return false;
    RecordHeader h;
    std::memcpy(&h.type, p, 4);
    std::memcpy(&h.misc, p + 4, 2);
    std::memcpy(&h.size, p + 6, 2);
    if (h.size < 8 || h.size > avail)
      return false;
    switch (h.type) {
      case kRecordCompressed:
      case kRecordCompressed2:
      case kRecordAuxtrace:
      case kRecordHeaderTracingData: return false;
    }
    *v = RecordView{h, Bytes(off, h.size, true), off, false};
    *next = off + h.size;
    return true;
  }
  // At least `need` bytes of the data section from `off` (need: no more than the section has
  // from there, and no more than a record's 64 KiB), in one piece: from the window when one
  // serves this reader, else from data_. `load`: the pass in file order may read the chunk that
  // holds off into the ring; a record read again only finds it there.
  const uint8_t* Bytes(uint64_t off, uint64_t need, bool load) const {
    if (!window_)
      return data_ + off;
    const uint64_t rel = off - data_off_, index = rel >> kWindowChunkShift;
    const WindowChunk& c = window_->chunks[index & (kWindowChunks - 1)];
    const uint64_t in = rel & (kWindowChunk - 1);
    if (c.index == index && in + need <= c.filled)
      return c.bytes.get() + in;
    return BytesSlow(off, need, load);
  }
  const uint8_t* BytesSlow(uint64_t off, uint64_t need, bool load) const;
  // Starts the window over the file open at fd, which the reader then owns.
  void OpenWindow(int fd);
  void IndexIds();
  Status SameSampleIdAll(const EventAttr& ea, const std::string& field, uint64_t attr_off) const;
  const EventAttr* AttrForUnattributed() const;

  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  // Where the records are: data_ + a record's offset. base_, or decompressed_.data() for a
  // file with compressed records (its first data_off_ bytes copied, so that offsets agree).
  const uint8_t* data_ = nullptr;
  std::vector<uint8_t> decompressed_;
  bool mapped_ = false;
  struct WindowChunk {
    uint64_t index = UINT64_MAX;  // the chunk of the data section held, UINT64_MAX: none
    uint64_t filled = 0;          // bytes read, from the chunk's start
    std::unique_ptr<uint8_t[]> bytes;
  };
  struct ReadAhead;  // perf_data_reader.cpp
  struct Window {
    Window();
    ~Window();  // where ReadAhead is complete
    int fd = -1;
    WindowChunk chunks[kWindowChunks];
    WindowStats stats;
    // Reads the chunks after the one a pass in file order has just loaded, on a thread of its
    // own: started by the first pass that reaches the second chunk of a file of more than
    // three.
    std::unique_ptr<ReadAhead> ahead;
    // The file offsets taken from the mapping since the last release ([from, to), empty when
    // from >= to).
    uint64_t mapped_from = UINT64_MAX, mapped_to = 0;
  };
  // Mutable: the reader's passes are const, and the window only caches the file's bytes.
  mutable std::unique_ptr<Window> window_;
  std::vector<uint8_t> owned_;
  bool swap_ = false;
  bool pipe_ = false;
  uint64_t data_off_ = 0, data_size_ = 0;
  std::vector<EventAttr> attrs_;
  std::unordered_map<uint64_t, size_t> id_index_;  // sample id -> index into attrs_
  EventIdPlace id_place_;
  bool feat_bits_[kFeatBits] = {};
  std::vector<std::pair<uint64_t, uint64_t>> feat_sections_ =
      std::vector<std::pair<uint64_t, uint64_t>>(kFeatBits);
  Features features_;
};

// Writes a perf.data file: header, attrs with their ids, the data section, then the feature
// sections on Finish(). Records are written as given (native byte order).
// The file is written under a temporary name beside `path` and renamed over it by Publish()
// (or Finish()), so that a recording that never starts leaves an existing file alone; a
// writer destroyed unpublished removes its temporary file.
// Until Finish() the header on disk covers the data up to the last Checkpoint() and lists no
// features; the recorder checkpoints every second and finishes on SIGINT/SIGTERM.
class PerfDataWriter {
 public:
  // attrs must carry their final ids (the kernel's PERF_EVENT_IOC_ID) and names.
  static Result<std::unique_ptr<PerfDataWriter>> Create(const std::string& path,
                                                        std::vector<EventAttr> attrs);
  // Pipe mode, as perf record -o -: the 16-byte pipe header and one HEADER_ATTR record per
  // event, then the records as they come; Finish() appends the build-id table as
  // HEADER_BUILD_ID records and the other features as HEADER_FEATURE records. The stream
  // never seeks, so fd may be a pipe; it is not closed. `name` names it in errors.
  static Result<std::unique_ptr<PerfDataWriter>> CreatePipe(int fd, const std::string& name,
                                                            std::vector<EventAttr> attrs);
  ~PerfDataWriter();
  PerfDataWriter(const PerfDataWriter&) = delete;
  PerfDataWriter& operator=(const PerfDataWriter&) = delete;

  // Appends one record; size must equal its header.size.
  Status WriteRecord(const void* data, size_t size);
  Status WriteRecord(const std::vector<uint8_t>& rec) {
    if (rec.empty())  // what a builder returns for a record over kMaxRecordSize
      return Error("record.size", "record over 65535 bytes: a record header cannot hold its size");
    return WriteRecord(rec.data(), rec.size());
  }
  // A builder's result: its error, or the record.
  Status WriteRecord(const Result<std::vector<uint8_t>>& rec) {
    if (!rec.ok())
      return rec.error();
    return WriteRecord(*rec);
  }

  // Compresses the records written from here on as perf record -z does: PERF_RECORD_COMPRESSED
  // records of one zstd stream at `level` (1..22), and HEADER_COMPRESSED. Before the first
  // record. A pipe-mode stream carries the feature at once: a reader needs it before the first
  // compressed record.
  Status EnableCompression(int level);
  // The bytes of records given to WriteRecord: data_size() before compression.
  uint64_t records_size() const { return records_size_; }

  // Renames the file into place at `path` (a no-op once done).
  Status Publish();

  // Flushes the records and rewrites the header to cover them (no feature sections yet), so
  // that a recorder killed with SIGKILL still leaves a file with everything up to here.
  Status Checkpoint();

  // Writes the feature sections and the final header. The writer is unusable afterwards.
  Status Finish(const Features& features);

  uint64_t data_size() const { return data_size_; }
  const std::vector<EventAttr>& attrs() const { return attrs_; }

 private:
  PerfDataWriter() = default;
  Status Flush();
  Status WriteAt(uint64_t off, const void* p, size_t n);

  int fd_ = -1;
  std::string path_;
  std::string tmp_path_;  // until published
  bool pipe_ = false;     // sequential writes to a stream we do not own
  std::vector<EventAttr> attrs_;
  uint64_t attrs_off_ = 0, data_off_ = 0, data_size_ = 0;
  std::vector<uint8_t> buf_;
  bool finished_ = false;
  uint64_t records_size_ = 0;
  // Compression: the stream, its level, and the records it made of buf_.
  std::unique_ptr<internal::ZstdCompressor> zstd_;
  int comp_level_ = 0;
  std::vector<uint8_t> packed_;
};

}  // namespace pbid

#endif  // PBID_PERF_DATA_H_
