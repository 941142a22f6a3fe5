#pragma once
// What the main job ends with: the fastest method at each size on this machine, from the table the
// collectives suite measured (bench/collectives.cu: per size, symmem's fastest algorithm, or NCCL
// where NCCL on plain buffers was faster), one line an operation with runs of one method merged:
// "all_reduce       ll to 1 MiB, two_shot to 16 MiB, two_shot_push above".
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>

#include "symmem/collectives.hpp"

namespace symmem::bench {

/// 1024 -> "1 KiB", 1536 -> "1536 B" (whole units only), 3 << 30 -> "3 GiB".
inline std::string human_bytes(size_t b) {
  const char* u[] = {"B", "KiB", "MiB", "GiB"};
  int i = 0;
  double v = static_cast<double>(b);
  while (v >= 1024 && i < 3 && std::fmod(v, 1024) == 0) { v /= 1024; ++i; }
  std::ostringstream s;
  s << v << " " << u[i];
  return s.str();
}

/// One line an operation of `measured` (entries in size order, op by op, as the suite adds them; the
/// last entry of an operation covers every size above the largest measured, max_bytes >= 2^40).
/// Each line starts with `prefix`.
inline std::string fastest_by_size(const TuningTable& measured, const std::string& prefix = "#   ") {
  std::ostringstream out;
  const auto& e = measured.entries();
  for (size_t i = 0; i < e.size();) {
    const CollOp op = e[i].op;
    std::string line = prefix + coll_name(op);
    line.resize(std::max(line.size() + 1, prefix.size() + 16), ' ');
    bool first = true;
    for (; i < e.size() && e[i].op == op; ++i) {
      if (i + 1 < e.size() && e[i + 1].op == op && e[i + 1].algo == e[i].algo) continue;  // a run goes on
      const bool last = i + 1 == e.size() || e[i + 1].op != op;
      line += std::string(first ? "" : ", ") + algo_name(e[i].algo);
      line += last && e[i].max_bytes >= (size_t(1) << 40) ? (first ? " at every size" : " above") : " to " + human_bytes(e[i].max_bytes);
      first = false;
    }
    out << line << "\n";
  }
  return out.str();
}

}  // namespace symmem::bench
