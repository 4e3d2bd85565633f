// SPDX-License-Identifier: GPL-2.0
#include "pbid/file_hash.h"

// SHA-256 from nettle, not written here: a hash written by hand is a hash someone must prove.
// nettle rather than libcrypto (OpenSSL), which would do as well: nettle is a small library of
// primitives with a plain init/update/digest API (about 0.5 MB), where libcrypto is ten times
// that, and every guest of the lab carries the binary's shared libraries in its initramfs.
#include <errno.h>
#include <nettle/sha2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "pbid/elf_build_id.h"

namespace pbid {

namespace {

class Sha256 {
 public:
  Sha256() { sha256_init(&ctx_); }
  void Update(const void* p, size_t n) { sha256_update(&ctx_, n, static_cast<const uint8_t*>(p)); }
  // The specification's digest: the first FileHash::kSize bytes of SHA-256.
  FileHash Finish(uint64_t file_size) {
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
      len[i] = static_cast<uint8_t>(file_size >> (56 - 8 * i));  // big-endian
    Update(len, sizeof(len));
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx_, sizeof(digest), digest);
    uint8_t out[FileHash::kSize];
    memcpy(out, digest, sizeof(out));
    return FileHash::FromBytes(out);
  }

 private:
  sha256_ctx ctx_;
};

// pread until n bytes or end of file; the count read.
Result<size_t> ReadFully(int fd, uint8_t* buf, size_t n, uint64_t off, const std::string& name) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, buf + got, n - got, static_cast<off_t>(off + got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return Error::Sys(name, errno, "cannot read");
    if (r == 0)
      break;
    got += static_cast<size_t>(r);
  }
  return got;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

}  // namespace

FileHash FileHash::FromBytes(const uint8_t (&bytes)[kSize]) {
  FileHash h;
  memcpy(h.bytes_.data(), bytes, kSize);
  return h;
}

Result<FileHash> FileHash::FromHex(std::string_view hex, std::string_view field) {
  if (hex.size() != 2 * kSize)
    return Error(std::string(field), "a file hash is " + std::to_string(2 * kSize) + " hex digits");
  uint8_t b[kSize];
  for (size_t i = 0; i < kSize; i++) {
    int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return Error(std::string(field), "not a hex digit in \"" + std::string(hex) + "\"");
    b[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return FromBytes(b);
}

std::string FileHash::ToHex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes_) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

Result<FileHash> ComputeFileHashFd(int fd, const std::string& name) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return Error::Sys(name, errno, "cannot stat");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t head = std::min(size, FileHash::kPartSize);
  const uint64_t tail = std::min(size, FileHash::kPartSize);
  std::vector<uint8_t> buf(head + tail);
  PBID_ASSIGN_OR_RETURN(size_t got_head, ReadFully(fd, buf.data(), head, 0, name));
  PBID_ASSIGN_OR_RETURN(size_t got_tail, ReadFully(fd, buf.data() + head, tail, size - tail, name));
  // A file that shrank while it was read would hash bytes that are not its ends.
  if (got_head != head || got_tail != tail)
    return Error(name, "file changed size while it was hashed");
  Sha256 sha;
  sha.Update(buf.data(), buf.size());
  return sha.Finish(size);
}

Result<FileHash> ComputeFileHash(const std::string& path) {
  auto fd = OpenRegularFile(path);
  if (!fd.ok())
    return fd.error();
  auto r = ComputeFileHashFd(*fd, path);
  close(*fd);
  return r;
}

FileHash ComputeFileHashMemory(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const size_t part = std::min<size_t>(size, FileHash::kPartSize);
  Sha256 sha;
  sha.Update(p, part);
  sha.Update(p + size - part, part);
  return sha.Finish(size);
}

}  // namespace pbid
