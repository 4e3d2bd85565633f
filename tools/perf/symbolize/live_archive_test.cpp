// SPDX-License-Identifier: GPL-2.0
//
// LiveArchive (record --archive): a file is copied from the mapping that names it, so that a
// file deleted or replaced after it was mapped is still archived; a file whose bytes no longer
// have the recorded build ID is never stored; each build ID is copied once. The IDs expected
// come from readelf, not from the code under test.
#include "pbid/symbolize/live_archive.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "pbid/file_hash.h"
#include "test_util.h"

namespace pbid {
namespace {

using testing::CopyFile;
using testing::FixturePath;
using testing::ReadelfBuildId;
using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A file mapped into this process, as a recorded process maps it.
struct Mapped {
  explicit Mapped(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
      return;
    len = static_cast<size_t>(st.st_size);
    ident.maj = major(st.st_dev);
    ident.min = minor(st.st_dev);
    ident.ino = st.st_ino;
    void* p = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p != MAP_FAILED)
      addr = p;
  }
  ~Mapped() {
    if (addr != nullptr)
      munmap(addr, len);
  }
  uint64_t start() const { return reinterpret_cast<uint64_t>(addr); }
  uint64_t end() const { return start() + ((len + 4095) & ~size_t{4095}); }
  void* addr = nullptr;
  size_t len = 0;
  FileIdentity ident;
};

bool MapFilesReadable() {
  return access("/proc/self/map_files", R_OK | X_OK) == 0 && geteuid() == 0;
}

BuildId IdOf(const std::string& path) {
  auto id = BuildId::FromHex(ReadelfBuildId(path));
  EXPECT_TRUE(id.ok()) << path;
  return id.ok() ? *id : BuildId();
}

// The workload fixture copied to TMP/workload (a file the test may delete), with readelf's
// build ID in *id.
std::string CopyOfWorkload(const TempDir& tmp, BuildId* id) {
  const std::string file = tmp.path() + "/workload";
  EXPECT_TRUE(CopyFile(FixturePath("workload.full"), file, true));
  *id = IdOf(file);
  return file;
}

SymbolizerOptions NoSystemSources() {
  SymbolizerOptions o;
  o.build_id_root.clear();
  o.use_debuginfod = false;
  return o;
}

TEST(LiveArchiveTest, ADeletedFileIsCopiedThroughItsMapping) {
  if (!MapFilesReadable())
    GTEST_SKIP() << "/proc/PID/map_files needs CAP_SYS_ADMIN";
  TempDir tmp;
  BuildId id;
  const std::string file = CopyOfWorkload(tmp, &id);
  const std::string bytes = Slurp(file);
  Mapped m(file);
  ASSERT_NE(m.addr, nullptr);
  ASSERT_EQ(unlink(file.c_str()), 0);

  auto a = LiveArchive::Create(tmp.path() + "/archive");
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  (*a)->Add(id, getpid(), m.start(), m.end(), file + " (deleted)", m.ident);
  auto s = (*a)->Finish(NoSystemSources(), 0);
  ASSERT_TRUE(s.ok()) << s.error().ToString();

  EXPECT_EQ((*a)->stats().files_copied, 1u);
  EXPECT_EQ((*a)->stats().bytes_copied, bytes.size());
  ASSERT_EQ(s->entries.size(), 1u);
  EXPECT_NE(s->entries[0].outcome, ArchiveEntry::Outcome::kMissing) << s->entries[0].reason;
  EXPECT_EQ(s->entries[0].recorded_path, file);  // " (deleted)" is the kernel's, not the path's
  const std::string stored =
      tmp.path() + "/archive/" + id.ToHex().substr(0, 2) + "/" + id.ToHex().substr(2);
  EXPECT_EQ(Slurp(stored), bytes);
  EXPECT_EQ(ReadelfBuildId(stored), id.ToHex());
}

TEST(LiveArchiveTest, AFileWithAnotherBuildIdIsNeverStored) {
  if (!MapFilesReadable())
    GTEST_SKIP() << "/proc/PID/map_files needs CAP_SYS_ADMIN";
  TempDir tmp;
  const std::string file = tmp.path() + "/workload";
  ASSERT_TRUE(CopyFile(FixturePath("workload.full"), file, true));
  // The recorded ID is the decoy's: as if the file had been rewritten in place since.
  const BuildId recorded = IdOf(FixturePath("workload_decoy.full"));
  ASSERT_NE(recorded.ToHex(), ReadelfBuildId(file));
  Mapped m(file);
  ASSERT_NE(m.addr, nullptr);

  auto a = LiveArchive::Create(tmp.path() + "/archive");
  ASSERT_TRUE(a.ok());
  (*a)->Add(recorded, getpid(), m.start(), m.end(), file, m.ident);
  auto s = (*a)->Finish(NoSystemSources(), 0);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ((*a)->stats().files_copied, 0u);
  EXPECT_EQ((*a)->stats().failed, 1u);
  EXPECT_NE((*a)->stats().first_failure.find("another build ID"), std::string::npos)
      << (*a)->stats().first_failure;
  ASSERT_EQ(s->entries.size(), 1u);
  EXPECT_EQ(s->entries[0].outcome, ArchiveEntry::Outcome::kMissing);
  EXPECT_EQ(s->files_copied, 0u);
  const std::string h = recorded.ToHex();
  struct stat st;
  EXPECT_NE(stat((tmp.path() + "/archive/" + h.substr(0, 2) + "/" + h.substr(2)).c_str(), &st), 0);
}

TEST(LiveArchiveTest, EachBuildIdIsCopiedOnceAndSharedWithTheNextRecording) {
  if (!MapFilesReadable())
    GTEST_SKIP() << "/proc/PID/map_files needs CAP_SYS_ADMIN";
  TempDir tmp;
  BuildId id;
  const std::string file = CopyOfWorkload(tmp, &id);
  Mapped m1(file), m2(file);
  ASSERT_NE(m1.addr, nullptr);
  ASSERT_NE(m2.addr, nullptr);
  for (int run = 0; run < 2; run++) {
    auto a = LiveArchive::Create(tmp.path() + "/archive");
    ASSERT_TRUE(a.ok());
    (*a)->Add(id, getpid(), m1.start(), m1.end(), file, m1.ident);
    (*a)->Add(id, getpid(), m2.start(), m2.end(), file, m2.ident);
    auto s = (*a)->Finish(NoSystemSources(), 0);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ((*a)->stats().ids, 1u) << "run " << run;
    EXPECT_EQ((*a)->stats().files_copied, run == 0 ? 1u : 0u) << "run " << run;
    EXPECT_EQ((*a)->stats().present, run == 0 ? 0u : 1u) << "run " << run;
    ASSERT_EQ(s->entries.size(), 1u);
    EXPECT_EQ(s->entries[0].outcome, ArchiveEntry::Outcome::kPresent) << "run " << run;
  }
}

// The first process that maps a file is gone before its mapping is read, and the file is
// deleted; a second process still maps it: the file is copied through the second.
TEST(LiveArchiveTest, AFileIsTriedAgainAtItsNextMapping) {
  if (!MapFilesReadable())
    GTEST_SKIP() << "/proc/PID/map_files needs CAP_SYS_ADMIN";
  TempDir tmp;
  BuildId id;
  const std::string file = CopyOfWorkload(tmp, &id);
  Mapped m(file);
  ASSERT_NE(m.addr, nullptr);
  ASSERT_EQ(unlink(file.c_str()), 0);
  pid_t gone = fork();
  ASSERT_GE(gone, 0);
  if (gone == 0)
    _exit(0);
  int status;
  ASSERT_EQ(waitpid(gone, &status, 0), gone);

  auto a = LiveArchive::Create(tmp.path() + "/archive");
  ASSERT_TRUE(a.ok());
  (*a)->Add(id, gone, m.start(), m.end(), file + " (deleted)", m.ident);
  (*a)->Add(id, getpid(), m.start(), m.end(), file + " (deleted)", m.ident);
  auto s = (*a)->Finish(NoSystemSources(), 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*a)->stats().ids, 1u);
  EXPECT_EQ((*a)->stats().files_copied, 1u);
  EXPECT_EQ((*a)->stats().failed, 0u) << (*a)->stats().first_failure;
  ASSERT_EQ(s->entries.size(), 1u);
  EXPECT_NE(s->entries[0].outcome, ArchiveEntry::Outcome::kMissing) << s->entries[0].reason;
}

// A process that exited before its mapping was read: Finish() takes the file from its path,
// because the inode the record names is still there.
TEST(LiveArchiveTest, AnExitedProcessFileIsTakenFromItsPathIfItIsStillTheSameFile) {
  TempDir tmp;
  BuildId id;
  const std::string file = CopyOfWorkload(tmp, &id);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    _exit(0);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  FileIdentity ident;
  ident.maj = major(st.st_dev);
  ident.min = minor(st.st_dev);
  ident.ino = st.st_ino;

  auto a = LiveArchive::Create(tmp.path() + "/archive");
  ASSERT_TRUE(a.ok());
  (*a)->Add(id, child, 0x400000, 0x401000, file, ident);
  auto s = (*a)->Finish(NoSystemSources(), 0);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->entries.size(), 1u);
  EXPECT_NE(s->entries[0].outcome, ArchiveEntry::Outcome::kMissing) << s->entries[0].reason;
  EXPECT_EQ((*a)->stats().files_copied + s->files_copied, 1u);
  const std::string h = id.ToHex();
  EXPECT_EQ(ReadelfBuildId(tmp.path() + "/archive/" + h.substr(0, 2) + "/" + h.substr(2)), h);
}

// A file without a GNU build ID is stored by its file hash, and only with the identities
// recorded: the file hash here is computed by the test from the bytes, as the specification
// defines it, through the library's one implementation (file_hash_test checks that one against
// sha256sum).
TEST(LiveArchiveTest, AFileWithoutABuildIdIsStoredByItsFileHash) {
  if (!MapFilesReadable())
    GTEST_SKIP() << "/proc/PID/map_files needs CAP_SYS_ADMIN";
  TempDir tmp;
  const std::string file = tmp.path() + "/nobid";
  auto strip = testing::RunCommand("objcopy --remove-section .note.gnu.build-id " +
                                   testing::Quote(FixturePath("workload.full")) + " " +
                                   testing::Quote(file));
  ASSERT_EQ(strip.exit_code, 0) << strip.output;
  ASSERT_EQ(ReadelfBuildId(file), "");
  const std::string bytes = Slurp(file);
  FileIds ids;
  ids.file_hash = ComputeFileHashMemory(bytes.data(), bytes.size());
  FileIds wrong;
  wrong.file_hash = ComputeFileHashMemory("x", 1);
  Mapped m(file);
  ASSERT_NE(m.addr, nullptr);
  ASSERT_EQ(unlink(file.c_str()), 0);

  auto a = LiveArchive::Create(tmp.path() + "/archive");
  ASSERT_TRUE(a.ok());
  (*a)->AddByFileIds(ids, getpid(), m.start(), m.end(), file + " (deleted)", m.ident);
  (*a)->AddByFileIds(ids, getpid(), m.start(), m.end(), file + " (deleted)", m.ident);
  (*a)->AddByFileIds(wrong, getpid(), m.start(), m.end(), file + " (deleted)", m.ident);
  auto s = (*a)->Finish(NoSystemSources(), 0);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ((*a)->stats().ids, 2u);
  EXPECT_EQ((*a)->stats().files_copied, 1u);
  EXPECT_EQ((*a)->stats().failed, 1u);  // the wrong hash: not stored under it
  const std::string h = ids.file_hash->ToHex();
  EXPECT_EQ(Slurp(tmp.path() + "/archive/file-hash/" + h.substr(0, 2) + "/" + h.substr(2)), bytes);
  const std::string w = wrong.file_hash->ToHex();
  struct stat st;
  EXPECT_NE(
      stat((tmp.path() + "/archive/file-hash/" + w.substr(0, 2) + "/" + w.substr(2)).c_str(), &st),
      0);
  ASSERT_EQ(s->entries.size(), 2u);
  EXPECT_EQ(s->entries[0].Key(), "file-hash:" + h);
  EXPECT_NE(s->entries[0].outcome, ArchiveEntry::Outcome::kMissing) << s->entries[0].reason;
  EXPECT_EQ(s->entries[1].outcome, ArchiveEntry::Outcome::kMissing);
}

TEST(LiveArchiveTest, ADirectoryThatCannotBeMadeIsAnError) {
  auto a = LiveArchive::Create("/proc/no-such-archive");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().kind, ErrorKind::kIo);
}

}  // namespace
}  // namespace pbid
