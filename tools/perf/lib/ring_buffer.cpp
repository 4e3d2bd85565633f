// SPDX-License-Identifier: GPL-2.0
#include "pbid/ring_buffer.h"

#include <cstring>

namespace pbid {

RingBuffer::RingBuffer(void* base, size_t page_size, size_t data_size)
    : meta_(static_cast<perf_event_mmap_page*>(base)), size_(data_size) {
  uint64_t off = meta_->data_offset ? meta_->data_offset : page_size;
  if (meta_->data_size)
    size_ = meta_->data_size;
  data_ = static_cast<uint8_t*>(base) + off;
}

uint64_t RingBuffer::Pending() const {
  uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  return head - meta_->data_tail;
}

Result<size_t> RingBuffer::Read(const std::function<bool(const uint8_t*, size_t)>& fn) {
  // Pairs with the kernel's store-release of data_head: record bytes below head are visible.
  uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta_->data_tail;  // only we write it
  uint64_t mask = size_ - 1;
  size_t n = 0;
  Status status;
  while (tail < head) {
    uint64_t avail = head - tail;
    if (avail < sizeof(perf_event_header)) {
      status = Error("ring_buffer.data_head", tail, "partial record header");
      tail = head;
      break;
    }
    perf_event_header hdr;
    uint64_t pos = tail & mask;
    if (pos + sizeof(hdr) <= size_) {
      memcpy(&hdr, data_ + pos, sizeof(hdr));
    } else {
      size_t first = size_ - pos;
      memcpy(&hdr, data_ + pos, first);
      memcpy(reinterpret_cast<uint8_t*>(&hdr) + first, data_, sizeof(hdr) - first);
    }
    if (hdr.size < sizeof(hdr) || hdr.size > avail) {
      status = Error("ring_buffer.record.size", tail,
                     "record size " + std::to_string(hdr.size) + " with " + std::to_string(avail) +
                         " bytes published");
      tail = head;
      break;
    }
    const uint8_t* rec;
    if (pos + hdr.size <= size_) {
      rec = data_ + pos;
    } else {
      scratch_.resize(hdr.size);
      size_t first = size_ - pos;
      memcpy(scratch_.data(), data_ + pos, first);
      memcpy(scratch_.data() + first, data_, hdr.size - first);
      rec = scratch_.data();
    }
    if (!fn(rec, hdr.size))
      break;
    tail += hdr.size;
    n++;
  }
  // Our reads of the records must complete before the kernel may reuse their space.
  __atomic_store_n(&meta_->data_tail, tail, __ATOMIC_RELEASE);
  if (!status.ok())
    return status.error();
  return n;
}

}  // namespace pbid
