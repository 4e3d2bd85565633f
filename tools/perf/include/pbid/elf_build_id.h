// SPDX-License-Identifier: GPL-2.0
//
// Build ids of ELF files, read with libelf: the GNU build ID (NT_GNU_BUILD_ID) and the Go
// build ID (the "Go" note of type 4 that Go's own linker writes as .note.go.buildid, where it
// writes no GNU note). The result distinguishes three outcomes:
//   ok + BuildId       the file has an NT_GNU_BUILD_ID note
//   ok + std::nullopt  the file is ELF but has no build id (e.g. linked with --build-id=none)
//   error              the file could not be read or is not ELF
#ifndef PBID_ELF_BUILD_ID_H_
#define PBID_ELF_BUILD_ID_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "pbid/build_id.h"
#include "pbid/result.h"

// libelf's handle; declared here so that this header does not pull in libelf.h.
typedef struct Elf Elf;

namespace pbid {

using MaybeBuildId = std::optional<BuildId>;

Result<MaybeBuildId> ReadElfBuildId(const std::string& path);
// Opens a path taken from input (a recorded file name) for reading: never blocks (a FIFO with
// no writer would wait forever) and accepts only regular files. The caller owns the fd.
Result<int> OpenRegularFile(const std::string& path);
// Reads from an open fd (not closed); `name` is used in errors.
Result<MaybeBuildId> ReadElfBuildIdFd(int fd, const std::string& name);
// An ELF image in memory, e.g. the vdso.
Result<MaybeBuildId> ReadElfBuildIdMemory(const void* image, size_t size, const std::string& name);
// An ELF object already opened with libelf (not ended); LibelfReady() must have succeeded.
// The one reader of build-id notes, so that recording and symbolizing always agree on a file.
Result<MaybeBuildId> ReadElfBuildIdElf(Elf* elf, const std::string& name);
// elf_version() for this process, once; false when libelf refuses.
bool LibelfReady();
// The identities an ELF file names itself by, read in one walk over its notes.
struct ElfIds {
  MaybeBuildId gnu;               // NT_GNU_BUILD_ID
  std::optional<std::string> go;  // the Go build ID, as `go tool buildid FILE` prints it
};
Result<ElfIds> ReadElfIdsFd(int fd, const std::string& name);
Result<ElfIds> ReadElfIdsElf(Elf* elf, const std::string& name);
// The Go build ID of the file at path: nullopt when it has none (not a Go binary, or linked
// by an external linker that was not given the note).
Result<std::optional<std::string>> ReadGoBuildId(const std::string& path);
// A bare note section such as /sys/kernel/notes.
Result<MaybeBuildId> ReadNotesBuildId(const void* notes, size_t size, const std::string& name);

// The running kernel's build id from /sys/kernel/notes.
Result<MaybeBuildId> KernelBuildId();
// A loaded module's build id, from SYS_MODULE/NAME/notes/.note.gnu.build-id (sysfs shows each
// note section of a module as a file); nothing when the module has no such note.
Result<MaybeBuildId> KernelModuleBuildId(const std::string& name,
                                         const std::string& sys_module = "/sys/module");

}  // namespace pbid

#endif  // PBID_ELF_BUILD_ID_H_
