// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>

#include "byte_io.h"
#include "pbid/elf_build_id.h"
#include "pbid/perf_data.h"
#include "perf_data_format.h"
#include "zstd_stream.h"

namespace pbid {

using internal::ByteReader;
using internal::kFileHeaderSize;
using internal::kMagic;
using internal::kMagicV1;
using internal::kPipeHeaderSize;

namespace {

constexpr uint64_t kMaxAttrs = 1 << 16;

bool InFile(uint64_t off, uint64_t len, uint64_t file_size) {
  return off <= file_size && len <= file_size - off;
}

Error OutsideFile(const std::string& field, uint64_t field_off, uint64_t off, uint64_t len,
                  uint64_t file_size) {
  return Error(field, field_off,
               "section [" + std::to_string(off) + ", +" + std::to_string(len) +
                   ") lies outside the file (" + std::to_string(file_size) + " bytes)");
}

// Bytes that follow a record beyond header.size: the AUX area data of PERF_RECORD_AUXTRACE
// (u64 size at +8) and the tracing data of a pipe-mode PERF_RECORD_HEADER_TRACING_DATA (u32
// size at +8). The caller has checked that the size field lies inside the record.
uint64_t TrailingPayload(const ByteReader& rb, uint32_t type) {
  if (type == kRecordAuxtrace)
    return rb.U64At(8);
  if (type == kRecordHeaderTracingData)
    return rb.U32At(8);
  return 0;
}

}  // namespace

Result<std::unique_ptr<PerfDataReader>> PerfDataReader::Open(const std::string& path) {
  // -i FIFO would otherwise block before the regular-file check could refuse it.
  auto opened = OpenRegularFile(path);
  if (!opened.ok())
    return opened.error();
  int fd = *opened;
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    return Error::Sys(path, e, "cannot stat");
  }
  std::unique_ptr<PerfDataReader> r(new PerfDataReader());
  r->size_ = st.st_size;
  if (r->size_ > 0) {
    void* p = mmap(nullptr, r->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      close(fd);
      return Error::Sys(path, e, "cannot mmap");
    }
    r->base_ = static_cast<const uint8_t*>(p);
    r->mapped_ = true;
  }
  Status s = r->Validate();
  if (!s.ok()) {
    close(fd);
    return s.error();
  }
  // Decompressed records are in memory already.
  if (r->mapped_ && !r->decompressed())
    r->OpenWindow(fd);
  else
    close(fd);
  return r;
}

void PerfDataReader::OpenWindow(int fd) {
  window_ = std::make_unique<Window>();
  window_->fd = fd;
}

namespace {

// Reads [off, off + n) of fd into p, to the end or to the first error: the bytes read.
uint64_t ReadAt(int fd, uint8_t* p, uint64_t n, uint64_t off) {
  uint64_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, p + got, n - got, static_cast<off_t>(off + got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += static_cast<uint64_t>(r);
  }
  return got;
}

constexpr uint64_t kNoChunk = UINT64_MAX;
// A chunk's buffer: the chunk, and room for a record of 64 KiB that starts at its last byte.
constexpr uint64_t kChunkRoom = PerfDataReader::kWindowChunk + (uint64_t{1} << 16);

}  // namespace

// A pass spends about a third of its time in pread(), copying chunks out of the page cache
// (79 ms of system time on a 256 MB file), and the parse waits for each copy. This thread
// copies the chunks after the one the pass is in while the pass parses, so that on two CPUs
// the two overlap. It keeps up to kSlots chunks ahead, and sleeps until half of them are
// taken: a wake-up per chunk cost more than the copy saved. The buffers change hands, never
// their bytes: the pass gives the thread the buffer of the chunk that leaves the ring, and
// takes the one the thread has filled.
struct PerfDataReader::ReadAhead {
  static constexpr uint64_t kSlots = 8;
  ReadAhead(int file, uint64_t data_off, uint64_t data_end)
      : fd(file), off(data_off), end(data_end) {}
  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mu);
      quit = true;
    }
    cv.notify_all();
    if (thread.joinable())
      thread.join();
  }

  struct Slot {
    uint64_t index = kNoChunk;  // the chunk held (or being read), kNoChunk: free
    bool reading = false;
    uint64_t filled = 0;
    std::unique_ptr<uint8_t[]> buf;
  };

  bool Held(uint64_t index) const {
    for (const Slot& s : slots)
      if (s.index == index)
        return true;
    return false;
  }

  // A chunk of [lo, hi] that no slot holds, and a slot to read it into (one that holds none
  // of them); nullptr when there is none.
  Slot* NextToRead(uint64_t* index) {
    if (lo == kNoChunk)
      return nullptr;
    for (uint64_t i = lo; i <= hi; i++) {
      if (Held(i))
        continue;
      *index = i;
      for (Slot& s : slots)
        if (!s.reading && (s.index == kNoChunk || s.index < lo || s.index > hi))
          return &s;
      return nullptr;
    }
    return nullptr;
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      uint64_t index = 0;
      Slot* s = nullptr;
      cv.wait(lock, [&] {
        if (quit)
          return true;
        if (awake && (s = NextToRead(&index)) == nullptr)
          awake = false;  // all read ahead: asleep until Advance finds half of them taken
        return s != nullptr;
      });
      if (quit)
        return;
      if (!s->buf) {
        // Not cleared: only what was read is used. No memory: the pass reads its chunks
        // itself, as it would without the thread (a bad_alloc here would end the process).
        s->buf.reset(new (std::nothrow) uint8_t[kChunkRoom]);
        if (!s->buf) {
          awake = false;
          continue;
        }
      }
      s->index = index;
      s->reading = true;
      uint8_t* p = s->buf.get();  // the pass takes a slot's buffer only when not reading
      const uint64_t from = off + (index << kWindowChunkShift);
      const uint64_t len = std::min(kWindowChunk, end - from);
      lock.unlock();
      const uint64_t got = ReadAt(fd, p, len, from);
      lock.lock();
      s->filled = got;
      s->reading = false;
      if (waiting)
        cv.notify_all();  // a Take that waits for this chunk
    }
  }

  // The pass's, after it loaded chunk `index`: read the ones after it.
  void Advance(uint64_t index) {
    std::lock_guard<std::mutex> lock(mu);
    const uint64_t chunks = (end - off + kWindowChunk - 1) >> kWindowChunkShift;
    if (index + 1 >= chunks) {
      lo = kNoChunk;
      return;
    }
    lo = index + 1;
    hi = std::min(index + kSlots, chunks - 1);
    if (awake)
      return;
    uint64_t missing = 0;
    for (uint64_t i = lo; i <= hi; i++)
      missing += !Held(i);
    // Half the slots free, or the next chunk not there (a pass that jumped).
    if (missing >= kSlots / 2 || missing == hi - lo + 1) {
      awake = true;
      cv.notify_all();
    }
  }

  // The pass's: chunk `index` into *bytes (the thread keeps the buffer *bytes held) if the
  // thread has read it, after waiting for a read of it under way; false when it has not.
  bool Take(uint64_t index, std::unique_ptr<uint8_t[]>* bytes, uint64_t* got) {
    std::unique_lock<std::mutex> lock(mu);
    for (Slot& s : slots) {
      if (s.index != index)
        continue;
      if (s.reading) {
        waiting = true;
        cv.wait(lock, [&] { return !s.reading; });
        waiting = false;
      }
      if (s.index != index)
        return false;
      std::swap(s.buf, *bytes);
      *got = s.filled;
      s.index = kNoChunk;
      return true;
    }
    return false;
  }

  // Between passes: no chunk is wanted, and no buffer held.
  void Drop() {
    std::unique_lock<std::mutex> lock(mu);
    lo = kNoChunk;
    awake = false;
    waiting = true;
    cv.wait(lock, [this] {
      for (const Slot& s : slots)
        if (s.reading)
          return false;
      return true;
    });
    waiting = false;
    for (Slot& s : slots) {
      s.index = kNoChunk;
      s.buf.reset();
    }
  }

  // A child forked while the thread ran has no thread, and perhaps a lock held for good: it
  // must not touch any of this (Usable()), nor join the thread (~PerfDataReader).
  bool Usable() const { return getpid() == pid; }

  const int fd;
  const uint64_t off, end;  // the data section
  const pid_t pid = getpid();
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;  // chunks wanted (to the thread), a chunk read (to Take)
  bool quit = false;
  bool awake = false;    // the thread reads while it has chunks to read
  bool waiting = false;  // the pass waits for a chunk under way
  uint64_t lo = kNoChunk, hi = 0;  // the chunks wanted, [lo, hi]
  Slot slots[kSlots];
};

namespace {

// A child forked while the read-ahead thread ran lets go of it untouched (ReadAhead::Usable()):
// it is leaked, neither joined nor locked.
template <typename Ahead>
void LetGoIfForked(std::unique_ptr<Ahead>& ahead) {
  if (ahead && !ahead->Usable())
    (void)ahead.release();
}

}  // namespace

PerfDataReader::Window::Window() = default;
PerfDataReader::Window::~Window() = default;

std::optional<PerfDataReader::WindowStats> PerfDataReader::window_stats() const {
  if (!window_)
    return std::nullopt;
  return window_->stats;
}

const uint8_t* PerfDataReader::BytesSlow(uint64_t off, uint64_t need, bool load) const {
  Window& w = *window_;
  const uint64_t rel = off - data_off_, index = rel >> kWindowChunkShift;
  const uint64_t in = rel & (kWindowChunk - 1);
  const uint64_t start = data_off_ + (index << kWindowChunkShift);
  const uint64_t end = data_off_ + data_size_;
  WindowChunk& c = w.chunks[index & (kWindowChunks - 1)];
  if (c.index != index && load) {
    c.index = index;
    LetGoIfForked(w.ahead);
    if (w.ahead && w.ahead->Take(index, &c.bytes, &c.filled)) {
      w.stats.chunks_read_ahead++;
    } else {
      if (!c.bytes)
        c.bytes.reset(new uint8_t[kChunkRoom]);  // not cleared: only what was read is used
      c.filled = ReadAt(w.fd, c.bytes.get(), std::min(kWindowChunk, end - start), start);
    }
    w.stats.chunks_read++;
    // The next chunk, read ahead. Not for the first chunks of a pass: a file of three chunks
    // or fewer does not gain the thread's start (about 50 us), and a pass that reads the
    // first chunk alone (a header record) would start it for nothing.
    const uint64_t next = start + kWindowChunk;
    if (!w.ahead && index >= 1 && end > next + kWindowChunk) {
      auto ahead = std::make_unique<ReadAhead>(w.fd, data_off_, end);
      try {
        ahead->thread = std::thread(&ReadAhead::Run, ahead.get());
        w.ahead = std::move(ahead);
      } catch (const std::system_error&) {
        // No thread to be had: the pass reads every chunk itself, as before.
      }
    }
    if (w.ahead)
      w.ahead->Advance(index);
  }
  if (c.index == index && in + need <= kChunkRoom) {
    if (in + need > c.filled && c.filled >= std::min(kWindowChunk, end - start)) {
      // A record that runs on past the chunk's end (or a header that does): the rest of it,
      // and a page more, so that its header and its body take one read.
      uint64_t to = std::min({kChunkRoom, end - start, std::max(in + need, c.filled + 4096)});
      c.filled += ReadAt(w.fd, c.bytes.get() + c.filled, to - c.filled, start + c.filled);
    }
    if (in + need <= c.filled)
      return c.bytes.get() + in;
  }
  // Beyond the window, or a read that failed: the mapping has the same bytes.
  w.stats.from_mapping++;
  w.mapped_from = std::min(w.mapped_from, off);
  w.mapped_to = std::max(w.mapped_to, off + need);
  return data_ + off;
}

void PerfDataReader::ReleasePages() const {
  // A private, read-only file mapping that was never written: MADV_DONTNEED only drops the
  // page table entries, and the data comes back from the page cache on the next read.
  // Decompressed records are not in the file's pages: the passes follow those.
  if (mapped_ && !decompressed())
    madvise(const_cast<uint8_t*>(base_), size_, MADV_DONTNEED);
  if (window_) {
    // The ring's buffers too: between passes (a report draws its views after its last) they
    // hold nothing a pass needs. The next pass allocates them again.
    for (WindowChunk& c : window_->chunks) {
      c.bytes.reset();
      c.index = UINT64_MAX;
      c.filled = 0;
    }
    LetGoIfForked(window_->ahead);
    if (window_->ahead)
      window_->ahead->Drop();
    window_->mapped_from = UINT64_MAX;
    window_->mapped_to = 0;
  }
}

namespace {

uint64_t PageSize() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// The pages of a mapping of `size` bytes from the one that holds `from` up to the one that
// holds `to`, as (offset, length). The page that holds `to` is left out: the pass is inside it.
// The one that holds `from` is not: a stretch that began inside it has now read the rest.
std::pair<uint64_t, uint64_t> WholePages(uint64_t from, uint64_t to, uint64_t size) {
  const uint64_t page = PageSize();
  to = std::min(to, size);
  uint64_t start = from / page * page, end = to / page * page;
  return start < end ? std::make_pair(start, end - start)
                     : std::make_pair(uint64_t{0}, uint64_t{0});
}

}  // namespace

void PerfDataReader::ReleasePages(uint64_t from, uint64_t to) const {
  if (!mapped_ || decompressed())
    return;
  if (window_) {
    // The pass read [from, to) through the window. What it took from the mapping instead
    // (records read again from behind the ring, stragglers queued ahead of it) is released
    // whole, wherever it is: a page dropped while still in use maps again from the page cache.
    // A fault maps the pages around it too (fault-around, 64 KiB by default and at most a page
    // table's 2 MiB): the stretch released is rounded out to that.
    Window& w = *window_;
    if (w.mapped_from >= w.mapped_to)
      return;
    constexpr uint64_t kFaultAround = uint64_t{2} << 20;
    const uint64_t start = w.mapped_from / kFaultAround * kFaultAround;
    const uint64_t end =
        std::min(size_, (w.mapped_to + kFaultAround - 1) / kFaultAround * kFaultAround);
    w.mapped_from = UINT64_MAX;
    w.mapped_to = 0;
    madvise(const_cast<uint8_t*>(base_) + start, end - start, MADV_DONTNEED);
    return;
  }
  auto [off, len] = WholePages(from, to, size_);
  if (len > 0)
    madvise(const_cast<uint8_t*>(base_) + off, len, MADV_DONTNEED);
}

void PerfDataReader::MapAhead(uint64_t from) const {
#ifdef MADV_POPULATE_READ
  if (!mapped_ || decompressed() || window_)  // the window reads the stretch
    return;
  // Only an optimization: kernels before 5.14 refuse it, and the pass then faults as usual.
  auto [off, len] = WholePages(from, from + kReleasePagesEvery, size_);
  if (len > 0)
    madvise(const_cast<uint8_t*>(base_) + off, len, MADV_POPULATE_READ);
#else
  (void)from;
#endif
}

Result<std::unique_ptr<PerfDataReader>> PerfDataReader::FromBytes(std::vector<uint8_t> bytes) {
  std::unique_ptr<PerfDataReader> r(new PerfDataReader());
  r->owned_ = std::move(bytes);
  r->base_ = r->owned_.data();
  r->size_ = r->owned_.size();
  Status s = r->Validate();
  if (!s.ok())
    return s.error();
  return r;
}

Result<std::unique_ptr<PerfDataReader>> PerfDataReader::FromStream(int fd, const std::string& name,
                                                                   uint64_t max_bytes) {
  // Checked as it arrives: the magic and header size once 16 bytes are in, then (pipe mode)
  // each record header, so that garbage fails at once instead of after reading it all.
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  bool header_checked = false, pipe = false, swap = false;
  uint64_t next = kPipeHeaderSize;  // offset of the next record header in a pipe stream
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Error::Sys(name, errno, "read failed");
    if (n == 0)
      break;
    if (bytes.size() + static_cast<uint64_t>(n) > max_bytes) {
      return Error(name, "input larger than " + std::to_string(max_bytes) +
                             " bytes; save it to a file and read that");
    }
    bytes.insert(bytes.end(), buf, buf + n);
    if (!header_checked && bytes.size() >= kPipeHeaderSize) {
      Status s = CheckMagic(bytes.data(), &swap);
      if (!s.ok())
        return s.error();
      ByteReader br(bytes.data(), bytes.size(), swap);
      uint64_t hsize = br.U64At(internal::kHeaderSizeOff);
      if (hsize != kPipeHeaderSize && hsize != kFileHeaderSize) {
        return Error("header.size", internal::kHeaderSizeOff,
                     "header size " + std::to_string(hsize) + ", expected 104 (file) or 16 (pipe)");
      }
      pipe = hsize == kPipeHeaderSize;
      header_checked = true;
    }
    while (pipe && next + 8 <= bytes.size()) {
      ByteReader rb(bytes.data() + next, bytes.size() - next, swap, next);
      uint32_t type = rb.U32At(0);
      uint16_t size = rb.U16At(6);
      if (size < 8) {
        return Error("data.record.header.size", next + 6,
                     "record size " + std::to_string(size) + " smaller than its header");
      }
      if (next + size > bytes.size())
        break;
      uint64_t payload = 0;
      if ((type == kRecordAuxtrace && size >= 16) ||
          (type == kRecordHeaderTracingData && size >= 12))
        payload = TrailingPayload(ByteReader(bytes.data() + next, size, swap), type);
      if (payload > max_bytes) {
        pipe = false;  // FromBytes names the record at the end; stop walking here
        break;
      }
      next += size + payload;  // no overflow: both are bounded
    }
  }
  return FromBytes(std::move(bytes));
}

PerfDataReader::~PerfDataReader() {
  if (window_) {
    LetGoIfForked(window_->ahead);
    window_->ahead.reset();  // its thread reads fd
    close(window_->fd);
  }
  if (mapped_)
    munmap(const_cast<uint8_t*>(base_), size_);
}

Status PerfDataReader::CheckMagic(const uint8_t* p, bool* swap) {
  uint64_t magic;
  memcpy(&magic, p, 8);
  if (magic == kMagic) {
    *swap = false;
  } else if (magic == internal::Swap64(kMagic)) {
    *swap = true;
  } else if (magic == kMagicV1 || magic == internal::Swap64(kMagicV1)) {
    Error e("header.magic", 0, "perf.data version 1 (PERFFILE) is not supported");
    e.kind = ErrorKind::kUnsupported;
    return e;
  } else {
    return Error("header.magic", 0, "not a perf.data file (no PERFILE2 magic)");
  }
  return Ok();
}

Status PerfDataReader::Validate() {
  if (size_ < kPipeHeaderSize) {
    return Error("header.magic", 0,
                 "file of " + std::to_string(size_) + " bytes is too small for a perf.data header");
  }
  data_ = base_;
  Status magic = CheckMagic(base_, &swap_);
  if (!magic.ok())
    return magic;
  ByteReader br(base_, size_, swap_);
  uint64_t hsize = br.U64At(internal::kHeaderSizeOff);
  if (hsize == kPipeHeaderSize) {
    pipe_ = true;
    Status s = ParsePipeStream();
    if (s.ok())
      IndexIds();
    return s;
  }
  if (hsize != kFileHeaderSize) {
    return Error("header.size", internal::kHeaderSizeOff,
                 "header size " + std::to_string(hsize) + ", expected 104 (file) or 16 (pipe)");
  }
  Status s = ParseFileHeader();
  if (s.ok())
    s = ParseFeatures(data_off_ + data_size_);
  // perf record -z says so in the header: a file without it has no compressed records to read
  // (perf cannot read them either), and its data section is read as a pass reaches it.
  if (s.ok() && features_.compressed)
    s = Decompress(features_.compressed->mmap_len);
  if (s.ok())
    IndexIds();
  return s;
}

// Records are matched to their event by id, twice per record: a hash map keeps that linear
// in the number of records however many events a file declares. The first owner of an id
// wins, as in a scan in file order.
void PerfDataReader::IndexIds() {
  id_place_ = attrs_.empty() ? EventIdPlace() : EventIdPlaceOf(attrs_[0]);
  id_index_.clear();
  for (size_t i = 0; i < attrs_.size(); i++) {
    for (uint64_t id : attrs_[i].ids)
      id_index_.emplace(id, i);
  }
}

Status PerfDataReader::ParseFileHeader() {
  ByteReader br(base_, size_, swap_);
  if (!br.Has(0, kFileHeaderSize))
    return br.OutOfBounds(0, kFileHeaderSize, "header");
  uint64_t attr_size = br.U64At(internal::kAttrSizeOff);
  uint64_t attrs_off = br.U64At(internal::kAttrsOff);
  uint64_t attrs_size = br.U64At(internal::kAttrsSizeOff);
  data_off_ = br.U64At(internal::kDataOff);
  data_size_ = br.U64At(internal::kDataSizeOff);
  for (int i = 0; i < kFeatBits; i++) {
    uint64_t word = br.U64At(internal::kFeaturesOff + 8 * (i / 64));
    feat_bits_[i] = (word >> (i % 64)) & 1;
  }
  if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096) {
    return Error("header.attr_size", internal::kAttrSizeOff,
                 "attr entry size " + std::to_string(attr_size) + " outside " +
                     std::to_string(PERF_ATTR_SIZE_VER0 + 16) + "..4096");
  }
  if (!InFile(attrs_off, attrs_size, size_)) {
    return OutsideFile("header.attrs", internal::kAttrsOff, attrs_off, attrs_size, size_);
  }
  if (attrs_size % attr_size != 0 || attrs_size / attr_size > kMaxAttrs) {
    return Error("header.attrs.size", internal::kAttrsSizeOff,
                 std::to_string(attrs_size) + " is not a count of " + std::to_string(attr_size) +
                     "-byte attr entries");
  }
  if (!InFile(data_off_, data_size_, size_)) {
    return OutsideFile("header.data", internal::kDataOff, data_off_, data_size_, size_);
  }
  if (data_size_ == 0) {
    // What a recorder killed before its first checkpoint leaves; perf asks the same.
    return Error("header.data.size", internal::kDataSizeOff,
                 "data size is 0: was the recording terminated properly?");
  }
  if (data_off_ < kFileHeaderSize) {
    return Error("header.data.offset", internal::kDataOff,
                 "data section at " + std::to_string(data_off_) + " overlaps the file header (" +
                     std::to_string(kFileHeaderSize) + " bytes)");
  }
  uint64_t n = attrs_size / attr_size;
  if (n == 0)
    return Error("header.attrs.size", internal::kAttrsSizeOff, "file has no events");
  uint64_t attr_bytes = attr_size - 16;
  // Each ids section fits in the file on its own, but attrs may all name the same bytes; bound
  // the sum so a small crafted file cannot make us copy its size times the attr count.
  uint64_t ids_total = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t off = attrs_off + i * attr_size;
    std::string field = "attr[" + std::to_string(i) + "]";
    uint32_t asz = br.U32At(off + 4);
    if (asz == 0)
      asz = PERF_ATTR_SIZE_VER0;
    if (asz > attr_bytes) {
      return Error(field + ".size", off + 4,
                   "attr.size " + std::to_string(asz) + " exceeds the entry size " +
                       std::to_string(attr_bytes));
    }
    auto attr = DecodeAttr(base_ + off, asz, swap_, off);
    if (!attr.ok())
      return attr.error();
    EventAttr ea;
    ea.attr = *attr;
    uint64_t ids_off = br.U64At(off + attr_bytes), ids_size = br.U64At(off + attr_bytes + 8);
    if (!InFile(ids_off, ids_size, size_)) {
      return OutsideFile(field + ".ids", off + attr_bytes, ids_off, ids_size, size_);
    }
    if (ids_size % 8 != 0) {
      return Error(field + ".ids.size", off + attr_bytes + 8,
                   std::to_string(ids_size) + " is not a multiple of 8");
    }
    ids_total += ids_size;  // no overflow: each term is at most size_, n is at most kMaxAttrs
    if (ids_total > size_) {
      return Error(field + ".ids.size", off + attr_bytes + 8,
                   "ids sections add up to " + std::to_string(ids_total) +
                       " bytes, more than the file (" + std::to_string(size_) +
                       " bytes): sections overlap");
    }
    for (uint64_t j = 0; j < ids_size / 8; j++)
      ea.ids.push_back(br.U64At(ids_off + 8 * j));
    Status same = SameSampleIdAll(ea, field, off);
    if (!same.ok())
      return same;
    attrs_.push_back(std::move(ea));
  }
  return Ok();
}

Status PerfDataReader::CheckRecord(uint64_t off, RecordView* v, uint64_t* next) const {
  // PlainRecord (perf_data.h) takes, inline, every native-order record that none of the checks
  // below applies to: a rule for another record type must add that type to its switch.
  uint64_t end = data_off_ + data_size_;
  auto h =
      ParseRecordHeader(Bytes(off, std::min<uint64_t>(8, end - off), true), end - off, swap_, off);
  if (!h.ok()) {
    Error e = h.error();
    e.field = "data." + e.field;
    return e;
  }
  if (h->type == kRecordCompressed || h->type == kRecordCompressed2) {
    // Decompress() has replaced every one of a file whose header announces them.
    return Error("data.compressed", off,
                 "compressed record in a file whose header has no HEADER_COMPRESSED feature");
  }
  uint64_t payload = 0;
  if (h->type == kRecordAuxtrace || h->type == kRecordHeaderTracingData) {
    const char* name = h->type == kRecordAuxtrace ? "data.auxtrace.size" : "data.tracing_data.size";
    uint64_t need = h->type == kRecordAuxtrace ? 16 : 12;
    if (h->size < need)
      return Error(name, off + 6, "record too small for its payload size");
    payload = TrailingPayload(ByteReader(Bytes(off, h->size, true), h->size, swap_, off), h->type);
    if (payload > end - off - h->size) {
      return Error(name, off + 8,
                   "payload of " + std::to_string(payload) + " bytes runs past the data section");
    }
  }
  *v = RecordView{*h, Bytes(off, h->size, true), off, swap_};
  *next = off + h->size + payload;
  return Ok();
}

// perf record -z compresses what it reads from the ring buffers into one zstd stream, in
// PERF_RECORD_COMPRESSED records of up to 64 KiB, between the records it writes plainly
// (synthesized ones, FINISHED_ROUND). A compressed record's payload may end inside a record:
// the rest comes out of the next compressed one, and a plain record between the two comes
// first, as in perf. The records are laid out in one buffer, decompressed where they were.
// (perf keeps every decompressed buffer of a session too, since its ordered events point
// into them.)
namespace {

// The decompressed records are fresh memory, written once from start to end: in 4 KiB pages
// that is a page fault per 4 KiB (most of the time of reading a compressed file); where the
// kernel makes transparent huge pages on request, one per 2 MiB.
void PreferHugePages(void* p, size_t n) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  uintptr_t from = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t to = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
  if (to > from)
    madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);  // advice: may fail
}

}  // namespace

Status PerfDataReader::Decompress(uint64_t max_out) {
  const uint64_t end = data_off_ + data_size_;
  // A ratio no real recording reaches (zstd's own limit is about 32000 for zeros), so that a
  // small hostile file cannot ask for all memory.
  constexpr uint64_t kMaxRatio = 1024, kMaxSlack = uint64_t{1} << 20;
  const uint64_t limit = data_size_ * kMaxRatio + kMaxSlack;
  std::unique_ptr<internal::ZstdDecompressor> zstd;
  std::vector<uint8_t> image;
  uint64_t whole = 0;         // image[whole, size) is a record not complete yet
  uint64_t partial_from = 0;  // the compressed record in which it began
  uint64_t copied_to = 0;     // the file's bytes before it are in image
  uint64_t last_compressed = 0;
  // The complete records at image[whole, ...) become the data section's.
  auto take_whole = [&](uint64_t at) -> Status {
    while (image.size() - whole >= 8) {
      ByteReader rb(image.data() + whole, image.size() - whole, swap_, whole);
      uint32_t type = rb.U32At(0);
      uint16_t size = rb.U16At(6);
      if (size < 8) {
        return Error("data.compressed", at,
                     "decompressed record of " + std::to_string(size) +
                         " bytes, smaller than its header (at " + std::to_string(whole) +
                         " in the decompressed data)");
      }
      if (size > image.size() - whole)
        break;
      uint64_t payload = 0;
      if ((type == kRecordAuxtrace && size >= 16) ||
          (type == kRecordHeaderTracingData && size >= 12))
        payload = TrailingPayload(ByteReader(image.data() + whole, size, swap_), type);
      if (payload > image.size() - whole - size)
        break;
      whole += size + payload;
    }
    return Ok();
  };
  auto copy_plain = [&](uint64_t to) {
    if (to == copied_to)
      return;
    if (whole == image.size()) {
      image.insert(image.end(), base_ + copied_to, base_ + to);
      whole = image.size();
    } else {  // a plain record between the two halves of a compressed one: it comes first
      std::vector<uint8_t> rest(image.begin() + whole, image.end());
      image.resize(whole);
      image.insert(image.end(), base_ + copied_to, base_ + to);
      whole = image.size();
      image.insert(image.end(), rest.begin(), rest.end());
    }
    copied_to = to;
  };
  for (uint64_t off = data_off_; off < end;) {
    auto h = ParseRecordHeader(base_ + off, end - off, swap_, off);
    if (!h.ok()) {
      Error e = h.error();
      e.field = "data." + e.field;
      return e;
    }
    if (h->type != kRecordCompressed && h->type != kRecordCompressed2) {
      RecordView v;
      uint64_t next;
      PBID_RETURN_IF_ERROR(CheckRecord(off, &v, &next));
      // A pipe-mode stream's HEADER_COMPRESSED: u64 bit, then five u32, mmap_len last.
      ByteReader rb(base_ + off, h->size, swap_, off);
      if (pipe_ && h->type == kRecordHeaderFeature && h->size >= 16 + 20 &&
          rb.U64At(8) == static_cast<uint64_t>(kFeatCompressed))
        max_out = rb.U32At(16 + 16);
      off = next;
      continue;
    }
    if (!zstd) {
      if (max_out == 0) {
        return Error("data.compressed", off,
                     "compressed record without a HEADER_COMPRESSED feature (with its mmap_len) "
                     "before it");
      }
      zstd = std::make_unique<internal::ZstdDecompressor>();
      uint64_t ratio =
          features_.compressed ? std::max<uint32_t>(features_.compressed->ratio, 1) : 1;
      image.reserve(static_cast<size_t>(std::min(limit, data_off_ + data_size_ * ratio)));
      PreferHugePages(image.data(), image.capacity());
    }
    copy_plain(off);
    const uint8_t* payload = base_ + off + 8;
    uint64_t n = h->size - 8u;
    if (h->type == kRecordCompressed2) {
      // perf 6.15's: a u64 data_size, then the payload, padded to 8 bytes.
      if (h->size < 16)
        return Error("data.compressed2.size", off + 6, "record too small for its data_size");
      uint64_t data_size = ByteReader(base_ + off, h->size, swap_, off).U64At(8);
      if (data_size > h->size - 16u) {
        return Error("data.compressed2.data_size", off + 8,
                     "data_size " + std::to_string(data_size) + " runs past its record of " +
                         std::to_string(h->size) + " bytes");
      }
      payload = base_ + off + 16;
      n = data_size;
    }
    if (whole == image.size())
      partial_from = off;
    uint64_t room = std::min<uint64_t>(max_out, limit - std::min<uint64_t>(limit, image.size()));
    PBID_RETURN_IF_ERROR(zstd->Decompress(payload, n, room, &image, off));
    if (image.size() >= limit) {
      Error e("data.compressed", off,
              "records decompress to more than " + std::to_string(kMaxRatio) +
                  " times the data section");
      e.kind = ErrorKind::kUnsupported;
      return e;
    }
    PBID_RETURN_IF_ERROR(take_whole(off));
    last_compressed = off;
    off += h->size;
    copied_to = off;
  }
  if (!zstd)
    return Ok();  // nothing compressed: the records stay in the file
  copy_plain(end);
  if (whole != image.size()) {
    return Error(
        "data.compressed", partial_from,
        "the compressed records end inside a record: " + std::to_string(image.size() - whole) +
            " bytes of it decompressed, its rest is missing (truncated payload?)");
  }
  if (!zstd->AtBlockBoundary()) {
    return Error("data.compressed", last_compressed,
                 "compressed payload ends inside a zstd block (truncated)");
  }
  decompressed_ = std::move(image);
  data_ = decompressed_.data();
  data_size_ = decompressed_.size() - data_off_;
  return Ok();
}

RecordView PerfDataReader::RecordAt(uint64_t offset) const {
  ByteReader br(Bytes(offset, 8, false), 8, swap_);
  RecordHeader h;
  h.type = br.U32At(0);
  h.misc = br.U16At(4);
  h.size = br.U16At(6);
  return RecordView{h, Bytes(offset, h.size, false), offset, swap_};
}

// A pipe-mode stream declares its events, its build-id table and its features in records:
// they are read here, before anything else can ask for them.
Status PerfDataReader::ReadPipeHeaderRecords() {
  PageReleaser pages(*this);
  return ForEachRecord([&](const RecordView& v) -> Status {
    pages.Read(v.header.size);
    ByteReader rb(v.data, v.header.size, swap_, v.offset);
    uint64_t off = v.offset;
    if (v.header.type == kRecordHeaderAttr) {
      if (v.header.size < 8 + PERF_ATTR_SIZE_VER0)
        return Error("data.header_attr.size", off + 6, "too small for an attr");
      uint32_t asz = rb.U32At(8 + 4);
      if (asz == 0)
        asz = PERF_ATTR_SIZE_VER0;
      if (8 + static_cast<uint64_t>(asz) > v.header.size)
        return Error("data.header_attr.attr.size", off + 12, "attr runs past its record");
      auto attr = DecodeAttr(v.data + 8, asz, swap_, off + 8);
      if (!attr.ok())
        return attr.error();
      EventAttr ea;
      ea.attr = *attr;
      for (uint64_t p = 8 + asz; p + 8 <= v.header.size; p += 8)
        ea.ids.push_back(rb.U64At(p));
      Status same = SameSampleIdAll(ea, "data.header_attr", off + 8);
      if (!same.ok())
        return same;
      attrs_.push_back(std::move(ea));
    } else if (v.header.type == kRecordHeaderBuildId) {
      // perf writes the build-id table of a pipe-mode stream as these records.
      auto b = ParseHeaderBuildId(v);
      if (!b.ok()) {
        Error e = b.error();
        e.field = "data." + e.field;
        return e;
      }
      if (!features_.build_ids)
        features_.build_ids.emplace();
      features_.build_ids->push_back(BuildIdEntry{b->pid,
                                                  static_cast<uint16_t>(b->misc & kMiscCpumodeMask),
                                                  b->build_id, std::string(b->filename)});
    } else if (v.header.type == kRecordHeaderFeature && v.header.size >= 16) {
      uint64_t bit = rb.U64At(8);
      if (bit < kFeatBits) {
        feat_bits_[bit] = true;
        feat_sections_[bit] = {off + 16, v.header.size - 16u};
        Status s = ParseFeature(static_cast<int>(bit), off + 16, v.header.size - 16u);
        if (!s.ok())
          return s;
      }
    }
    return Ok();
  });
}

Status PerfDataReader::ParsePipeStream() {
  data_off_ = kPipeHeaderSize;
  data_size_ = size_ - kPipeHeaderSize;
  // A stream announces compression in a HEADER_FEATURE record, before its first compressed
  // record: Decompress finds both, and leaves a stream without them as it is.
  Status s = Decompress(0);
  if (s.ok())
    s = ReadPipeHeaderRecords();
  if (!s.ok())
    return s;
  if (attrs_.empty())
    return Error("data", data_off_, "pipe stream has no HEADER_ATTR record");
  return Ok();
}

Status PerfDataReader::ParseFeatures(uint64_t feat_off) {
  int n = 0;
  for (int i = 0; i < kFeatBits; i++)
    n += feat_bits_[i];
  if (n == 0)
    return Ok();
  uint64_t table_size = static_cast<uint64_t>(n) * internal::kFeatureEntrySize;
  if (!InFile(feat_off, table_size, size_)) {
    return OutsideFile("features.table", feat_off, feat_off, table_size, size_);
  }
  ByteReader br(base_, size_, swap_);
  uint64_t entry = feat_off;
  for (int bit = 0; bit < kFeatBits; bit++) {
    if (!feat_bits_[bit])
      continue;
    uint64_t off = br.U64At(entry), size = br.U64At(entry + 8);
    if (!InFile(off, size, size_)) {
      return OutsideFile(internal::FeatureField(bit, ".offset"), entry, off, size, size_);
    }
    feat_sections_[bit] = {off, size};
    Status s = ParseFeature(bit, off, size);
    if (!s.ok())
      return s;
    entry += internal::kFeatureEntrySize;
  }
  return Ok();
}

Status PerfDataReader::ParseFeature(int bit, uint64_t off, uint64_t size) {
  const internal::FeatureOps* op = internal::FindFeature(bit);
  if (op == nullptr || op->decode == nullptr)
    return Ok();  // kept as raw bytes (FeatureBytes)
  // A pipe-mode stream's sections are in its records.
  const uint8_t* base = pipe_ ? data_ : base_;
  return op->decode(internal::FeatureSection{base, swap_, off, size}, &features_, &attrs_);
}

std::pair<const uint8_t*, size_t> PerfDataReader::FeatureBytes(int bit) const {
  if (!HasFeature(bit))
    return {nullptr, 0};
  const uint8_t* base = pipe_ ? data_ : base_;
  return {base + feat_sections_[bit].first, feat_sections_[bit].second};
}

// Every non-sample record ends in a sample_id block whose size depends on its event, and the
// event is found through that block: events that disagree on sample_id_all make it ambiguous
// (perf: "non matching sample_id_all").
Status PerfDataReader::SameSampleIdAll(const EventAttr& ea, const std::string& field,
                                       uint64_t attr_off) const {
  if (attrs_.empty() || ea.attr.sample_id_all == attrs_[0].attr.sample_id_all)
    return Ok();
  return Error(field + ".sample_id_all", attr_off + 40,
               "events disagree on sample_id_all (" + std::to_string(ea.attr.sample_id_all) +
                   " here, " + std::to_string(attrs_[0].attr.sample_id_all) + " in the first)");
}

const EventAttr* PerfDataReader::AttrForId(uint64_t id) const {
  auto it = id_index_.find(id);
  return it == id_index_.end() ? nullptr : &attrs_[it->second];
}

// Records without an event id were written by the recording tool, not by the kernel: perf
// synthesizes the MMAP2 of processes that already ran this way, with bit 14 and the build ID
// set, and opens one tracking event with mmap2 (and build_id) next to sampling events without
// them. The kernel only emits MMAP2 for events with attr.mmap2, so when exactly one event has
// it, the record is that event's; otherwise the first event's, as perf's evlist__id2evsel.
const EventAttr* PerfDataReader::AttrForUnattributed() const {
  const EventAttr* tracking = nullptr;
  for (const EventAttr& a : attrs_) {
    if (!a.attr.mmap2)
      continue;
    if (tracking)
      return &attrs_[0];
    tracking = &a;
  }
  return tracking ? tracking : &attrs_[0];
}

const EventAttr* PerfDataReader::AttrForRecord(const RecordView& r) const {
  if (attrs_.empty())
    return nullptr;
  if (attrs_.size() == 1)
    return &attrs_[0];
  uint64_t id = RecordEventId(r, id_place_);
  if (id == 0)
    return AttrForUnattributed();
  // An id no attr owns names no event we know: guessing attrs_[0] could trust the MMAP2
  // build-id bit of an event recorded without attr.build_id (perf's evlist__id2evsel).
  return AttrForId(id);
}

}  // namespace pbid
