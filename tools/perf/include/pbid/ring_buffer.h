// SPDX-License-Identifier: GPL-2.0
//
// Reader of a perf_event_open ring buffer: the metadata page (struct perf_event_mmap_page)
// followed by a power-of-two data area. The kernel publishes data_head; we read it with
// acquire semantics, consume the records up to it, and publish data_tail with release
// semantics so that the kernel never overwrites bytes we still read.
#ifndef PBID_RING_BUFFER_H_
#define PBID_RING_BUFFER_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "pbid/result.h"

namespace pbid {

class RingBuffer {
 public:
  // base: start of the mapping (the metadata page); data_size: bytes of the data area, a power
  // of two. The data area starts at meta->data_offset when the kernel sets it, else at
  // page_size. Does not own the mapping.
  RingBuffer(void* base, size_t page_size, size_t data_size);

  // Records are passed contiguous: one that wraps around the end of the buffer is copied into a
  // scratch buffer first. fn returns false on error: then reading stops and the tail is left
  // at the last fully handled record. A record header that cannot be right (size < 8 or larger
  // than the buffer) is an error: the buffer is then skipped to data_head.
  // Returns the number of records handled.
  Result<size_t> Read(const std::function<bool(const uint8_t* rec, size_t size)>& fn);

  // Bytes between data_tail and data_head.
  uint64_t Pending() const;
  perf_event_mmap_page* meta() const { return meta_; }

 private:
  perf_event_mmap_page* meta_;
  uint8_t* data_;
  size_t size_;
  std::vector<uint8_t> scratch_;
};

}  // namespace pbid

#endif  // PBID_RING_BUFFER_H_
