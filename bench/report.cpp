// Results: JSON with the facts that make a claim checkable, and an SVG plot of time against size.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "device_kind.hpp"
#include "harness.hpp"
#include "symmem/error.hpp"

extern char** environ;

namespace symmem::bench {

static std::string num(double v) {
  if (!std::isfinite(v) || v < 0) return "null";  // JSON has no inf or nan
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// A JSON string: quotes, backslashes and control characters escaped (device names, commits and
// kinds come from outside).
static std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The settings a run was measured under: this process's SYMMEM_* and NCCL_* variables and
// CUDA_VISIBLE_DEVICES, sorted, as a JSON object (every rank of a launch gets the same; the job's
// token is left out).
static std::string environment_json() {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = kv.substr(0, eq);
    if (k == "SYMMEM_JOB_TOKEN") continue;
    if (k.rfind("SYMMEM_", 0) == 0 || k.rfind("NCCL_", 0) == 0 || k == "CUDA_VISIBLE_DEVICES") vars.emplace_back(k, kv.substr(eq + 1));
  }
  std::sort(vars.begin(), vars.end());
  std::string out = "{";
  for (size_t i = 0; i < vars.size(); ++i) out += (i ? ", " : "") + quote(vars[i].first) + ": " + quote(vars[i].second);
  return out + "}";
}

void write_json(const Harness& h, const std::string& suite, const std::string& path) {
  int v = 0;
  ncclGetVersion(&v);
  std::time_t t = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  std::string kind = h.opt().device_kind;  // --kind, else what this host's GPUs make it
  if (kind.empty()) {
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = h.size();
    kind = device_kind_from(h.gpu_name(), gpus);
  }
  std::ofstream f(path);
  if (!f) fail("cannot write the JSON '" + path + "'");
  f << "{\n  \"suite\": " << quote(suite) << ",\n  \"device\": " << quote(h.gpu_name()) << ",\n  \"device_kind\": "
    << quote(kind) << ",\n  \"gpus\": " << h.size() << ",\n  \"commit\": " << quote(h.opt().commit)
    << ",\n  \"nccl_version\": " << quote(std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100))
    << ",\n  \"date\": " << quote(date) << ",\n  \"timing\": \"CUDA-graph replays timed with events, median of "
    << h.opt().replays << ", maximum over ranks"
    << (h.idle_us() > 0 ? ", each replay after a " + std::to_string(h.idle_us()) + " us near-idle spin (SYMMEM_BENCH_IDLE_US)" : std::string())
    << "\",\n  \"environment\": " << environment_json() << ",\n  \"rows\": [\n";
  const auto& rows = h.rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << "    {\"op\": " << quote(r.op) << ", \"dtype\": " << quote(r.dtype) << ", \"bytes\": " << r.bytes
      << ", \"algo\": " << quote(r.algo) << ", \"symmem_us\": " << num(r.symmem_us) << ", \"nccl_us\": " << num(r.nccl_us)
      << ", \"nccl_symm_us\": " << num(r.nccl_symm_us) << ", \"symmem_busbw\": " << num(r.symmem_gbps)
      << ", \"nccl_busbw\": " << num(r.nccl_gbps) << ", \"wrong\": " << r.wrong;
    for (auto& kv : r.extra) f << ", " << quote(kv.first) << ": " << num(kv.second);
    for (auto& kv : r.text) f << ", " << quote(kv.first) << ": " << quote(kv.second);
    f << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
  f.close();
  if (!f) fail("writing the JSON '" + path + "' failed");
}

bool write_svg(const std::vector<Row>& rows, const std::string& title, const std::string& path) {
  // One line per (op, algo) for symmem and one per op for NCCL: time (log) against size (log).
  std::map<std::string, std::vector<std::pair<double, double>>> series;
  for (const Row& r : rows) {
    if (r.symmem_us > 0) series["symmem " + r.op + " " + r.algo].push_back({double(r.bytes), r.symmem_us});
    if (r.nccl_us > 0) series["NCCL " + r.op].push_back({double(r.bytes), r.nccl_us});
    if (r.nccl_symm_us > 0) series["NCCL symmetric " + r.op].push_back({double(r.bytes), r.nccl_symm_us});
  }
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (auto& s : series)
    for (auto& p : s.second) {
      x0 = std::min(x0, p.first); x1 = std::max(x1, p.first);
      y0 = std::min(y0, p.second); y1 = std::max(y1, p.second);
    }
  if (series.empty()) return false;
  const double W = 960, H = 600, L = 80, R = 300, T = 40, B = 60;
  auto X = [&](double x) { return L + (std::log2(x) - std::log2(x0)) / std::max(1e-9, std::log2(x1) - std::log2(x0)) * (W - L - R); };
  auto Y = [&](double y) { return H - B - (std::log10(y) - std::log10(y0)) / std::max(1e-9, std::log10(y1) - std::log10(y0)) * (H - T - B); };
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::ofstream f(path);
  if (!f) fail("cannot write the plot '" + path + "'");
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='12'>\n"
    << "<rect width='100%' height='100%' fill='white'/>\n<text x='" << L << "' y='24' font-size='16'>" << title << "</text>\n"
    << "<text x='" << (W - R) / 2 << "' y='" << H - 15 << "'>message size (bytes)</text>\n"
    << "<text x='15' y='" << H / 2 << "' transform='rotate(-90 15," << H / 2 << ")'>time (us, log)</text>\n";
  for (double x = x0; x <= x1 * 1.0001; x *= 4)
    f << "<line x1='" << X(x) << "' x2='" << X(x) << "' y1='" << T << "' y2='" << H - B << "' stroke='#eee'/><text x='" << X(x) - 15
      << "' y='" << H - B + 15 << "' font-size='10'>" << human_bytes(size_t(x)) << "</text>\n";
  for (double y = std::pow(10, std::floor(std::log10(y0))); y <= y1 * 10; y *= 10)
    if (y >= y0 * 0.999 && y <= y1 * 1.001)
      f << "<line x1='" << L << "' x2='" << W - R << "' y1='" << Y(y) << "' y2='" << Y(y) << "' stroke='#eee'/><text x='" << L - 45
        << "' y='" << Y(y) + 4 << "' font-size='10'>" << y << "</text>\n";
  int i = 0;
  for (auto& s : series) {
    auto pts = s.second;
    std::sort(pts.begin(), pts.end());
    const char* c = colors[i % 10];
    f << "<polyline fill='none' stroke='" << c << "' stroke-width='2'" << (s.first.rfind("NCCL", 0) == 0 ? " stroke-dasharray='6,3'" : "")
      << " points='";
    for (auto& p : pts) f << X(p.first) << "," << Y(p.second) << " ";
    f << "'/>\n<text x='" << W - R + 10 << "' y='" << T + 16 * i << "' fill='" << c << "'>" << s.first << "</text>\n";
    ++i;
  }
  f << "</svg>\n";
  f.close();
  if (!f) fail("writing the plot '" + path + "' failed");
  return true;
}

}  // namespace symmem::bench
