// SPDX-License-Identifier: GPL-2.0
#include "pbid/ring_buffer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "pbid/elf_build_id.h"
#include "pbid/record_builder.h"
#include "pbid/records.h"
#include "util/test_util.h"

namespace pbid {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kData = 4096;

// A ring buffer laid out as the kernel does it, in ordinary memory.
class FakeRing {
 public:
  FakeRing() {
    mem_ = static_cast<uint8_t*>(aligned_alloc(kPage, kPage + kData));
    memset(mem_, 0, kPage + kData);
    meta()->data_offset = kPage;
    meta()->data_size = kData;
  }
  ~FakeRing() { free(mem_); }
  perf_event_mmap_page* meta() { return reinterpret_cast<perf_event_mmap_page*>(mem_); }
  void* base() { return mem_; }
  // Producer side: copies bytes at head, wrapping, then publishes head.
  void Push(const std::vector<uint8_t>& rec) {
    for (size_t i = 0; i < rec.size(); i++)
      mem_[kPage + ((head_ + i) % kData)] = rec[i];
    head_ += rec.size();
    __atomic_store_n(&meta()->data_head, head_, __ATOMIC_RELEASE);
  }
  void SetTail(uint64_t t) {
    head_ = t;
    meta()->data_tail = t;
    meta()->data_head = t;
  }

 private:
  uint8_t* mem_;
  uint64_t head_ = 0;
};

RecordBytes Comm(uint32_t pid, size_t name_len) {
  CommRecord c;
  c.pid = c.tid = pid;
  std::string name(name_len, 'a' + pid % 26);
  c.comm = name;
  return *BuildComm(c, nullptr);
}

TEST(RingBufferTest, ReadsAndAdvancesTail) {
  FakeRing ring;
  RingBuffer rb(ring.base(), kPage, kData);
  for (uint32_t i = 1; i <= 3; i++)
    ring.Push(Comm(i, 10));
  std::vector<uint32_t> pids;
  auto n = rb.Read([&](const uint8_t* p, size_t size) {
    RecordView v{{PERF_RECORD_COMM, 0, static_cast<uint16_t>(size)}, p, 0, false};
    auto c = ParseComm(v, nullptr);
    EXPECT_TRUE(c.ok());
    pids.push_back(c->pid);
    return true;
  });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(3u, *n);
  EXPECT_EQ((std::vector<uint32_t>{1, 2, 3}), pids);
  EXPECT_EQ(ring.meta()->data_head, ring.meta()->data_tail);
  EXPECT_EQ(0u, rb.Pending());
}

// Every start position near the end, so that both the header and the body straddle the wrap.
TEST(RingBufferTest, RecordsWrappingAroundTheEnd) {
  RecordBytes rec = Comm(7, 40);
  for (uint64_t start = kData - rec.size() - 8; start <= kData + 8; start += 4) {
    FakeRing ring;
    ring.SetTail(start);
    RingBuffer rb(ring.base(), kPage, kData);
    ring.Push(rec);
    ring.Push(Comm(8, 3));
    std::vector<std::vector<uint8_t>> got;
    auto n = rb.Read([&](const uint8_t* p, size_t size) {
      got.emplace_back(p, p + size);
      return true;
    });
    ASSERT_TRUE(n.ok()) << "start " << start;
    ASSERT_EQ(2u, got.size());
    EXPECT_EQ(rec, got[0]) << "start " << start;
    EXPECT_EQ(start + rec.size() + Comm(8, 3).size(), ring.meta()->data_tail);
  }
}

TEST(RingBufferTest, StopsWhereTheConsumerStops) {
  FakeRing ring;
  RingBuffer rb(ring.base(), kPage, kData);
  RecordBytes r = Comm(1, 5);
  for (int i = 0; i < 4; i++)
    ring.Push(r);
  int calls = 0;
  auto n = rb.Read([&](const uint8_t*, size_t) { return ++calls < 3; });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(2u, *n);
  EXPECT_EQ(2 * r.size(), ring.meta()->data_tail);  // the refused record is read again
  n = rb.Read([&](const uint8_t*, size_t) { return true; });
  EXPECT_EQ(2u, *n);
}

TEST(RingBufferTest, CorruptSizeIsAnErrorAndSkipsToHead) {
  FakeRing ring;
  RingBuffer rb(ring.base(), kPage, kData);
  RecordBytes r = Comm(1, 5);
  r[6] = 0xff;  // size larger than what was published
  r[7] = 0x0f;
  ring.Push(r);
  auto n = rb.Read([&](const uint8_t*, size_t) { return true; });
  ASSERT_FALSE(n.ok());
  EXPECT_EQ("ring_buffer.record.size", n.error().field);
  EXPECT_EQ(ring.meta()->data_head, ring.meta()->data_tail);
}

// The real kernel: two events on this thread, one asking for build ids and one not. The
// record of the first must carry the file's id; the second must read as maj/min/ino even if
// the kernel sets PERF_RECORD_MISC_MMAP_BUILD_ID on it (seen on 6.18.44).
// Param: which of the two events asks for build ids. On the host's 6.18.44 the misc bit leaks
// onto the event opened first when the build-id event is opened second (BuildIdSecond).
class LiveKernelTest : public ::testing::TestWithParam<int> {};

TEST_P(LiveKernelTest, Mmap2RecordsThroughTheRingBuffer) {
  const int with_id = GetParam();
  const std::string fixture = std::string(testing::LibFixturesDir()) + "/sha1.so";
  auto want = ReadElfBuildId(fixture);
  ASSERT_TRUE(want.ok() && *want);

  struct Ev {
    int fd = -1;
    void* base = MAP_FAILED;
    EventAttr attr;
  } ev[2];
  const size_t len = (1 + 8) * kPage;
  for (int i = 0; i < 2; i++) {
    perf_event_attr& a = ev[i].attr.attr;
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER;
    a.sample_id_all = 1;
    a.mmap = 1;
    a.mmap2 = 1;
    a.build_id = i == with_id;
    a.exclude_kernel = 1;
    ev[i].fd = static_cast<int>(syscall(__NR_perf_event_open, &a, 0, -1, -1, 0));
    if (ev[i].fd < 0 && errno == EINVAL && i == with_id) {
      GTEST_SKIP() << "kernel without attr.build_id";
    }
    if (ev[i].fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS)) {
      GTEST_SKIP() << "perf_event_open not allowed here: " << strerror(errno);
    }
    ASSERT_GE(ev[i].fd, 0) << strerror(errno);
    ev[i].base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, ev[i].fd, 0);
    ASSERT_NE(MAP_FAILED, ev[i].base);
  }
  int fd = open(fixture.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(0, fstat(fd, &st));
  void* map = mmap(nullptr, kPage, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  ASSERT_NE(MAP_FAILED, map);

  for (int i = 0; i < 2; i++) {
    RingBuffer rb(ev[i].base, kPage, 8 * kPage);
    int found = 0;
    bool leaked = false;
    auto n = rb.Read([&](const uint8_t* p, size_t size) {
      auto h = ParseRecordHeader(p, size, false, 0);
      EXPECT_TRUE(h.ok());
      if (h->type != PERF_RECORD_MMAP2)
        return true;
      RecordView v{*h, p, 0, false};
      auto m = ParseMmap2(v, &ev[i].attr);
      EXPECT_TRUE(m.ok()) << m.error().ToString();
      if (m->filename != fixture || m->start != reinterpret_cast<uint64_t>(map))
        return true;
      found++;
      if (i == with_id) {
        EXPECT_TRUE(m->has_build_id);
        EXPECT_EQ(**want, m->build_id);
      } else {
        leaked = m->misc_bit_untrusted;
        EXPECT_FALSE(m->has_build_id);
        EXPECT_EQ(static_cast<uint64_t>(st.st_ino), m->ino);
      }
      return true;
    });
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(1, found) << "event " << i;
    if (leaked)
      printf("note: this kernel leaks the build-id misc bit onto other events\n");
  }
  munmap(map, kPage);
  close(fd);
  for (auto& e : ev) {
    munmap(e.base, len);
    close(e.fd);
  }
}

INSTANTIATE_TEST_SUITE_P(Order, LiveKernelTest, ::testing::Values(0, 1), [](const auto& info) {
  return info.param ? "BuildIdSecond" : "BuildIdFirst";
});

}  // namespace
}  // namespace pbid
