// SPDX-License-Identifier: GPL-2.0
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace pbid::testing {

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/pbid-sym-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
}

TempDir::~TempDir() {
  if (path_.empty() || getenv("PBID_KEEP_TEMP") != nullptr) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

CommandResult Run(const std::string& command, int timeout_s) {
  CommandResult r;
  std::string cmd = "timeout -k 5 " + std::to_string(timeout_s) + " sh -c " + Quote(command) +
                    " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  int status = pclose(p);
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

std::string ReadelfBuildId(const std::string& path) {
  CommandResult r = Run("readelf -n " + Quote(path));
  std::istringstream in(r.output);
  std::string line;
  const std::string key = "Build ID: ";
  while (std::getline(in, line)) {
    auto pos = line.find(key);
    if (pos != std::string::npos) return line.substr(pos + key.size());
  }
  return "";
}

std::string FixturePath(const std::string& name) { return std::string(PBID_FIXTURE_DIR) + "/" + name; }

std::map<std::string, RecordedFunction> RecordWorkload(const std::string& binary) {
  std::map<std::string, RecordedFunction> out;
  CommandResult r = Run(Quote(binary) + " --addrs");
  std::istringstream in(r.output);
  std::string name;
  RecordedFunction f;
  while (in >> name >> std::hex >> f.addr >> f.start >> f.end >> f.pgoff) out[name] = f;
  return out;
}

bool MakeDirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  return !ec;
}

bool CopyFile(const std::string& from, const std::string& to, bool executable) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return false;
  fs::permissions(to, executable ? fs::perms(0755) : fs::perms(0644), ec);
  return !ec;
}

std::string InstallInBuildIdDir(const std::string& root, const std::string& hex,
                                const std::string& file, const char* suffix) {
  std::string dir = root + "/.build-id/" + hex.substr(0, 2);
  if (!MakeDirs(dir)) return "";
  std::string dest = dir + "/" + hex.substr(2) + suffix;
  return CopyFile(file, dest, suffix[0] == '\0') ? dest : "";
}

int FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = 0;
  socklen_t len = sizeof(sa);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0) {
    port = ntohs(sa.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace pbid::testing
