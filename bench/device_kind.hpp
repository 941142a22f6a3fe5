#pragma once
// The machine kind a result JSON names where --kind is not given: "nvidia-<model>-x<GPUs>", as the
// lent machines are named ("NVIDIA H200" on 4 GPUs -> "nvidia-h200-x4"), the model being the first
// word of the GPU's name (split at spaces and '-') that holds a digit, lower-cased
// ("NVIDIA A100-SXM4-80GB" -> "a100", "Tesla V100-SXM2-16GB" -> "v100").
#include <cctype>
#include <string>

namespace symmem::bench {

inline std::string device_kind_from(const std::string& gpu_name, int gpus) {
  std::string model, word;
  auto take = [&] {
    bool digit = false;
    for (char c : word) digit = digit || std::isdigit(static_cast<unsigned char>(c));
    if (model.empty() && digit) model = word;
    word.clear();
  };
  for (char c : gpu_name) {
    if (c == ' ' || c == '-') take();
    else word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  take();
  return "nvidia-" + (model.empty() ? std::string("unknown") : model) + "-x" + std::to_string(gpus);
}

}  // namespace symmem::bench
