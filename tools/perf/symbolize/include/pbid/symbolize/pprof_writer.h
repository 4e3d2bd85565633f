// SPDX-License-Identifier: GPL-2.0
//
// Builds a pprof profile (profile.proto, gzip-compressed) from mappings, locations and
// samples. Locations that could not be symbolized keep their address and their mapping's
// build ID, so that a server (pprof, Pyroscope, Parca) can symbolize them later.
#ifndef PBID_SYMBOLIZE_PPROF_WRITER_H_
#define PBID_SYMBOLIZE_PPROF_WRITER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pbid/result.h"
#include "pbid/symbolize/symbolizer.h"

namespace perftools::profiles {
class Profile;
}

namespace pbid {

struct PprofValueType {
  std::string type;  // "samples", "cpu"
  std::string unit;  // "count", "nanoseconds"
};

struct PprofMapping {
  uint64_t memory_start = 0;
  uint64_t memory_limit = 0;
  uint64_t file_offset = 0;
  std::string filename;
  std::string build_id_hex;  // empty when the mapping had none
  // What build_id_hex is: "gnu" (the GNU build ID, what pprof expects), "go" (the Go build ID
  // string, not hex) or "file-hash" (the OpenTelemetry file hash); empty with no id. pprof's
  // Mapping has no field or label for it: a kind other than gnu is named in a comment of the
  // profile, "mapping ID build_id kind KIND: FILENAME".
  std::string build_id_kind;
};

class PprofBuilder {
 public:
  // sample_types gives the meaning of each value of AddSample, in order. period_type/period
  // describe the sampling (e.g. cpu/nanoseconds, 1000000 for 1 kHz cpu-clock).
  PprofBuilder(std::vector<PprofValueType> sample_types, PprofValueType period_type,
               int64_t period);
  ~PprofBuilder();
  PprofBuilder(const PprofBuilder&) = delete;
  PprofBuilder& operator=(const PprofBuilder&) = delete;

  // Returns the mapping id (nonzero); the same mapping added twice gets the same id.
  uint64_t AddMapping(const PprofMapping& m);

  // A location at a process address in mapping_id (0: none). frames empty: unsymbolized.
  // The same (mapping, address) gets the same id; the first frames given win.
  uint64_t AddLocation(uint64_t mapping_id, uint64_t address,
                       const std::vector<SourceFrame>& frames);

  // locations leaf first; values.size() must equal the number of sample types.
  Status AddSample(const std::vector<uint64_t>& location_ids, const std::vector<int64_t>& values,
                   const std::vector<std::pair<std::string, int64_t>>& num_labels = {});

  void SetTime(int64_t time_nanos, int64_t duration_nanos);
  void AddComment(const std::string& comment);
  // The sample type pprof shows by default (a type name given to the constructor).
  void SetDefaultSampleType(const std::string& type);

  // The profile as built, for tests and for callers that serialize it themselves.
  const perftools::profiles::Profile& profile() const { return *profile_; }

  // Serializes, gzips and writes to path (through a temporary file renamed into place, so a
  // failed write never leaves a truncated profile under the final name).
  Status WriteGzip(const std::string& path) const;

 private:
  int64_t Str(const std::string& s);
  uint64_t AddFunction(const SourceFrame& f);

  std::unique_ptr<perftools::profiles::Profile> profile_;
  size_t num_values_;
  std::unordered_map<std::string, int64_t> strings_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t, std::string, std::string>, uint64_t> mappings_;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> locations_;
  std::map<std::tuple<std::string, std::string, std::string, int>, uint64_t> functions_;
};

// Reads a gzip-compressed profile back (tests, and a sanity check after writing).
Result<std::unique_ptr<perftools::profiles::Profile>> ReadPprofGzip(const std::string& path);

}  // namespace pbid

#endif  // PBID_SYMBOLIZE_PPROF_WRITER_H_
