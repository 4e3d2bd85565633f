// SPDX-License-Identifier: GPL-2.0
//
// Internal: the address space of every process of a recording, rebuilt from MMAP/MMAP2,
// FORK records in file order, so that a sample's ip can be turned into (mapping, file offset).
#ifndef PBID_SYMBOLIZE_PROCESS_MAPS_H_
#define PBID_SYMBOLIZE_PROCESS_MAPS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pbid/build_id.h"

namespace pbid {

struct MappedFile {
  uint64_t start = 0, len = 0, pgoff = 0;
  uint32_t prot = 0;
  std::string filename;
  std::optional<BuildId> build_id;
  BuildIdSource source = BuildIdSource::kNone;
  uint64_t FileOffset(uint64_t ip) const { return ip - start + pgoff; }
  uint64_t end() const { return start + len; }
};

class ProcessMaps {
 public:
  // Kernel mappings ([kernel.kallsyms], modules) come with pid -1 in perf.data.
  static constexpr uint32_t kKernelPid = UINT32_MAX;

  // A new mapping replaces whatever it overlaps in that process, as mmap(MAP_FIXED) would.
  void Add(uint32_t pid, const MappedFile& m);
  // fork(): the child starts with a copy of the parent's mappings.
  void Fork(uint32_t parent, uint32_t child);
  // nullptr when no mapping of pid covers ip.
  const MappedFile* Find(uint32_t pid, uint64_t ip) const;

  size_t process_count() const { return procs_.size(); }

 private:
  // Shared, immutable mappings: fork copies pointers, not strings.
  using Space = std::map<uint64_t, std::shared_ptr<const MappedFile>>;  // by start
  std::unordered_map<uint32_t, Space> procs_;
};

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_PROCESS_MAPS_H_
