// SPDX-License-Identifier: GPL-2.0
//
// Internal: an ELF file opened read-only through libelf, with the few facts the symbolizer
// needs: its build ID, whether it carries DWARF or a symbol table, and its PT_LOAD segments
// (to turn a file offset into an ELF virtual address).
#ifndef PBID_SYMBOLIZE_ELF_FILE_H_
#define PBID_SYMBOLIZE_ELF_FILE_H_

#include <libelf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/result.h"

namespace pbid {

struct LoadSegment {
  uint64_t offset = 0;  // p_offset
  uint64_t filesz = 0;  // p_filesz
  uint64_t vaddr = 0;   // p_vaddr
  uint64_t memsz = 0;   // p_memsz
};

class ElfFile {
 public:
  // Fails when the file cannot be opened or is not ELF; the error names the path.
  static Result<ElfFile> Open(const std::string& path);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  const std::string& path() const { return path_; }

  // std::nullopt: the file has no NT_GNU_BUILD_ID note. An error: the notes could not be read.
  Result<std::optional<BuildId>> ReadBuildId() const;

  // True when .debug_info has contents (not SHT_NOBITS as in a stripped file).
  bool HasDwarf() const;
  // True when .symtab has contents.
  bool HasSymtab() const;

  // PT_LOAD segments in file order. A file made by `objcopy --only-keep-debug` has segments
  // whose p_offset/p_filesz no longer describe the original file; see SegmentsTrustworthy().
  Result<std::vector<LoadSegment>> LoadSegments() const;

  // Hands the descriptor to the caller (libdwfl consumes it); the ElfFile becomes empty.
  int ReleaseFd();

 private:
  ElfFile(std::string path, int fd, Elf* elf) : path_(std::move(path)), fd_(fd), elf_(elf) {}
  void Close();
  bool SectionHasBits(const char* name) const;

  std::string path_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

// Maps a file offset to an ELF virtual address with the segments of the executable itself.
// std::nullopt when no segment with file contents covers the offset.
std::optional<uint64_t> FileOffsetToVaddr(const std::vector<LoadSegment>& segments,
                                          uint64_t file_offset);

// A debug-only file (objcopy --only-keep-debug) keeps p_vaddr but not p_offset: its segments
// cannot translate file offsets. They can when every PT_LOAD still has file contents.
bool SegmentsDescribeFile(const std::vector<LoadSegment>& segments);

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_ELF_FILE_H_
