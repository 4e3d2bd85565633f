// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/pprof_writer.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>

#include "profile.pb.h"

namespace pbid {

namespace pp = perftools::profiles;

PprofBuilder::PprofBuilder(std::vector<PprofValueType> sample_types, PprofValueType period_type,
                           int64_t period)
    : profile_(std::make_unique<pp::Profile>()), num_values_(sample_types.size()) {
  Str("");  // string_table[0] must be ""
  for (const PprofValueType& t : sample_types) {
    pp::ValueType* vt = profile_->add_sample_type();
    vt->set_type(Str(t.type));
    vt->set_unit(Str(t.unit));
  }
  profile_->mutable_period_type()->set_type(Str(period_type.type));
  profile_->mutable_period_type()->set_unit(Str(period_type.unit));
  profile_->set_period(period);
}

PprofBuilder::~PprofBuilder() = default;

int64_t PprofBuilder::Str(const std::string& s) {
  auto [it, inserted] = strings_.emplace(s, static_cast<int64_t>(strings_.size()));
  if (inserted)
    profile_->add_string_table(s);
  return it->second;
}

uint64_t PprofBuilder::AddMapping(const PprofMapping& m) {
  auto key =
      std::make_tuple(m.memory_start, m.memory_limit, m.file_offset, m.filename, m.build_id_hex);
  if (auto it = mappings_.find(key); it != mappings_.end())
    return it->second;
  uint64_t id = mappings_.size() + 1;
  pp::Mapping* pm = profile_->add_mapping();
  pm->set_id(id);
  pm->set_memory_start(m.memory_start);
  pm->set_memory_limit(m.memory_limit);
  pm->set_file_offset(m.file_offset);
  pm->set_filename(Str(m.filename));
  pm->set_build_id(Str(m.build_id_hex));
  if (!m.build_id_kind.empty() && m.build_id_kind != "gnu") {
    AddComment("mapping " + std::to_string(id) + " build_id kind " + m.build_id_kind + ": " +
               m.filename);
  }
  mappings_.emplace(key, id);
  return id;
}

uint64_t PprofBuilder::AddFunction(const SourceFrame& f) {
  auto key = std::make_tuple(f.function, f.linkage_name, f.file, f.function_line);
  if (auto it = functions_.find(key); it != functions_.end())
    return it->second;
  uint64_t id = functions_.size() + 1;
  pp::Function* pf = profile_->add_function();
  pf->set_id(id);
  pf->set_name(Str(f.function));
  pf->set_system_name(Str(f.linkage_name.empty() ? f.function : f.linkage_name));
  pf->set_filename(Str(f.file));
  pf->set_start_line(f.function_line);
  functions_.emplace(key, id);
  return id;
}

uint64_t PprofBuilder::AddLocation(uint64_t mapping_id, uint64_t address,
                                   const std::vector<SourceFrame>& frames) {
  auto key = std::make_pair(mapping_id, address);
  if (auto it = locations_.find(key); it != locations_.end())
    return it->second;
  uint64_t id = locations_.size() + 1;
  pp::Location* loc = profile_->add_location();
  loc->set_id(id);
  loc->set_mapping_id(mapping_id);
  loc->set_address(address);
  for (const SourceFrame& f : frames) {
    pp::Line* line = loc->add_line();
    line->set_function_id(AddFunction(f));
    line->set_line(f.line);
  }
  // The mapping's flags tell pprof not to symbolize again what we already did.
  if (!frames.empty() && mapping_id != 0 && mapping_id <= (uint64_t)profile_->mapping_size()) {
    pp::Mapping* pm = profile_->mutable_mapping(static_cast<int>(mapping_id - 1));
    pm->set_has_functions(true);
    if (!frames.front().file.empty())
      pm->set_has_filenames(true);
    if (frames.front().line != 0)
      pm->set_has_line_numbers(true);
    if (frames.size() > 1)
      pm->set_has_inline_frames(true);
  }
  locations_.emplace(key, id);
  return id;
}

Status PprofBuilder::AddSample(const std::vector<uint64_t>& location_ids,
                               const std::vector<int64_t>& values,
                               const std::vector<std::pair<std::string, int64_t>>& num_labels) {
  if (values.size() != num_values_) {
    return Error("pprof.sample.value", "got " + std::to_string(values.size()) + " values for " +
                                           std::to_string(num_values_) + " sample types");
  }
  pp::Sample* s = profile_->add_sample();
  for (uint64_t id : location_ids)
    s->add_location_id(id);
  for (int64_t v : values)
    s->add_value(v);
  for (const auto& [key, num] : num_labels) {
    pp::Label* l = s->add_label();
    l->set_key(Str(key));
    l->set_num(num);
  }
  return Ok();
}

void PprofBuilder::SetTime(int64_t time_nanos, int64_t duration_nanos) {
  profile_->set_time_nanos(time_nanos);
  profile_->set_duration_nanos(duration_nanos);
}

void PprofBuilder::AddComment(const std::string& comment) {
  profile_->add_comment(Str(comment));
}

void PprofBuilder::SetDefaultSampleType(const std::string& type) {
  profile_->set_default_sample_type(Str(type));
}

Status PprofBuilder::WriteGzip(const std::string& path) const {
  std::string bytes;
  if (!profile_->SerializeToString(&bytes))
    return Error::Of(ErrorKind::kIo, "pprof", "serialization failed");
  std::string tmp = path + ".tmp";
  gzFile gz = gzopen(tmp.c_str(), "wb9");
  if (gz == nullptr)
    return Error::Sys(tmp, errno, "open");
  size_t done = 0;
  while (done < bytes.size()) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 30));
    int n = gzwrite(gz, bytes.data() + done, chunk);
    if (n <= 0) {
      int zerr;
      std::string msg = gzerror(gz, &zerr);
      gzclose(gz);
      unlink(tmp.c_str());
      return Error::Of(ErrorKind::kIo, tmp, "gzwrite: " + msg);
    }
    done += static_cast<size_t>(n);
  }
  if (gzclose(gz) != Z_OK) {
    unlink(tmp.c_str());
    return Error::Of(ErrorKind::kIo, tmp, "gzclose failed (disk full?)");
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    return Error::Sys(path, e, "rename");
  }
  return Ok();
}

Result<std::unique_ptr<pp::Profile>> ReadPprofGzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr)
    return Error::Sys(path, errno, "open");
  std::string bytes;
  char buf[1 << 16];
  int n;
  while ((n = gzread(gz, buf, sizeof(buf))) > 0)
    bytes.append(buf, static_cast<size_t>(n));
  int zerr = Z_OK;
  std::string msg = n < 0 ? gzerror(gz, &zerr) : "";
  gzclose(gz);
  if (n < 0)
    return Error(path, bytes.size(), "gzip: " + msg);
  auto p = std::make_unique<pp::Profile>();
  if (!p->ParseFromString(bytes))
    return Error(path, "not a profile.proto message");
  return p;
}

}  // namespace pbid
