// SPDX-License-Identifier: GPL-2.0
#include "pbid/symbolize/unwinder.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <elfutils/version.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "elf_file.h"

namespace pbid {

const char* UnwindStopName(UnwindStop s) {
  switch (s) {
    case UnwindStop::kComplete: return "complete";
    case UnwindStop::kNoCfi: return "no CFI";
    case UnwindStop::kNoElf: return "no ELF with the build ID";
    case UnwindStop::kStackTooShort: return "stack copy too short";
    case UnwindStop::kOther: return "other";
  }
  return "other";
}

namespace {

// perf's x86_64 register numbers (arch/x86/include/uapi/asm/perf_regs.h) of the DWARF
// registers 0..16 (System V x86_64 psABI: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15,
// and the return address column, which holds the ip of the first frame).
constexpr unsigned kPerfRegOfDwarf[17] = {
    0 /*AX*/, 3 /*DX*/, 2 /*CX*/, 1 /*BX*/, 4 /*SI*/, 5 /*DI*/, 6 /*BP*/, 7 /*SP*/, 16,
    17,       18,       19,       20,       21,       22,       23,       8 /*IP*/};
constexpr unsigned kPerfRegSp = 7, kPerfRegIp = 8;
constexpr int kDwarfRegs = 17;
constexpr unsigned kDwarfRbx = 3, kDwarfRa = 16;

// Every module is reported with its file: libdwfl needs no callback to find one, and looks
// for no separate debug file (the unwind tables are in the executable).
int NoElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) {
  return -1;
}
int NoDebuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*, GElf_Word,
                char**) {
  return -1;
}
const Dwfl_Callbacks kDwflCallbacks = {NoElf, NoDebuginfo, nullptr, nullptr};

// The load bias of a file mapped at start from file offset pgoff: its address minus the ELF
// virtual address of the same byte. nullopt when no PT_LOAD holds that offset.
std::optional<uint64_t> LoadBias(const std::vector<LoadSegment>& segments, uint64_t start,
                                 uint64_t pgoff) {
  constexpr uint64_t kPage = 4096;
  for (const LoadSegment& s : segments) {
    uint64_t first = s.offset & ~(kPage - 1);
    if (pgoff >= first && pgoff < s.offset + s.filesz)
      return start - (s.vaddr - s.offset + pgoff);
  }
  return std::nullopt;
}

}  // namespace

namespace internal {

// The executable of one build ID, as the unwinder uses it: where it is and its PT_LOADs, read
// once, to place it at each mapping.
struct ElfImage {
  std::string path;  // empty: none found
  std::vector<LoadSegment> segments;
};

// One process's address space as libdwfl sees it: its modules, reported as the frames reach
// them and kept for the process's next samples with their parsed unwind tables.
struct UnwindSpace {
  struct Reported {
    BuildId id;
    uint64_t bias = 0;
  };

  // What the callbacks need of the sample being unwound.
  struct Sample {
    Dwarf_Word regs[kDwarfRegs] = {};
    uint64_t set_regs = 0;  // bit i: regs[i] was recorded
    uint64_t sp = 0;
    const uint8_t* stack = nullptr;
    uint64_t stack_size = 0;
    const UnwindFindMapping* find = nullptr;
    std::vector<uint64_t>* ips = nullptr;
    std::optional<UnwindStop> stop;  // set by a callback that ended the unwind
    // libdwfl ends an unwind as if complete when it cannot read a return address: this says
    // why it could not.
    bool read_past_stack = false;
    bool stale = false;  // a mapping differs from the module reported there
    // rbx as the psABI keeps it (callee-saved) where libdwfl has lost it: see CarryRbx.
    std::optional<Dwarf_Word> rbx;
    bool rbx_kept = false;  // the last frame's table leaves rbx as its caller had it
    // Set when the unwind stopped to go on from the last frame with rbx given back: that
    // frame's registers, its pc already moved back into the call instruction.
    bool resume = false;
    bool resuming = false;  // the first frame libdwfl reports is the one already taken
  };

  UnwinderState* impl = nullptr;
  int32_t pid = 0;
  Dwfl* dwfl = nullptr;
  bool attached = false;
  std::unordered_map<Dwfl_Module*, Reported> modules;
  Sample sample;

  ~UnwindSpace() {
    if (dwfl != nullptr)
      dwfl_end(dwfl);
  }
};

struct UnwinderState {
  Symbolizer* symbolizer = nullptr;
  std::unordered_map<BuildId, ElfImage> images;
  std::unordered_map<int32_t, std::unique_ptr<UnwindSpace>> spaces;

  const ElfImage& Image(const BuildId& id, const std::string& recorded_path);
  std::optional<UnwindStop> EnsureModule(UnwindSpace& space, uint64_t addr, Dwfl_Module** out);
  UnwindSpace& SpaceOf(int32_t pid);
};

}  // namespace internal

using internal::ElfImage;
using internal::UnwinderState;
using internal::UnwindSpace;

namespace {

// A system-wide recording holds many short-lived processes: their spaces are dropped, all at
// once, past this many.
constexpr size_t kMaxSpaces = 64;

pid_t NextThread(Dwfl*, void* arg, void** thread_arg) {
  if (*thread_arg != nullptr)
    return 0;
  *thread_arg = arg;
  return static_cast<UnwindSpace*>(arg)->pid;
}

bool GetThread(Dwfl*, pid_t, void* arg, void** thread_arg) {
  *thread_arg = arg;
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* arg) {
  const auto& s = static_cast<UnwindSpace*>(arg)->sample;
  for (int i = 0; i < kDwarfRegs; i++) {
    if ((s.set_regs & (uint64_t{1} << i)) && !dwfl_thread_state_registers(thread, i, 1, &s.regs[i]))
      return false;
  }
  return true;
}

// Reads 8 bytes of the file an address is mapped from: the unwind tables may point at data in
// the ELF (a personality, a table of their own) that the stack copy does not hold.
bool ReadFromElf(UnwinderState* impl, UnwindSpace& space, Dwarf_Addr addr, Dwarf_Word* result) {
  Dwfl_Module* mod = nullptr;
  if (impl->EnsureModule(space, addr, &mod).has_value())
    return false;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  if (elf == nullptr)
    return false;
  size_t file_size = 0;
  char* raw = elf_rawfile(elf, &file_size);
  size_t n = 0;
  if (raw == nullptr || elf_getphdrnum(elf, &n) != 0)
    return false;
  uint64_t vaddr = addr - bias;
  for (size_t i = 0; i < n; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD)
      continue;
    if (vaddr < ph.p_vaddr || vaddr + 8 > ph.p_vaddr + ph.p_filesz)
      continue;
    uint64_t off = ph.p_offset + (vaddr - ph.p_vaddr);
    if (off > file_size || file_size - off < 8)
      return false;
    memcpy(result, raw + off, 8);
    return true;
  }
  return false;
}

}  // namespace

// Called by libdwfl for every word it reads: the stack from the sample's copy, anything else
// from the mapped files.
static bool MemoryRead(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  auto* space = static_cast<UnwindSpace*>(arg);
  auto& s = space->sample;
  if (addr >= s.sp && addr - s.sp <= s.stack_size && s.stack_size - (addr - s.sp) >= 8) {
    memcpy(result, s.stack + (addr - s.sp), 8);
    return true;
  }
  if (ReadFromElf(space->impl, *space, addr, result))
    return true;
  // The callers' frames are above the stack pointer: a read there that the copy does not
  // reach means the copy was too short (perf copies 8 KiB by default).
  constexpr uint64_t kStackReach = uint64_t{8} << 20;
  if (addr >= s.sp && addr - s.sp < kStackReach)
    s.read_past_stack = true;
  return false;
}

namespace {

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    NextThread, GetThread, MemoryRead, SetInitialRegisters, nullptr, nullptr,
};

enum class Cfi { kNone, kCaller, kOutermost };

struct CfiRow {
  Cfi kind = Cfi::kNone;
  bool rbx_kept = false;      // no rule saves rbx: the caller's rbx is this frame's
  bool cfa_from_rbx = false;  // the caller's frame is found from rbx (a realigned stack)
};

bool UsesRbx(const Dwarf_Op* ops, size_t nops) {
  for (size_t i = 0; i < nops; i++) {
    if (ops[i].atom == DW_OP_breg0 + kDwarfRbx || ops[i].atom == DW_OP_reg0 + kDwarfRbx ||
        ((ops[i].atom == DW_OP_bregx || ops[i].atom == DW_OP_regx) && ops[i].number == kDwarfRbx))
      return true;
  }
  return false;
}

// What the unwind table of addr's module says of the frame there: nothing, how to find its
// caller, or that it has none (its return address is "undefined", as at _start); and what
// CarryRbx needs of its rbx.
CfiRow CfiAt(Dwfl_Module* mod, Dwarf_Addr addr) {
  for (int table = 0; table < 2; table++) {
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi =
        table == 0 ? dwfl_module_eh_cfi(mod, &bias) : dwfl_module_dwarf_cfi(mod, &bias);
    Dwarf_Frame* frame = nullptr;
    if (cfi == nullptr || dwarf_cfi_addrframe(cfi, addr - bias, &frame) != 0)
      continue;
    Dwarf_Op ops_mem[3];
    Dwarf_Op* ops = nullptr;
    size_t nops = 0;
    int ra = dwarf_frame_info(frame, nullptr, nullptr, nullptr);
    bool undefined = ra >= 0 && dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) == 0 &&
                     nops == 0 && ops == ops_mem;
    CfiRow row;
    row.kind = undefined ? Cfi::kOutermost : Cfi::kCaller;
    // Undefined or same value: no saved copy to restore it from.
    row.rbx_kept = dwarf_frame_register(frame, kDwarfRbx, ops_mem, &ops, &nops) == 0 && nops == 0;
    row.cfa_from_rbx = dwarf_frame_cfa(frame, &ops, &nops) == 0 && UsesRbx(ops, nops);
    free(frame);
    return row;
  }
  return CfiRow{};
}

}  // namespace

const ElfImage& UnwinderState::Image(const BuildId& id, const std::string& recorded_path) {
  auto [it, added] = images.try_emplace(id);
  if (!added)
    return it->second;
  ElfImage& image = it->second;
  std::optional<std::string> path = symbolizer->ExecutablePath(id, recorded_path);
  if (!path)
    return image;
  auto elf = ElfFile::Open(*path);
  if (!elf.ok())
    return image;
  auto segments = elf->LoadSegments();
  if (!segments.ok())
    return image;
  image.path = *path;
  image.segments = std::move(*segments);
  return image;
}

// The module holding addr, reported at the bias of the mapping there if it is not yet; or why
// there is none. Notes in space.sample.stale a module that no longer matches its mapping.
std::optional<UnwindStop> UnwinderState::EnsureModule(UnwindSpace& space, uint64_t addr,
                                                      Dwfl_Module** out) {
  const Mapping* m = (*space.sample.find)(addr);
  if (m == nullptr)
    return UnwindStop::kOther;
  if (!m->build_id || m->build_id->empty())
    return UnwindStop::kNoElf;
  const ElfImage& image = Image(*m->build_id, m->path);
  if (image.path.empty())
    return UnwindStop::kNoElf;
  std::optional<uint64_t> bias = LoadBias(image.segments, m->start, m->pgoff);
  if (!bias)
    return UnwindStop::kOther;
  if (Dwfl_Module* mod = dwfl_addrmodule(space.dwfl, addr)) {
    auto it = space.modules.find(mod);
    if (it != space.modules.end() && it->second.id == *m->build_id && it->second.bias == *bias) {
      *out = mod;
      return std::nullopt;
    }
    // Another file, or the same one elsewhere, since it was reported: this space is rebuilt.
    space.sample.stale = true;
    return UnwindStop::kOther;
  }
  int fd = open(image.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return UnwindStop::kNoElf;
  // add_p_vaddr: base is the bias, as for a shared object loaded by ld.so.
  Dwfl_Module* mod =
      dwfl_report_elf(space.dwfl, m->path.c_str(), image.path.c_str(), fd, *bias, true);
  if (mod == nullptr) {
    close(fd);  // not consumed on failure
    return UnwindStop::kOther;
  }
  space.modules[mod] = UnwindSpace::Reported{*m->build_id, *bias};
  if (dwfl_addrmodule(space.dwfl, addr) != mod)
    return UnwindStop::kOther;
  *out = mod;
  return std::nullopt;
}

UnwindSpace& UnwinderState::SpaceOf(int32_t pid) {
  auto it = spaces.find(pid);
  if (it != spaces.end())
    return *it->second;
  if (spaces.size() >= kMaxSpaces)
    spaces.clear();
  auto space = std::make_unique<UnwindSpace>();
  space->impl = this;
  space->pid = pid;
  space->dwfl = dwfl_begin(&kDwflCallbacks);
  return *spaces.emplace(pid, std::move(space)).first->second;
}

namespace {

// libdw's x86_64 ABI defaults (elfutils 0.188, Debian 12's) name register 0 where they mean
// rbx (3) as callee-saved, so libdwfl loses rbx in every caller of a function whose table
// does not save it. The psABI keeps rbx across calls: this carries it up the frames. A frame
// whose caller is found from rbx (glibc's _dl_runtime_resolve realigns its stack that way)
// would end the unwind there; instead it stops, to go on from that frame with rbx given back.
// Returns true when it stopped so. It needs dwfl_frame_reg (elfutils 0.188): with an older
// libdw (Debian 11's 0.183) such a stack ends at that frame, as it did before.
#if _ELFUTILS_PREREQ(0, 188)
bool CarryRbx(Dwfl_Frame* state, UnwindSpace::Sample& s, Dwarf_Addr at, const CfiRow& row) {
  Dwarf_Word rbx = 0;
  if (dwfl_frame_reg(state, kDwarfRbx, &rbx) == 0)
    s.rbx = rbx;
  else if (!s.rbx_kept)
    s.rbx.reset();
  s.rbx_kept = row.rbx_kept;
  if (!row.cfa_from_rbx || !s.rbx || dwfl_frame_reg(state, kDwarfRbx, &rbx) == 0)
    return false;
  s.set_regs = 0;
  for (unsigned i = 0; i < kDwarfRa; i++) {
    if (dwfl_frame_reg(state, i, &s.regs[i]) == 0)
      s.set_regs |= uint64_t{1} << i;
  }
  s.regs[kDwarfRbx] = *s.rbx;
  // The resumed unwind's first frame is its initial one, whose table libdwfl looks up at its
  // pc itself: the call instruction's address, not the return address.
  s.regs[kDwarfRa] = at;
  s.set_regs |= uint64_t{1} << kDwarfRbx | uint64_t{1} << kDwarfRa;
  s.resume = true;
  return true;
}
#else
bool CarryRbx(Dwfl_Frame*, UnwindSpace::Sample&, Dwarf_Addr, const CfiRow&) {
  return false;
}
#endif

int OnFrame(Dwfl_Frame* state, void* arg) {
  auto* space = static_cast<UnwindSpace*>(arg);
  auto& s = space->sample;
  Dwarf_Addr pc = 0;
  // Not asking whether the frame is an activation: to answer, libdwfl unwinds it, before the
  // module below is reported, and without its table it guesses from the frame pointer.
  if (!dwfl_frame_pc(state, &pc, nullptr)) {
    s.stop = UnwindStop::kOther;
    return DWARF_CB_ABORT;
  }
  // The next step unwinds with the table of the function this frame is in: for a caller that
  // is the call instruction's, just before the return address (in a signal handler's caller,
  // the interrupted instruction's: pc - 1 is in its function all the same). A resumed
  // unwind's first frame is the last one taken, at that address already.
  Dwarf_Addr at = pc;
  if (s.resuming) {
    s.resuming = false;
  } else {
    s.ips->push_back(pc);
    if (s.ips->size() > 1)
      at = pc - 1;
  }
  if (s.ips->size() >= kMaxUnwindFrames) {
    s.stop = UnwindStop::kComplete;
    return DWARF_CB_ABORT;
  }
  Dwfl_Module* mod = nullptr;
  if (auto stop = space->impl->EnsureModule(*space, at, &mod)) {
    s.stop = *stop;
    return DWARF_CB_ABORT;
  }
  // Without a table libdwfl would guess from the frame pointer, which code built without one
  // holds anything in: such frames would be made up.
  CfiRow row = CfiAt(mod, at);
  switch (row.kind) {
    case Cfi::kNone: s.stop = UnwindStop::kNoCfi; return DWARF_CB_ABORT;
    case Cfi::kOutermost: s.stop = UnwindStop::kComplete; return DWARF_CB_ABORT;
    case Cfi::kCaller: break;
  }
  return CarryRbx(state, s, at, row) ? DWARF_CB_ABORT : DWARF_CB_OK;
}

}  // namespace

Unwinder::Unwinder(Symbolizer* symbolizer) : impl_(std::make_unique<UnwinderState>()) {
  impl_->symbolizer = symbolizer;
}
Unwinder::~Unwinder() = default;

Result<std::unique_ptr<Unwinder>> Unwinder::Create(Symbolizer* symbolizer) {
  if (symbolizer == nullptr)
    return Error::Of(ErrorKind::kInvalidArgument, "symbolizer", "an unwinder needs a symbolizer");
  return std::unique_ptr<Unwinder>(new Unwinder(symbolizer));
}

UnwindResult Unwinder::Unwind(int32_t pid, const RegsView& regs, const StackView& stack,
                              const UnwindFindMapping& find_mapping) {
  UnwindResult r;
  stats_.samples++;
  auto finish = [&](UnwindStop stop) {
    r.stop = stop;
    stats_.by_stop[static_cast<size_t>(stop)]++;
    return r;
  };
  std::optional<uint64_t> sp = regs.Get(kPerfRegSp), ip = regs.Get(kPerfRegIp);
  if (regs.abi() != PERF_SAMPLE_REGS_ABI_64 || !sp || !ip)
    return finish(UnwindStop::kOther);

  // Twice at most: once more after a changed mapping made the space be rebuilt.
  for (int attempt = 0; attempt < 2; attempt++) {
    UnwindSpace& space = impl_->SpaceOf(pid);
    if (space.dwfl == nullptr)
      return finish(UnwindStop::kOther);
    r.ips.clear();
    UnwindSpace::Sample& s = space.sample;
    s = UnwindSpace::Sample();
    for (int i = 0; i < kDwarfRegs; i++) {
      if (std::optional<uint64_t> v = regs.Get(kPerfRegOfDwarf[i])) {
        s.regs[i] = *v;
        s.set_regs |= uint64_t{1} << i;
      }
    }
    s.sp = *sp;
    s.stack = stack.data;
    s.stack_size = stack.valid_size();
    s.find = &find_mapping;
    s.ips = &r.ips;

    // libdwfl learns the architecture from a module: the leaf's is reported first.
    Dwfl_Module* leaf = nullptr;
    std::optional<UnwindStop> stop = impl_->EnsureModule(space, *ip, &leaf);
    if (!stop && !space.attached) {
      if (!dwfl_attach_state(space.dwfl, nullptr, pid, &kThreadCallbacks, &space))
        stop = UnwindStop::kOther;
      space.attached = true;
    }
    if (!stop) {
      // Its result says no more than the callbacks noted: an abort (theirs), or an end. Each
      // resumption goes on from a frame further up, and kMaxUnwindFrames bounds them.
      do {
        s.resuming = s.resume;
        s.resume = false;
        (void)dwfl_getthread_frames(space.dwfl, pid, OnFrame, &space);
      } while (s.resume && !s.stop && !s.stale);
      // Complete only where a table said so: libdwfl ends as if complete when it cannot read
      // a return address.
      if (s.stop)
        stop = *s.stop;
      else if (s.read_past_stack)
        stop = UnwindStop::kStackTooShort;
      else
        stop = UnwindStop::kOther;
    }
    if (s.stale && attempt == 0) {
      impl_->spaces.erase(pid);
      continue;
    }
    if (r.ips.empty())
      r.ips.push_back(*ip);
    return finish(*stop);
  }
  return finish(UnwindStop::kOther);
}

}  // namespace pbid
