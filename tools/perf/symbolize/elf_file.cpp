// SPDX-License-Identifier: GPL-2.0
#include "elf_file.h"

#include "pbid/elf_build_id.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace pbid {

Result<ElfFile> ElfFile::Open(const std::string& path) {
  if (!LibelfReady())
    return Error("libelf", "elf_version failed: " + std::string(elf_errmsg(-1)));
  auto opened = OpenRegularFile(path);
  if (!opened.ok())
    return opened.error();
  int fd = *opened;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    std::string msg = elf == nullptr ? elf_errmsg(-1) : "not an ELF file";
    if (elf != nullptr)
      elf_end(elf);
    close(fd);
    return Error(path, msg);
  }
  return ElfFile(path, fd, elf);
}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      elf_(std::exchange(other.elf_, nullptr)) {}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this != &other) {
    Close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    elf_ = std::exchange(other.elf_, nullptr);
  }
  return *this;
}

ElfFile::~ElfFile() {
  Close();
}

void ElfFile::Close() {
  if (elf_ != nullptr)
    elf_end(elf_);
  if (fd_ >= 0)
    close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

int ElfFile::ReleaseFd() {
  if (elf_ != nullptr)
    elf_end(elf_);
  elf_ = nullptr;
  return std::exchange(fd_, -1);
}

Result<std::optional<BuildId>> ElfFile::ReadBuildId() const {
  return ReadElfBuildIdElf(elf_, path_);
}

bool ElfFile::SectionHasBits(const char* name) const {
  size_t shstrndx;
  if (elf_getshdrstrndx(elf_, &shstrndx) != 0)
    return false;
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr)
      continue;
    const char* sname = elf_strptr(elf_, shstrndx, shdr.sh_name);
    if (sname != nullptr && strcmp(sname, name) == 0) {
      return shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
    }
  }
  return false;
}

bool ElfFile::HasDwarf() const {
  return SectionHasBits(".debug_info");
}
bool ElfFile::HasSymtab() const {
  return SectionHasBits(".symtab");
}

Result<std::vector<LoadSegment>> ElfFile::LoadSegments() const {
  size_t phnum;
  if (elf_getphdrnum(elf_, &phnum) != 0) {
    return Error(path_, "program header count: " + std::string(elf_errmsg(-1)));
  }
  // Real objects have a handful of headers; a huge count is a corrupt file, not a workload.
  constexpr size_t kMaxPhdrs = 4096;
  if (phnum > kMaxPhdrs)
    return Error(path_, "e_phnum " + std::to_string(phnum) + " too large");
  std::vector<LoadSegment> segs;
  for (size_t i = 0; i < phnum; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf_, static_cast<int>(i), &ph) == nullptr) {
      return Error(path_, "program header " + std::to_string(i) + ": " + elf_errmsg(-1));
    }
    if (ph.p_type != PT_LOAD)
      continue;
    segs.push_back({ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz});
  }
  return segs;
}

std::optional<uint64_t> FileOffsetToVaddr(const std::vector<LoadSegment>& segments,
                                          uint64_t file_offset) {
  for (const LoadSegment& s : segments) {
    // Written as a difference so that offset + filesz cannot overflow.
    if (file_offset >= s.offset && file_offset - s.offset < s.filesz) {
      return s.vaddr + (file_offset - s.offset);
    }
  }
  return std::nullopt;
}

bool SegmentsDescribeFile(const std::vector<LoadSegment>& segments) {
  if (segments.empty())
    return false;
  for (const LoadSegment& s : segments) {
    if (s.filesz == 0 && s.memsz != 0)
      return false;
  }
  return true;
}

}  // namespace pbid
