// SPDX-License-Identifier: GPL-2.0
#include "test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace pbid::testing {

std::string ReadelfBuildId(const std::string& path) {
  CommandResult r = RunCommand("readelf -n " + Quote(path));
  std::istringstream in(r.output);
  std::string line;
  const std::string key = "Build ID: ";
  while (std::getline(in, line)) {
    auto pos = line.find(key);
    if (pos != std::string::npos)
      return line.substr(pos + key.size());
  }
  return "";
}

std::string FixturePath(const std::string& name) {
  return std::string(PBID_FIXTURE_DIR) + "/" + name;
}

std::map<std::string, RecordedFunction> RecordWorkload(const std::string& binary) {
  std::map<std::string, RecordedFunction> out;
  CommandResult r = RunCommand(Quote(binary) + " --addrs");
  std::istringstream in(r.output);
  std::string name;
  RecordedFunction f;
  while (in >> name >> std::hex >> f.addr >> f.start >> f.end >> f.pgoff)
    out[name] = f;
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
  if (ec)
    return false;
  fs::permissions(to, executable ? fs::perms(0755) : fs::perms(0644), ec);
  return !ec;
}

std::string InstallInBuildIdDir(const std::string& root, const std::string& hex,
                                const std::string& file, const char* suffix) {
  std::string dir = root + "/.build-id/" + hex.substr(0, 2);
  if (!MakeDirs(dir))
    return "";
  std::string dest = dir + "/" + hex.substr(2) + suffix;
  return CopyFile(file, dest, suffix[0] == '\0') ? dest : "";
}

int FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
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

std::string HttpGet(int port, const std::string& path, int timeout_s) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return "";
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<uint16_t>(port));
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
    std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0)
        out.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return out;
}

namespace {

// Sums every `name{...} value` line of a Prometheus text page.
long MetricSum(const std::string& page, const std::string& name) {
  std::istringstream in(page);
  std::string line;
  long sum = 0;
  while (std::getline(in, line)) {
    if (line.compare(0, name.size(), name) != 0)
      continue;
    if (line.size() > name.size() && line[name.size()] != '{' && line[name.size()] != ' ')
      continue;
    auto sp = line.rfind(' ');
    if (sp != std::string::npos)
      sum += atol(line.c_str() + sp + 1);
  }
  return sum;
}

}  // namespace

std::string DebuginfodServer::Start(const std::string& scan_dir, const std::string& work_dir,
                                    int expect_files, int timeout_s) {
  port_ = FreeTcpPort();
  if (port_ <= 0)
    return "no free TCP port";
  log_path_ = work_dir + "/debuginfod.log";
  std::string db = work_dir + "/debuginfod.sqlite";
  std::string port = std::to_string(port_);
  pid_t pid = fork();
  if (pid < 0)
    return std::string("fork: ") + strerror(errno);
  if (pid == 0) {
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log >= 0) {
      dup2(log, 1);
      dup2(log, 2);
    }
    // Without this the server would forward misses to the upstream servers of the host
    // (Debian sets DEBUGINFOD_URLS in /etc/profile.d): the test must not touch the network.
    unsetenv("DEBUGINFOD_URLS");
    execlp("debuginfod", "debuginfod", "-p", port.c_str(), "-d", db.c_str(), "-F", "-c", "1", "-t",
           "0", "-g", "0", scan_dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return "debuginfod exited early (status " + std::to_string(status) + "): " + log();
    }
    std::string page = HttpGet(port_, "/metrics", 2);
    if (!page.empty() && MetricSum(page, "scanned_files_total") >= expect_files &&
        MetricSum(page, "thread_work_pending") == 0) {
      return "";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "debuginfod did not index " + std::to_string(expect_files) + " files in " +
         std::to_string(timeout_s) + " s: " + log();
}

void DebuginfodServer::Stop() {
  if (pid_ <= 0)
    return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 100; i++) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string DebuginfodServer::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string SilentServer::Start(const std::string& work_dir) {
  log_path_ = work_dir + "/silent-server.log";
  const char* script =
      "import socket, sys\n"
      "s = socket.socket()\n"
      "s.bind(('127.0.0.1', 0))\n"
      "s.listen(128)\n"
      "print(s.getsockname()[1], flush=True)\n"
      "log = open(sys.argv[1], 'a', buffering=1)\n"
      "held = []\n"
      "while True:\n"
      "    c, _ = s.accept()\n"
      "    held.append(c)\n"
      "    log.write('accepted\\n')\n";
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return std::string("pipe: ") + strerror(errno);
  pid_t pid = fork();
  if (pid < 0)
    return std::string("fork: ") + strerror(errno);
  if (pid == 0) {
    dup2(fds[1], 1);
    execlp("python3", "python3", "-c", script, log_path_.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_ = pid;
  close(fds[1]);
  // The port, as the listener prints it; bounded, should python3 not start.
  std::string line;
  char c;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    struct timeval tv = {1, 0};
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fds[0], &set);
    if (select(fds[0] + 1, &set, nullptr, nullptr, &tv) <= 0)
      continue;
    if (read(fds[0], &c, 1) != 1 || c == '\n')
      break;
    line += c;
  }
  close(fds[0]);
  port_ = atoi(line.c_str());
  if (port_ <= 0) {
    Stop();
    return "the python3 listener printed no port ('" + line + "')";
  }
  return "";
}

void SilentServer::Stop() {
  if (pid_ <= 0)
    return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int SilentServer::accepted() const {
  std::ifstream in(log_path_);
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    n += line == "accepted";
  return n;
}

}  // namespace pbid::testing
