// SPDX-License-Identifier: GPL-2.0
#include "pbid/proc_maps.h"
#include "util/test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace pbid {
namespace {

std::string Fixture(const char* name) {
  return std::string(testing::LibFixturesDir()) + "/" + name;
}

TEST(ProcMapsTest, ParsesLines) {
  auto m = ParseProcMapsLine(
      "7f1a6c764000-7f1a6c8ba000 r-xp 00026000 fe:01 1234567                    "
      "/usr/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(0x7f1a6c764000u, m->start);
  EXPECT_EQ(0x7f1a6c8ba000u, m->end);
  EXPECT_EQ(0x26000u, m->pgoff);
  EXPECT_EQ(static_cast<uint32_t>(PROT_READ | PROT_EXEC), m->prot);
  EXPECT_EQ(static_cast<uint32_t>(MAP_PRIVATE), m->flags);
  EXPECT_EQ(0xfeu, m->maj);
  EXPECT_EQ(1u, m->min);
  EXPECT_EQ(1234567u, m->ino);
  EXPECT_EQ("/usr/lib/x86_64-linux-gnu/libc.so.6", m->path);
  auto anon = ParseProcMapsLine("7ffd1000-7ffd2000 rw-s 00000000 00:00 0 ");
  ASSERT_TRUE(anon.ok());
  EXPECT_EQ("", anon->path);
  EXPECT_EQ(static_cast<uint32_t>(MAP_SHARED), anon->flags);
  auto del = ParseProcMapsLine("1000-2000 r-xp 00000000 08:01 5 /tmp/x (deleted)");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ("/tmp/x (deleted)", del->path);
  EXPECT_FALSE(ParseProcMapsLine("garbage").ok());
}

struct Mapped {
  void* addr = MAP_FAILED;
  ProcMapping m;
};

// Maps path executable and finds its line in /proc/self/maps.
Mapped MapExec(const std::string& path) {
  Mapped out;
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return out;
  out.addr = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  close(fd);
  auto maps = ReadProcMaps(getpid());
  if (!maps.ok())
    return out;
  for (const ProcMapping& m : *maps) {
    if (m.start == reinterpret_cast<uint64_t>(out.addr))
      out.m = m;
  }
  return out;
}

std::string Copy(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  return to;
}

TEST(ProcMapsTest, MappingOfALiveFile) {
  Mapped mp = MapExec(Fixture("sha1.so"));
  ASSERT_NE(MAP_FAILED, mp.addr);
  auto want = ReadElfBuildId(Fixture("sha1.so"));
  auto got = ReadMappingBuildId(getpid(), mp.m.start, mp.m.end, mp.m.path,
                                FileIdentity{mp.m.maj, mp.m.min, mp.m.ino});
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ(**want, **got);
  munmap(mp.addr, 4096);
}

// map_files still reaches a file that was deleted, or replaced by another one, after mapping.
TEST(ProcMapsTest, DeletedAndReplacedFiles) {
  char range[64];
  snprintf(range, sizeof(range), "/proc/self/map_files/");
  if (access(range, R_OK | X_OK) != 0 || geteuid() != 0) {
    GTEST_SKIP() << "/proc/self/map_files needs CAP_SYS_ADMIN";
  }
  std::string tmp = std::string(::testing::TempDir()) + "/pbid-maps-" + std::to_string(getpid());
  Copy(Fixture("sha1.so"), tmp);
  Mapped mp = MapExec(tmp);
  ASSERT_NE(MAP_FAILED, mp.addr);
  auto want = ReadElfBuildId(Fixture("sha1.so"));
  // Replace the path by a different ELF (new inode), as a package upgrade does.
  std::string other = Copy(Fixture("md5.so"), tmp + ".new");
  ASSERT_EQ(0, rename(other.c_str(), tmp.c_str()));
  FileIdentity ident{mp.m.maj, mp.m.min, mp.m.ino};
  auto got = ReadMappingBuildId(getpid(), mp.m.start, mp.m.end, tmp, ident);
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ(**want, **got);
  // Without map_files (wrong range), the path now names another inode: refuse, do not lie.
  auto by_path = ReadMappingBuildId(getpid(), 1, 2, tmp, ident);
  EXPECT_FALSE(by_path.ok());
  // Deleted: still readable through map_files.
  ASSERT_EQ(0, unlink(tmp.c_str()));
  auto maps = ReadProcMaps(getpid());
  ASSERT_TRUE(maps.ok());
  std::string deleted_path;
  for (const ProcMapping& m : *maps) {
    if (m.start == mp.m.start)
      deleted_path = m.path;
  }
  EXPECT_NE(std::string::npos, deleted_path.find("(deleted)"));
  auto del = ReadMappingBuildId(getpid(), mp.m.start, mp.m.end, deleted_path, ident);
  ASSERT_TRUE(del.ok()) << del.error().ToString();
  EXPECT_EQ(**want, **del);
  munmap(mp.addr, 4096);
}

// Synthesis reads a process through /proc: a directory laid out like it gives the same
// snapshot, so the rules are checked without a live process. Thread 44 exited before its comm
// was read; the data mapping is not executable.
TEST(ProcMapsTest, SnapshotOfAFakeProc) {
  testing::TempDir proc;
  ASSERT_FALSE(proc.path().empty());
  std::string p = proc.path() + "/42";
  for (const char* d : {"", "/task", "/task/42", "/task/43", "/task/44"})
    ASSERT_EQ(0, mkdir((p + d).c_str(), 0755)) << d;
  std::ofstream(p + "/maps") << "00400000-00401000 r-xp 00000000 08:01 1234 /usr/bin/app\n"
                                "00600000-00601000 rw-p 00000000 08:01 1234 /usr/bin/app\n"
                                "7f0000000000-7f0000001000 r-xp 00001000 08:01 99 /lib/libc.so.6\n";
  std::ofstream(p + "/task/42/comm") << "app\n";
  std::ofstream(p + "/task/43/comm") << "worker\n";

  auto snap = SnapshotProcess(42, proc.path());
  ASSERT_TRUE(snap.ok()) << snap.error().ToString();
  ASSERT_EQ(2u, snap->threads.size());
  EXPECT_EQ(42, snap->threads[0].tid);
  EXPECT_EQ("app", snap->threads[0].comm);
  EXPECT_EQ(43, snap->threads[1].tid);
  EXPECT_EQ("worker", snap->threads[1].comm);
  ASSERT_EQ(2u, snap->exec_maps.size());
  EXPECT_EQ("/usr/bin/app", snap->exec_maps[0].path);
  EXPECT_EQ(1234u, snap->exec_maps[0].ino);
  EXPECT_EQ("/lib/libc.so.6", snap->exec_maps[1].path);
  EXPECT_EQ(0x1000u, snap->exec_maps[1].pgoff);

  EXPECT_FALSE(SnapshotProcess(7, proc.path()).ok()) << "a process without maps";
  EXPECT_EQ((std::vector<pid_t>{42}), ListPids(proc.path()));
}

// The inode generation of path, as the kernel puts it in MMAP2 records; 0 when the file
// system does not report one.
uint64_t Generation(const std::string& path) {
  unsigned int gen = 0;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0;
  if (fd >= 0)
    close(fd);
  return ok ? gen : 0;
}

TEST(ProcMapsTest, CacheByInodeAndGeneration) {
  Mapped mp = MapExec(Fixture("uuid.so"));
  ASSERT_NE(MAP_FAILED, mp.addr);
  const uint64_t gen = Generation(Fixture("uuid.so"));
  if (gen == 0)
    GTEST_SKIP() << "the build directory's file system reports no inode generations";
  BuildIdCache cache;
  FileIdentity ident{mp.m.maj, mp.m.min, mp.m.ino, gen};
  auto a = cache.Get(getpid(), mp.m.start, mp.m.end, mp.m.path, ident);
  ASSERT_TRUE(a.ok());
  munmap(mp.addr, 4096);
  // The mapping is gone; the cache still knows the file.
  auto b = cache.Get(getpid(), mp.m.start, mp.m.end, "", ident);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(**a, **b);
  // The same inode number with another generation is another file: not from the cache.
  FileIdentity reused = ident;
  reused.ino_generation = gen + 1;
  EXPECT_FALSE(cache.Get(getpid(), mp.m.start, mp.m.end, "", reused).ok());
  // Nor without a generation: the number alone proves nothing later on.
  FileIdentity unknown = ident;
  unknown.ino_generation = 0;
  EXPECT_FALSE(cache.Get(getpid(), mp.m.start, mp.m.end, "", unknown).ok());
}

// ext4 gives a deleted file's inode number to the next file it creates: a path that leads to
// the same device and inode number is the mapped file only if the generation agrees too.
TEST(ProcMapsTest, AReusedInodeNumberIsAnotherFile) {
  std::string tmp = std::string(::testing::TempDir()) + "/pbid-gen-" + std::to_string(getpid());
  Copy(Fixture("sha1.so"), tmp);
  const uint64_t gen = Generation(tmp);
  if (gen == 0) {
    unlink(tmp.c_str());
    GTEST_SKIP() << ::testing::TempDir() << " reports no inode generations";
  }
  struct stat st;
  ASSERT_EQ(0, stat(tmp.c_str(), &st));
  FileIdentity same{major(st.st_dev), minor(st.st_dev), st.st_ino, gen};
  // No mapping at [1, 2): only the path can answer.
  auto ok = ReadMappingBuildId(getpid(), 1, 2, tmp, same);
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(**ReadElfBuildId(tmp), **ok);
  FileIdentity successor = same;
  successor.ino_generation = gen ^ 1;
  auto refused = ReadMappingBuildId(getpid(), 1, 2, tmp, successor);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string::npos, refused.error().ToString().find("generation"))
      << refused.error().ToString();
  unlink(tmp.c_str());
}

TEST(ProcMapsTest, Vdso) {
  auto id = VdsoBuildId();
  ASSERT_TRUE(id.ok()) << id.error().ToString();
  if (!id->has_value())
    GTEST_SKIP() << "vdso without build id";
  EXPECT_GE((*id)->size(), 8u);
}

std::string WriteKallsyms(const testing::TempDir& tmp, const std::string& text) {
  std::string p = tmp.path() + "/kallsyms";
  std::ofstream(p) << text;
  return p;
}

TEST(ProcMapsTest, KernelTextFromKallsyms) {
  testing::TempDir tmp;
  auto t = ReadKernelText(WriteKallsyms(tmp,
                                        "ffffffff81000000 T _text\n"
                                        "ffffffff81000000 T _stext\n"
                                        "ffffffff81001000 T do_one_initcall\n"
                                        "ffffffff81e00000 T _etext\n"));
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  ASSERT_TRUE(t->has_value());
  EXPECT_EQ(0xffffffff81000000u, (*t)->start);
  EXPECT_EQ(0xffffffff81e00000u, (*t)->end);
}

// kptr_restrict shows every address as 0: no kernel map rather than one at 0.
TEST(ProcMapsTest, KernelTextHiddenOrMissing) {
  testing::TempDir tmp;
  auto hidden =
      ReadKernelText(WriteKallsyms(tmp, "0000000000000000 T _text\n0000000000000000 T _etext\n"));
  ASSERT_TRUE(hidden.ok());
  EXPECT_FALSE(hidden->has_value());
  auto no_etext = ReadKernelText(WriteKallsyms(tmp, "ffffffff81000000 T _text\n"));
  ASSERT_TRUE(no_etext.ok());
  EXPECT_FALSE(no_etext->has_value());
  auto missing = ReadKernelText(tmp.path() + "/none");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(ENOENT, missing.error().sys_errno);
}

// /proc/modules as 5.10 writes it: every module with an address becomes a mapping.
TEST(ProcMapsTest, KernelModules) {
  testing::TempDir tmp;
  std::string p = tmp.path() + "/modules";
  std::ofstream(p) << "pbid_mod_b 16384 0 - Live 0xffffffffc0005000 (O)\n"
                      "pbid_mod_a 16384 1 pbid_mod_b, Live 0xffffffffc0000000 (O)\n"
                      "going 8192 0 - Unloading 0xffffffffc0010000\n"
                      "hidden 8192 0 - Live 0x0000000000000000\n";
  auto m = ReadKernelModules(p);
  ASSERT_TRUE(m.ok()) << m.error().ToString();
  ASSERT_EQ(3u, m->size());
  EXPECT_EQ("going", (*m)[2].name);
  EXPECT_EQ("pbid_mod_b", (*m)[0].name);
  EXPECT_EQ(0xffffffffc0005000u, (*m)[0].start);
  EXPECT_EQ(16384u, (*m)[0].size);
  EXPECT_EQ("pbid_mod_a", (*m)[1].name);
  EXPECT_EQ(0xffffffffc0000000u, (*m)[1].start);

  // 6.4 and later: the size counts memory that need not follow the text; a range stops at the
  // next module's start.
  std::ofstream(p) << "big 65536 0 - Live 0xffffffffc0000000\n"
                      "next 8192 0 - Live 0xffffffffc0004000\n";
  auto clipped = ReadKernelModules(p);
  ASSERT_TRUE(clipped.ok());
  ASSERT_EQ(2u, clipped->size());
  EXPECT_EQ(0x4000u, (*clipped)[0].size);
  EXPECT_EQ(8192u, (*clipped)[1].size);

  // A kernel without modules has no file: no modules, not an error.
  auto none = ReadKernelModules(tmp.path() + "/absent");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  std::ofstream(p) << "pbid_mod_a sixteen 0 - Live 0xffffffffc0000000\n";
  auto bad = ReadKernelModules(p);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string::npos, bad.error().message.find("line 1")) << bad.error().ToString();
}

}  // namespace
}  // namespace pbid
