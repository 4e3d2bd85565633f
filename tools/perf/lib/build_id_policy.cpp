// SPDX-License-Identifier: GPL-2.0
#include "build_id_policy.h"

#include "address_space.h"

namespace pbid {
namespace internal {

namespace {

// The DSO (and build-ID table) name of a mapping: the kernel image under perf's one name.
std::string DsoPath(const Mapping& m) {
  return m.kernel && IsKernelImage(m.path) ? std::string(kKernelDsoName) : m.path;
}

}  // namespace

void BuildIdPolicy::Load(const Features& features) {
  if (features.build_ids) {
    for (const BuildIdEntry& e : *features.build_ids)
      table_[e.filename] = e.build_id;
  }
  if (features.mapping_ids) {
    for (const MappingIdEntry& e : *features.mapping_ids)
      later_ids_[MappingKey{e.pid, e.start, e.pgoff, e.time}] = &e;
  }
  if (features.file_ids) {
    for (const MappingFileIds::Mapping& e : features.file_ids->mappings)
      file_ids_[MappingKey{e.pid, e.start, e.pgoff, e.time}] = &features.file_ids->files[e.file];
  }
}

void BuildIdPolicy::FollowedBy(uint64_t mmap_offset, std::string filename, const BuildId& id) {
  followed_by_[mmap_offset] = {std::move(filename), id};
}

// The build ID of a mapping, from the first source that has one (see session.h).
void BuildIdPolicy::Resolve(Mapping* m, const std::optional<BuildId>& rec_id, bool synth) const {
  if (!file_ids_.empty()) {
    auto f = file_ids_.find(MappingKey{static_cast<uint32_t>(m->pid), m->start, m->pgoff, m->time});
    if (f != file_ids_.end())
      m->file_ids = *f->second;
  }
  const MappingIdEntry* later = nullptr;
  if (!rec_id && !later_ids_.empty()) {
    auto l =
        later_ids_.find(MappingKey{static_cast<uint32_t>(m->pid), m->start, m->pgoff, m->time});
    if (l != later_ids_.end())
      later = l->second;
  }
  if (rec_id) {
    m->build_id = rec_id;
    m->source = synth ? BuildIdSource::kSynthesized : BuildIdSource::kKernelRecord;
  } else if (later && later->kind == MappingIdEntry::Kind::kDisputed) {
    // Two sources disagreed: a wrong id is worse than none.
  } else if (auto f = followed_by_.find(m->record_offset);
             f != followed_by_.end() && f->second.first == m->path) {
    m->build_id = f->second.second;
    m->source = synth ? BuildIdSource::kSynthesized : BuildIdSource::kFile;
  } else if (later) {
    m->build_id = later->build_id;
    m->source = BuildIdSource::kBpf;
  } else if (auto t = table_.find(DsoPath(*m)); t != table_.end()) {
    m->build_id = t->second;
    m->source = BuildIdSource::kFile;
  }
}

size_t BuildIdPolicy::DsoFor(const Mapping& m) {
  std::string path = DsoPath(m);
  std::vector<size_t>& same_path = dsos_by_path_[path];
  for (size_t i : same_path) {
    // Without a GNU build ID, a file replaced at the same path is another DSO when its other
    // identities differ.
    if (dsos_[i].build_id == m.build_id && (m.build_id || dsos_[i].file_ids == m.file_ids))
      return i;
  }
  Dso d;
  d.path = std::move(path);
  d.build_id = m.build_id;
  d.source = m.source;
  d.file_ids = m.file_ids;
  d.kernel = m.kernel;
  dsos_.push_back(std::move(d));
  same_path.push_back(dsos_.size() - 1);
  return dsos_.size() - 1;
}

void BuildIdPolicy::Clear() {
  followed_by_.clear();
  dsos_.clear();
  dsos_by_path_.clear();
}

}  // namespace internal
}  // namespace pbid
