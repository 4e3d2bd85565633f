// SPDX-License-Identifier: GPL-2.0
#include "pbid/elf_build_id.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

namespace pbid {

namespace {

// A corrupt file must not make us walk a huge table.
constexpr size_t kMaxPhdrs = 1024;
constexpr size_t kMaxSections = 65536;

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

Error ElfError(const std::string& name, const char* what) {
  return Error(name, std::string(what) + ": " + elf_errmsg(-1));
}

// Scans one note buffer; true when a GNU build-id note was found (stored in *out).
Result<bool> ScanNotes(Elf_Data* data, const std::string& name, MaybeBuildId* out) {
  size_t off = 0;
  GElf_Nhdr nhdr;
  size_t name_off, desc_off;
  while (off < data->d_size && (off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
    const char* base = static_cast<const char*>(data->d_buf);
    if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
        memcmp(base + name_off, "GNU", 4) == 0) {
      auto id = BuildId::FromBytes(base + desc_off, nhdr.n_descsz);
      if (!id.ok()) {
        return Error(name + ": NT_GNU_BUILD_ID.n_descsz", desc_off,
                     "build id of " + std::to_string(nhdr.n_descsz) + " bytes");
      }
      *out = *id;
      return true;
    }
  }
  return false;
}

}  // namespace

bool LibelfReady() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

Result<MaybeBuildId> ReadElfBuildIdElf(Elf* elf, const std::string& name) {
  if (elf_kind(elf) != ELF_K_ELF)
    return Error(name, "not an ELF file");
  MaybeBuildId found;
  // Program headers first: that is what the loader (and the kernel) sees.
  // A header or note that cannot be read is an error: skipping it could turn a truncated file
  // into "no build id".
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0)
    return ElfError(name + ": e_phnum", "cannot read the program header count");
  if (phnum > kMaxPhdrs)
    return Error(name + ": e_phnum", "too many program headers");
  // libelf clips the count to the headers that fit in the file; a clipped table is truncated.
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr)
    return ElfError(name + ": ehdr", "cannot read the ELF header");
  if (ehdr.e_phnum != PN_XNUM && phnum < ehdr.e_phnum) {
    return Error(name + ": e_phoff", ehdr.e_phoff,
                 "only " + std::to_string(phnum) + " of " + std::to_string(ehdr.e_phnum) +
                     " program headers lie inside the file");
  }
  for (size_t i = 0; i < phnum; i++) {
    std::string field = name + ": phdr[" + std::to_string(i) + "]";
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr)
      return ElfError(field, "cannot read the program header");
    if (phdr.p_type != PT_NOTE)
      continue;
    Elf_Data* data = elf_getdata_rawchunk(elf, phdr.p_offset, phdr.p_filesz,
                                          phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
    if (data == nullptr) {
      return Error(field + ".p_offset", phdr.p_offset,
                   "cannot read the " + std::to_string(phdr.p_filesz) +
                       "-byte PT_NOTE segment: " + elf_errmsg(-1));
    }
    auto r = ScanNotes(data, name, &found);
    if (!r.ok())
      return r.error();
    if (*r)
      return found;
  }
  // Then section headers: separate debug files and relocatable objects have no PT_NOTE.
  size_t shnum = 0;
  if (elf_getshdrnum(elf, &shnum) != 0)
    return ElfError(name, "cannot read section headers");
  if (shnum > kMaxSections)
    return Error(name + ": e_shnum", "too many sections");
  if (ehdr.e_shnum != 0 && shnum < ehdr.e_shnum) {
    return Error(name + ": e_shoff", ehdr.e_shoff,
                 "only " + std::to_string(shnum) + " of " + std::to_string(ehdr.e_shnum) +
                     " section headers lie inside the file");
  }
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    std::string field = name + ": section[" + std::to_string(elf_ndxscn(scn)) + "]";
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr)
      return ElfError(field, "cannot read the section header");
    if (shdr.sh_type != SHT_NOTE)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) {
      return Error(field + ".sh_offset", shdr.sh_offset,
                   "cannot read the " + std::to_string(shdr.sh_size) +
                       "-byte SHT_NOTE section: " + elf_errmsg(-1));
    }
    auto r = ScanNotes(data, name, &found);
    if (!r.ok())
      return r.error();
    if (*r)
      return found;
  }
  return MaybeBuildId();
}

Result<MaybeBuildId> ReadElfBuildIdFd(int fd, const std::string& name) {
  if (!LibelfReady())
    return Error("libelf", "elf_version failed");
  ElfPtr elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
  if (!elf)
    return ElfError(name, "cannot read ELF");
  return ReadElfBuildIdElf(elf.get(), name);
}

Result<int> OpenRegularFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return Error::Sys(path, errno, "cannot open");
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    return Error::Sys(path, e, "cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Error(path, "not a regular file");
  }
  return fd;
}

Result<MaybeBuildId> ReadElfBuildId(const std::string& path) {
  auto fd = OpenRegularFile(path);
  if (!fd.ok())
    return fd.error();
  auto r = ReadElfBuildIdFd(*fd, path);
  close(*fd);
  return r;
}

Result<MaybeBuildId> ReadElfBuildIdMemory(const void* image, size_t size, const std::string& name) {
  if (!LibelfReady())
    return Error("libelf", "elf_version failed");
  // elf_memory wants a writable pointer but ELF_C_READ_MMAP-style access only reads it.
  ElfPtr elf(elf_memory(static_cast<char*>(const_cast<void*>(image)), size));
  if (!elf)
    return ElfError(name, "cannot read ELF image");
  return ReadElfBuildIdElf(elf.get(), name);
}

Result<MaybeBuildId> ReadNotesBuildId(const void* notes, size_t size, const std::string& name) {
  // libelf parses notes only inside an ELF object, so wrap the bare notes in a minimal ELF64
  // image with one PT_NOTE segment.
  std::vector<uint8_t> img(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + size);
  Elf64_Ehdr eh{};
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_NONE;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 1;
  Elf64_Phdr ph{};
  ph.p_type = PT_NOTE;
  ph.p_offset = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
  ph.p_filesz = size;
  ph.p_align = 4;
  memcpy(img.data(), &eh, sizeof(eh));
  memcpy(img.data() + sizeof(eh), &ph, sizeof(ph));
  memcpy(img.data() + ph.p_offset, notes, size);
  return ReadElfBuildIdMemory(img.data(), img.size(), name);
}

Result<MaybeBuildId> KernelBuildId() {
  const char* path = "/sys/kernel/notes";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error::Sys(path, errno, "cannot open");
  std::vector<char> notes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (notes.empty())
    return MaybeBuildId();
  return ReadNotesBuildId(notes.data(), notes.size(), path);
}

}  // namespace pbid
