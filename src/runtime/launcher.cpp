#include "symmem/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "socket.hpp"
#include "symmem/env.hpp"
#include "symmem/error.hpp"

namespace symmem {

bool launched() { return std::getenv("RANK") != nullptr || std::getenv("OMPI_COMM_WORLD_RANK") != nullptr; }

static const char* kUsage =
    "usage: symmem-run -n N [--ranks-per-gpu K] [--port P] [--no-prefix] program [args...]\n"
    "       symmem-run --help | --env";

LaunchOptions parse_launch_args(const std::vector<std::string>& args, std::vector<std::string>* program) {
  LaunchOptions o;
  size_t i = 0;
  auto value = [&](const std::string& flag) -> const char* {
    if (i + 1 >= args.size()) fail(flag + " needs a value. " + kUsage);
    return args[++i].c_str();
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-n" || a == "--nproc" || a == "--nproc-per-node") {
      o.nranks = static_cast<int>(detail::parse_int(value(a), "-n", 1, 4096));
    } else if (a == "--ranks-per-gpu") {
      o.ranks_per_gpu = static_cast<int>(detail::parse_int(value(a), "--ranks-per-gpu", 1, 1024));
    } else if (a == "--port") {
      o.port = static_cast<int>(detail::parse_int(value(a), "--port", 1, 65535));
    } else if (a == "--no-prefix") {
      o.prefix_output = false;
    } else if (a == "-h" || a == "--help") {
      o.help = true;
      return o;
    } else if (a == "--env") {
      o.env = true;
      return o;
    } else if (a == "--") {
      ++i;
      break;
    } else if (!a.empty() && a[0] == '-') {
      fail("unknown option '" + a + "'. " + kUsage);
    } else {
      break;
    }
  }
  program->assign(args.begin() + static_cast<long>(i), args.end());
  if (program->empty()) fail(std::string("no program given. ") + kUsage);
  return o;
}

std::string launch_help() {
  return std::string(kUsage) +
         "\n\nStarts N processes of `program` on this host, rank r with the environment torchrun would set (RANK,\n"
         "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT), a fresh SYMMEM_JOB_TOKEN, and\n"
         "NVLink multicast off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1).\n"
         "  -n N               ranks (1 to 4096)\n"
         "  --ranks-per-gpu K  ranks sharing one GPU (rank r uses GPU r / K)\n"
         "  --port P           rendezvous port (default: a free one)\n"
         "  --no-prefix        do not prefix output lines with [rank r]\n"
         "  --env              list every environment variable symmem reads\n"
         "Each rank runs in its own process group. The first rank to fail, or a SIGINT/SIGTERM/SIGHUP to\n"
         "symmem-run, or a closed output pipe, ends every rank's whole group (SIGTERM, then SIGKILL after 3 s);\n"
         "if symmem-run itself is killed, its ranks get SIGKILL. Exit status: the first failure's (128 + signal\n"
         "for a signal), or 0.\n";
}

std::string env_help() {
  std::string out;
  for (const EnvVar& v : env_vars())
    out += std::string(v.name) + (v.default_value ? std::string(" (default ") + v.default_value + ")" : std::string()) + "\n    " +
           v.doc + "\n";
  return out;
}

namespace {
volatile sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) {
  if (g_signal == 0) g_signal = sig;
}

struct Child {
  pid_t pid = -1;
  int out = -1, err = -1;
  std::string out_buf, err_buf;
  bool done = false;
  int status = 0;
};

// Writes the complete lines of buf (all of it with `all`) to fd. A closed output (EPIPE) ends the job.
void write_out(int fd, const std::string& line) {
  if (write(fd, line.data(), line.size()) < 0 && errno == EPIPE && g_signal == 0) g_signal = SIGPIPE;
}
void flush_lines(std::string& buf, int fd, const std::string& prefix, bool all) {
  size_t start = 0;
  for (;;) {
    size_t nl = buf.find('\n', start);
    if (nl == std::string::npos) break;
    write_out(fd, prefix + buf.substr(start, nl - start + 1));
    start = nl + 1;
  }
  buf.erase(0, start);
  if (all && !buf.empty()) {
    write_out(fd, prefix + buf + "\n");
    buf.clear();
  }
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}
}  // namespace

int launch(const LaunchOptions& opt, const std::vector<std::string>& argv) {
  require(!argv.empty(), "launch: no program given");
  require(opt.nranks >= 1, "launch: nranks must be at least 1");
  int port = opt.port;
  if (port == 0) {  // a free port: bind 0, read it, release it for rank 0's store
    int fd = detail::tcp_listen("127.0.0.1", 0);
    port = detail::bound_port(fd);
    close(fd);
  }
  // Signals to symmem-run end the job instead of orphaning it; a closed output pipe too.
  g_signal = 0;
  struct sigaction sa {}, old_int {}, old_term {}, old_hup {}, old_pipe {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old_pipe);
  const pid_t launcher = getpid();
  char token[64];
  std::snprintf(token, sizeof(token), "%d-%lld", static_cast<int>(launcher),
                static_cast<long long>(std::chrono::steady_clock::now().time_since_epoch().count()));

  std::vector<Child> kids(opt.nranks);
  for (int r = 0; r < opt.nranks; ++r) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) detail::throw_system("pipe2()", errno);
    pid_t pid = fork();
    if (pid < 0) detail::throw_system("fork()", errno);
    if (pid == 0) {
      // Own process group (the launcher ends it whole); killed if the launcher dies.
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != launcher) _exit(1);
      sigaction(SIGINT, &old_int, nullptr);
      sigaction(SIGTERM, &old_term, nullptr);
      sigaction(SIGHUP, &old_hup, nullptr);
      sigaction(SIGPIPE, &old_pipe, nullptr);
      dup2(out[1], 1);
      dup2(err[1], 2);
      auto set = [](const char* k, const std::string& v) { setenv(k, v.c_str(), 1); };
      set("RANK", std::to_string(r));
      set("WORLD_SIZE", std::to_string(opt.nranks));
      set("LOCAL_RANK", std::to_string(r));
      set("LOCAL_WORLD_SIZE", std::to_string(opt.nranks));
      set("GROUP_RANK", "0");
      set("MASTER_ADDR", "127.0.0.1");
      set("MASTER_PORT", std::to_string(port));
      set("SYMMEM_JOB_TOKEN", token);
      set("SYMMEM_RANKS_PER_GPU", std::to_string(opt.ranks_per_gpu));
      // NVLink multicast stays off in everything a rank may start.
      set("NCCL_NVLS_ENABLE", "0");
      set("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1");
      set("NVSHMEM_DISABLE_NVLS", "1");
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
      cargv.push_back(nullptr);
      execvp(cargv[0], cargv.data());
      std::fprintf(stderr, "symmem-run: cannot run '%s': %s\n", cargv[0], std::strerror(errno));
      _exit(127);
    }
    setpgid(pid, pid);  // also here: no window in which a signal to the group misses it
    close(out[1]);
    close(err[1]);
    kids[r].pid = pid;
    kids[r].out = out[0];
    kids[r].err = err[0];
  }

  int result = 0;
  bool killing = false;
  auto kill_start = detail::Clock::now();
  auto end_all = [&](int sig) {
    for (auto& o : kids) kill(-o.pid, sig);  // the whole group: a rank's own children too
  };
  // Moves what the ranks wrote to this process's stdout / stderr, line by line with their prefix;
  // waits up to timeout_ms for something to read. Returns whether any rank's pipe is still open.
  auto pump = [&](int timeout_ms) {
    std::vector<pollfd> fds;
    std::vector<std::pair<int, int>> who;  // (child, 0 out / 1 err)
    for (int r = 0; r < opt.nranks; ++r) {
      if (kids[r].out >= 0) { fds.push_back({kids[r].out, POLLIN, 0}); who.push_back({r, 0}); }
      if (kids[r].err >= 0) { fds.push_back({kids[r].err, POLLIN, 0}); who.push_back({r, 1}); }
    }
    if (fds.empty()) return false;
    poll(fds.data(), fds.size(), timeout_ms);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = kids[who[i].first];
      int& fd = who[i].second == 0 ? c.out : c.err;
      std::string& buf = who[i].second == 0 ? c.out_buf : c.err_buf;
      char tmp[8192];
      ssize_t k = read(fd, tmp, sizeof(tmp));
      std::string prefix = opt.prefix_output ? "[rank " + std::to_string(who[i].first) + "] " : "";
      if (k <= 0) {
        flush_lines(buf, who[i].second == 0 ? 1 : 2, prefix, true);
        close(fd);
        fd = -1;
        continue;
      }
      buf.append(tmp, static_cast<size_t>(k));
      flush_lines(buf, who[i].second == 0 ? 1 : 2, prefix, false);
    }
    return true;
  };
  size_t alive = kids.size();
  while (alive > 0) {
    if (!pump(50)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (g_signal != 0 && !killing) {
      // Forward SIGINT/SIGTERM/SIGHUP to every group as SIGTERM; a closed pipe ends the job the same way.
      const int sig = g_signal;
      if (sig != SIGPIPE) std::fprintf(stderr, "symmem-run: got signal %d; stopping every rank\n", sig);
      if (result == 0) result = 128 + sig;
      killing = true;
      kill_start = detail::Clock::now();
      end_all(SIGTERM);
    }
    for (int r = 0; r < opt.nranks; ++r) {
      Child& c = kids[r];
      if (c.done) continue;
      int st = 0;
      if (waitpid(c.pid, &st, WNOHANG) == c.pid) {
        c.done = true;
        c.status = st;
        --alive;
        int code = exit_code(st);
        if (code != 0 && result == 0) {
          result = code;
          if (!killing) {
            std::fprintf(stderr, "symmem-run: rank %d exited with status %d; stopping the other ranks\n", r, code);
            killing = true;
            kill_start = detail::Clock::now();
            end_all(SIGTERM);
          }
        }
      }
    }
    if (killing && detail::Clock::now() - kill_start > std::chrono::milliseconds(opt.kill_grace_ms)) end_all(SIGKILL);
  }
  // Nothing of the job outlives it: what a rank left running in its group goes too.
  end_all(SIGKILL);
  // What the ranks wrote before they exited may still sit in the pipes (a rank that writes and
  // exits between this loop's poll and its waitpid): read to the end, boundedly (the write ends
  // close once every process of the groups is gone).
  const auto drain_until = detail::Clock::now() + std::chrono::seconds(2);
  while (detail::Clock::now() < drain_until && pump(50)) {
  }
  for (auto& c : kids) {
    if (c.out >= 0) close(c.out);
    if (c.err >= 0) close(c.err);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  return result;
}

}  // namespace symmem
