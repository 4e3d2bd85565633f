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
#include <functional>
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

// One note as the walker hands it out: its header, owner name and descriptor, all inside the
// buffer libelf checked (gelf_getnote refuses a note that runs past its segment or section).
struct Note {
  const GElf_Nhdr& nhdr;
  const char* owner;  // n_namesz bytes, NUL included
  const uint8_t* desc;
  size_t desc_off;  // within its buffer, for errors
};
// Returns true to stop the walk (the note was the one looked for).
using NoteVisitor = std::function<Result<bool>(const Note&)>;

// Walks one note buffer; true when the visitor stopped it.
Result<bool> ScanNotes(Elf_Data* data, const NoteVisitor& visit) {
  size_t off = 0;
  GElf_Nhdr nhdr;
  size_t name_off, desc_off;
  while (off < data->d_size && (off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
    const char* base = static_cast<const char*>(data->d_buf);
    auto r = visit(
        Note{nhdr, base + name_off, reinterpret_cast<const uint8_t*>(base) + desc_off, desc_off});
    if (!r.ok() || *r)
      return r;
  }
  return false;
}

// owner_size counts the NULs after the name: "GNU\0" is 4, and Go's linker writes "Go\0\0",
// also 4 (its ELF_NOTE_GO_NAME).
bool IsNote(const Note& n, const char* owner, size_t owner_size, uint32_t type) {
  return n.nhdr.n_type == type && n.nhdr.n_namesz == owner_size &&
         memcmp(n.owner, owner, owner_size) == 0;
}

// The descriptor of Go's build-ID note is the string `go tool buildid` prints; the linker
// pads it with NULs to the note's alignment.
constexpr uint32_t kNoteGoBuildIdTag = 4;  // NOTE_GOBUILDID_TAG in Go's cmd/link
constexpr size_t kMaxGoBuildId = 1024;

Result<bool> FindGoBuildId(const Note& n, const std::string& name,
                           std::optional<std::string>* out) {
  if (!IsNote(n, "Go\0\0", 4, kNoteGoBuildIdTag))
    return false;
  size_t len = strnlen(reinterpret_cast<const char*>(n.desc), n.nhdr.n_descsz);
  if (len == 0 || len > kMaxGoBuildId) {
    return Error(name + ": Go build ID note.n_descsz", n.desc_off,
                 "Go build ID of " + std::to_string(len) + " characters");
  }
  *out = std::string(reinterpret_cast<const char*>(n.desc), len);
  return true;
}

Result<bool> FindGnuBuildId(const Note& n, const std::string& name, MaybeBuildId* out) {
  if (!IsNote(n, "GNU", 4, NT_GNU_BUILD_ID))
    return false;
  auto id = BuildId::FromBytes(n.desc, n.nhdr.n_descsz);
  if (!id.ok()) {
    return Error(name + ": NT_GNU_BUILD_ID.n_descsz", n.desc_off,
                 "build id of " + std::to_string(n.nhdr.n_descsz) + " bytes");
  }
  *out = *id;
  return true;
}

// The one walk over an ELF file's notes: PT_NOTE segments first, then SHT_NOTE sections, each
// note handed to visit until it returns true. Both the GNU and the Go build ID are read
// through here, so that a file's notes are checked the same way whichever one is looked for.
// The same note is seen twice when it is in both a segment and a section.
Status WalkNotes(Elf* elf, const std::string& name, const NoteVisitor& visit) {
  if (elf_kind(elf) != ELF_K_ELF)
    return Error(name, "not an ELF file");
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
    auto r = ScanNotes(data, visit);
    if (!r.ok())
      return r.error();
    if (*r)
      return Ok();
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
    auto r = ScanNotes(data, visit);
    if (!r.ok())
      return r.error();
    if (*r)
      return Ok();
  }
  return Ok();
}

}  // namespace

bool LibelfReady() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

Result<MaybeBuildId> ReadElfBuildIdElf(Elf* elf, const std::string& name) {
  MaybeBuildId found;
  PBID_RETURN_IF_ERROR(
      WalkNotes(elf, name, [&](const Note& n) { return FindGnuBuildId(n, name, &found); }));
  return found;
}

Result<ElfIds> ReadElfIdsElf(Elf* elf, const std::string& name) {
  ElfIds ids;
  PBID_RETURN_IF_ERROR(WalkNotes(elf, name, [&](const Note& n) -> Result<bool> {
    if (!ids.gnu)
      PBID_RETURN_IF_ERROR(FindGnuBuildId(n, name, &ids.gnu));
    if (!ids.go)
      PBID_RETURN_IF_ERROR(FindGoBuildId(n, name, &ids.go));
    return ids.gnu && ids.go;
  }));
  return ids;
}

Result<ElfIds> ReadElfIdsFd(int fd, const std::string& name) {
  if (!LibelfReady())
    return Error("libelf", "elf_version failed");
  ElfPtr elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
  if (!elf)
    return ElfError(name, "cannot read ELF");
  return ReadElfIdsElf(elf.get(), name);
}

Result<std::optional<std::string>> ReadGoBuildId(const std::string& path) {
  auto fd = OpenRegularFile(path);
  if (!fd.ok())
    return fd.error();
  auto r = ReadElfIdsFd(*fd, path);
  close(*fd);
  if (!r.ok())
    return r.error();
  return r->go;
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

namespace {

// The build id in a file that holds bare notes, as sysfs shows them; missing is an error unless
// `missing_is_none`.
Result<MaybeBuildId> NotesFileBuildId(const std::string& path, bool missing_is_none) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (missing_is_none && errno == ENOENT)
      return MaybeBuildId();
    return Error::Sys(path, errno, "cannot open");
  }
  std::vector<char> notes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (notes.empty())
    return MaybeBuildId();
  return ReadNotesBuildId(notes.data(), notes.size(), path);
}

}  // namespace

Result<MaybeBuildId> KernelBuildId() {
  return NotesFileBuildId("/sys/kernel/notes", false);
}

Result<MaybeBuildId> KernelModuleBuildId(const std::string& name, const std::string& sys_module) {
  // A module linked without --build-id has no such file.
  return NotesFileBuildId(sys_module + "/" + name + "/notes/.note.gnu.build-id", true);
}

}  // namespace pbid
