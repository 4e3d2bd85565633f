// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/kernel_symbols.h"

#include <sys/utsname.h>

#include <algorithm>
#include <exception>

#include "pbid/elf_build_id.h"
#include "pbid/perf_data.h"
#include "pbid/proc_maps.h"
#include "pbid/session.h"

namespace pbid {

KernelSymbols::KernelSymbols(const PerfDataReader& reader, Symbolizer& symbolizer,
                             std::string kallsyms_path)
    : reader_(reader), symbolizer_(symbolizer), kallsyms_path_(std::move(kallsyms_path)) {}

void KernelSymbols::Prefetch() {
  if (decided_ || prefetched_.valid())
    return;
  try {
    prefetched_ = std::async(std::launch::async, Kallsyms::Load, KallsymsPath());
  } catch (const std::exception&) {
    // No thread (or no memory for one) to be had: LoadKallsyms reads the file when needed.
  }
}

Result<Kallsyms> KernelSymbols::LoadKallsyms() {
  if (prefetched_.valid())
    return prefetched_.get();
  return Kallsyms::Load(KallsymsPath());
}

// kallsyms is only trusted for the kernel that was recorded: the same build ID, or, when the
// file has none, the same release.
void KernelSymbols::Decide(const Mapping* km) {
  decided_ = true;
  std::optional<BuildId> recorded;
  if (km != nullptr && km->build_id && !IsModule(*km)) {
    recorded = km->build_id;
  } else if (reader_.features().build_ids) {
    for (const BuildIdEntry& e : *reader_.features().build_ids) {
      if (e.filename == kKernelDsoName)
        recorded = e.build_id;
    }
  }
  // Unless a file was given, perf's order (dso__find_kallsyms()): the running kernel's when it
  // is the recorded one; else the copy kept for the recorded kernel in a .build-id directory,
  // trusted by the build ID it is kept under, as perf trusts its cache. A copy that cannot be
  // used is said, and the running kernel's is tried (for its release).
  bool running_is_recorded = false;
  if (recorded) {
    auto running = KernelBuildId();
    running_is_recorded = running.ok() && running->has_value() && **running == *recorded;
  }
  std::string unusable_copy;
  if (kallsyms_path_.empty() && recorded && !running_is_recorded) {
    if (std::optional<std::string> copy = symbolizer_.KallsymsCopy(*recorded)) {
      auto ks = Kallsyms::Load(*copy);
      if (ks.ok() && ks->usable()) {
        kallsyms_ = std::move(*ks);
        from_copy_ = true;
        note_ = "kallsyms kept for the recorded kernel build ID (" + *copy + ")";
        return;
      }
      unusable_copy =
          "; " + *copy +
          (ks.ok() ? " has no addresses" : " unreadable (" + ks.error().ToString() + ")");
    }
  }
  auto ks = LoadKallsyms();
  if (!ks.ok()) {
    note_ = "kallsyms unreadable (" + ks.error().ToString() + ")" + unusable_copy;
    return;
  }
  if (!ks->usable()) {
    note_ = "kallsyms addresses hidden (kptr_restrict; run as root)" + unusable_copy;
    return;
  }
  bool same = false;
  if (recorded) {
    same = running_is_recorded;
    note_ = same ? "kallsyms of the running kernel (build ID matches)"
                 : "recorded kernel build ID differs from the running kernel";
  } else if (reader_.features().osrelease) {
    utsname u;
    same = uname(&u) == 0 && *reader_.features().osrelease == u.release;
    note_ = same ? "kallsyms of the running kernel (same release; no kernel build ID recorded)"
                 : "recorded on another kernel release (" + *reader_.features().osrelease + ")";
  } else {
    note_ = "no kernel build ID or release recorded: kallsyms not used";
  }
  note_ += unusable_copy;
  if (same)
    kallsyms_ = std::move(*ks);
}

std::optional<int64_t> KernelSymbols::KaslrShift(const Mapping& km) {
  auto it = shift_.find(*km.build_id);
  if (it != shift_.end())
    return it->second;
  std::string anchor = "_text";
  if (auto close = km.path.find(']'); close != std::string::npos && close + 1 < km.path.size())
    anchor = km.path.substr(close + 1);
  std::optional<int64_t> shift;
  auto addr = symbolizer_.SymbolAddress(*km.build_id, km.path, anchor);
  if (addr.ok() && addr->has_value())
    shift = static_cast<int64_t>(km.start - **addr);
  shift_.emplace(*km.build_id, shift);
  return shift;
}

// A module's mapping, as recorders name them: "[name]", or the .ko's path where perf found it
// under /lib/modules; the kernel image is "[kernel.kallsyms]..." or a guest's
// "[guest.kernel.kallsyms...]" (perf's rule, machine__process_kernel_mmap_event()).
bool KernelSymbols::IsModule(const Mapping& km) {
  const std::string& p = km.path;
  if (p.rfind(kKernelDsoName, 0) == 0 || p.rfind("[guest.kernel.kallsyms", 0) == 0)
    return false;
  return (p.size() > 2 && p.front() == '[' && p.back() == ']') || (!p.empty() && p.front() == '/');
}

// "[name]", or "name" from a path ".../name.ko" (perf writes '-' in file names as '_').
std::string KernelSymbols::ModuleName(const std::string& path) {
  if (path.front() == '[')
    return path.substr(1, path.size() - 2);
  std::string base = path.substr(path.rfind('/') + 1);
  base = base.substr(0, base.find('.'));
  std::replace(base.begin(), base.end(), '-', '_');
  return base;
}

bool KernelSymbols::IsHostImage(const Mapping& km) {
  return km.path.rfind(kKernelDsoName, 0) == 0;
}

int64_t KernelSymbols::KallsymsDelta(const Mapping& km) {
  if (kallsyms_delta_)
    return *kallsyms_delta_;
  // "[kernel.kallsyms]_text": the mapping's pgoff is _text's address when it was recorded.
  // Without a symbol in its name (perf 3.x), the recording says nothing, and perf then takes
  // kallsyms as it is: so does this.
  int64_t delta = 0;
  if (auto close = km.path.find(']'); close != std::string::npos && close + 1 < km.path.size()) {
    if (std::optional<uint64_t> now = kallsyms_->Address(km.path.substr(close + 1)))
      delta = static_cast<int64_t>(*now - km.pgoff);
  }
  kallsyms_delta_ = delta;
  if (delta != 0)
    note_ += "; recorded in another boot: kallsyms moved by the KASLR offsets' difference";
  return delta;
}

// The running kernel has the module where the recording had it: the same name at the
// mapping's start, as /proc/modules gives it (where recorders take a module's mapping from),
// and the recorded build ID, when one was. Then kallsyms' symbols of it are at the recorded
// addresses, whichever boot made the recording. Modules that cannot be listed are not there.
bool KernelSymbols::ModuleAsRecorded(const Mapping& km) {
  const std::string name = ModuleName(km.path);
  auto [it, added] = module_as_recorded_.try_emplace(name + "@" + std::to_string(km.start));
  if (!added)
    return it->second;
  if (!running_modules_) {
    auto mods = ReadKernelModules();
    running_modules_ = mods.ok() ? std::move(*mods) : std::vector<KernelModule>{};
  }
  bool same =
      std::any_of(running_modules_->begin(), running_modules_->end(),
                  [&](const KernelModule& m) { return m.name == name && m.start == km.start; });
  if (same && km.build_id) {
    auto id = KernelModuleBuildId(name);
    same = id.ok() && id->has_value() && **id == *km.build_id;
  }
  it->second = same;
  return same;
}

KernelSymbols::Named KernelSymbols::Lookup(const Mapping* km, uint64_t ip, SymbolDetail detail) {
  if (!decided_)
    Decide(km);
  Named n;
  if (kallsyms_) {
    // The address space gives the kernel image's mapping for any address above it, modules
    // that no record mapped among them: past its end, that is no mapping.
    if (km != nullptr && IsHostImage(*km) && ip >= km->end)
      km = nullptr;
    // The kernel image moves with KASLR: its addresses are moved by the difference. A module
    // is named from kallsyms only where the running kernel has it as recorded, never from a
    // kept copy (which does not say which boot it was taken in); an address in no mapping
    // only once the image is known not to have moved. Otherwise a module is named from its
    // file, by build ID, below, and the rest is left unnamed. A guest's kernel is not the
    // host's: never from kallsyms.
    std::optional<Kallsyms::Symbol> sym;
    bool trusted = false;
    if (km == nullptr) {
      if (kallsyms_delta_ == 0) {
        sym = kallsyms_->Lookup(ip);
        trusted = sym && (!from_copy_ || sym->module.empty());
      }
    } else if (IsHostImage(*km)) {
      sym = kallsyms_->Lookup(ip + static_cast<uint64_t>(KallsymsDelta(*km)));
      trusted = sym && sym->module.empty();
    } else if (IsModule(*km) && !from_copy_) {
      sym = kallsyms_->Lookup(ip);
      trusted = sym && sym->module == ModuleName(km->path) && ModuleAsRecorded(*km);
    }
    if (trusted) {
      n.module = std::string(sym->module);
      n.frames.push_back(SourceFrame{std::string(sym->name), "", "", 0, 0});
      return n;
    }
    if (km == nullptr || !IsModule(*km))
      return n;
  }
  if (km == nullptr || !km->build_id)
    return n;
  if (IsModule(*km)) {
    // The module's own file, by its build ID: kernel addresses in a module are its load
    // address plus where the kernel put the code, whatever the KASLR offset.
    auto s = symbolizer_.SymbolizeKernelModule(*km->build_id, km->path, ip - km->start);
    if (s.ok() && s->status == SymbolizeStatus::kOk) {
      n.module = ModuleName(km->path);
      n.frames = std::move(s->frames);
    }
    return n;
  }
  std::optional<int64_t> shift = KaslrShift(*km);
  if (!shift)
    return n;
  auto s = symbolizer_.SymbolizeVaddr(*km->build_id, km->path, ip - static_cast<uint64_t>(*shift),
                                      detail);
  // A corrupt vmlinux must not end the report: the address stays unnamed.
  if (!s.ok() || s->status != SymbolizeStatus::kOk)
    return n;
  n.frames = std::move(s->frames);
  if (!vmlinux_noted_) {
    vmlinux_noted_ = true;
    note_ += "; named from the vmlinux with the recorded kernel build ID (" +
             std::string(SymbolSourceName(symbolizer_.SourceOf(*km->build_id))) + ")";
  }
  return n;
}

}  // namespace pbid
