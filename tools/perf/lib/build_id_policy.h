// SPDX-License-Identifier: GPL-2.0
//
// Internal: where a mapping's build id comes from, and the DSO table it lands in. The sources,
// in the order include/pbid/session.h lists them: the MMAP2 record's own id, a
// PERF_RECORD_HEADER_BUILD_ID right after the record, the recorder's per-mapping section
// (kFeatPbidMappingIds, which may dispute), the HEADER_BUILD_ID feature table; and beside
// them the file's other identities (kFeatPbidFileIds).
#ifndef PBID_LIB_BUILD_ID_POLICY_H_
#define PBID_LIB_BUILD_ID_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pbid/build_id.h"
#include "pbid/perf_data.h"
#include "pbid/session.h"

namespace pbid {
namespace internal {

class BuildIdPolicy {
 public:
  // The feature sections HEADER_BUILD_ID and kFeatPbidMappingIds; features must outlive this.
  void Load(const Features& features);
  // A PERF_RECORD_HEADER_BUILD_ID read right after the MMAP/MMAP2 record at mmap_offset.
  void FollowedBy(uint64_t mmap_offset, std::string filename, const BuildId& id);
  // Gives m (its pid, start, pgoff, time, path and record_offset set) its build id and source.
  // rec_id: the record's own id; synth: the record was written before the kernel's records.
  void Resolve(Mapping* m, const std::optional<BuildId>& rec_id, bool synth) const;

  // The DSO m belongs to, added if it is the first mapping of its path and build id.
  size_t DsoFor(const Mapping& m);
  Dso& dso(size_t i) { return dsos_[i]; }
  const std::vector<Dso>& dsos() const { return dsos_; }
  // Forgets what a replay learnt (DSOs, records' ids); the feature sections stay.
  void Clear();

 private:
  std::unordered_map<std::string, BuildId> table_;  // HEADER_BUILD_ID by file name
  // kFeatPbidMappingIds by the MMAP2 record's (pid, start, pgoff, time).
  using MappingKey = std::tuple<uint32_t, uint64_t, uint64_t, uint64_t>;
  std::map<MappingKey, const MappingIdEntry*> later_ids_;
  // kFeatPbidFileIds by the same key.
  std::map<MappingKey, const FileIds*> file_ids_;
  // MMAP/MMAP2 offset -> the HEADER_BUILD_ID record right after it (the recorder's fallback).
  std::unordered_map<uint64_t, std::pair<std::string, BuildId>> followed_by_;
  std::vector<Dso> dsos_;
  // DSO path -> the indices into dsos_ of its DSOs (one per build id; nearly always one).
  std::unordered_map<std::string, std::vector<size_t>> dsos_by_path_;
};

}  // namespace internal
}  // namespace pbid

#endif  // PBID_LIB_BUILD_ID_POLICY_H_
