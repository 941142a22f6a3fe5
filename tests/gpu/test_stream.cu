// The stream API, eagerly and captured in a CUDA graph, with both engines.
#include "gpu_env.hpp"

using namespace symmem;
using namespace symmem::test;

static const char* engine_name(Engine e) { return e == Engine::kSM ? "SM" : "copy engine"; }

TEST(Stream, PutSignalWaitAndGetWithBothEngines) {
  const int n = heap().team().size(), me = heap().team().rank();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const size_t cap = (size_t(4) << 20) + 64;
  SymmetricBuffer b = heap().alloc(cap + 64);
  DeviceBuffer src(cap), out(cap);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreate(&s));
  uint64_t round = 0;
  // Unaligned (plain copy kernel) and 16-byte aligned with a 7-byte tail (bulk-copy path).
  for (auto [len, off] : {std::pair<size_t, size_t>{(size_t(1) << 20) + 5, 3}, {(size_t(4) << 20) + 7, 0}})
  for (Engine e : {Engine::kSM, Engine::kCopyEngine}) {
    ++round;
    SYMMEM_CUDA_CHECK(cudaMemsetAsync(b.ptr(), kPoison, cap + 64, s));
    stream::barrier(b, s);
    upload(src.p, random_bytes(len, round * 10 + me));
    stream::put_signal(b, next, off, src.p, len, 0, 1, SignalOp::kAdd, s, e);
    stream::wait(b, 0, Cmp::kGe, round, s);
    ctx()->synchronize(s, "put_signal/wait");
    auto got = download(static_cast<char*>(b.ptr()) + off, len);
    std::ostringstream msg;
    if (first_diff(got, random_bytes(len, round * 10 + prev)) != -1) msg << "put_signal: byte " << first_diff(got, random_bytes(len, round * 10 + prev)) << " wrong; ";
    if (off > 0 && download(b.ptr(), 1)[0] != kPoison) msg << "put_signal wrote before its offset; ";
    if (download(static_cast<char*>(b.ptr()) + off + len, 1)[0] != kPoison) msg << "put_signal wrote past the end; ";
    // get the next rank's buffer, which holds my bytes.
    SYMMEM_CUDA_CHECK(cudaMemsetAsync(out.p, kPoison, len, s));
    stream::get(out.p, b, next, off, len, s, e);
    ctx()->synchronize(s, "get");
    if (first_diff(download(out.p, len), random_bytes(len, round * 10 + me)) != -1) msg << "get: wrong bytes; ";
    ASSERT_ALL(msg.str().empty(), engine_name(e) << ", " << len << " bytes: " << msg.str());
    stream::barrier(b, s);
    ctx()->synchronize(s);
  }
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  heap().free(b);
}

TEST(Stream, CapturedInAGraphAndReplayed) {
  const int n = heap().team().size(), me = heap().team().rank();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const size_t len = 300 * 1000 + 1;
  SymmetricBuffer b = heap().alloc(2 * len);
  DeviceBuffer src(len);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = capture_graph(s, [&] {
    stream::barrier(b, s);  // the previous replay's readers are done
    stream::put(b, next, 0, src.p, len, s, Engine::kSM);
    stream::put(b, next, len, src.p, len, s, Engine::kCopyEngine);
    stream::signal(b, next, 3, 1, SignalOp::kAdd, s);
    stream::barrier(b, s);
  });
  for (int replay = 1; replay <= 4; ++replay) {
    upload(src.p, random_bytes(len, 500 + replay * 16 + me));
    SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), kPoison, 2 * len));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    heap().team().barrier("poisoned");
    SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    ctx()->synchronize(s, "graph replay");
    auto expect = random_bytes(len, 500 + replay * 16 + prev);
    auto got = download(b.ptr(), 2 * len);
    uint64_t count;
    SYMMEM_CUDA_CHECK(cudaMemcpy(&count, b.signal_pad() + 3, 8, cudaMemcpyDeviceToHost));
    ASSERT_ALL(std::equal(expect.begin(), expect.end(), got.begin()) && std::equal(expect.begin(), expect.end(), got.begin() + len) &&
                   count == static_cast<uint64_t>(replay),
               "replay " << replay << ": SM part " << (std::equal(expect.begin(), expect.end(), got.begin()) ? "right" : "wrong")
                         << ", copy-engine part " << (std::equal(expect.begin(), expect.end(), got.begin() + len) ? "right" : "wrong")
                         << ", signal slot 3 holds " << count);
    heap().team().barrier("checked");
  }
  SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  heap().free(b);
}

TEST(Stream, ArgumentsAreCheckedBeforeLaunch) {
  SymmetricBuffer b = heap().alloc(1024);
  DeviceBuffer src(4096);
  const int n = heap().team().size();
  std::string msg;
  const std::string range = attempt([&] { stream::put(b, 0, 1000, src.p, 100, nullptr); });
  if (range.find("dst_offset + bytes = 1000 + 100 runs past the symmetric buffer's 1024 bytes") == std::string::npos)
    msg += "put past the end: '" + range + "'; ";
  msg += refusal("put to rank n", [&] { stream::put(b, n, 0, src.p, 16, nullptr); });
  msg += refusal("put from null", [&] { stream::put(b, 0, 0, nullptr, 16, nullptr); });
  msg += refusal("get past the end", [&] { stream::get(src.p, b, 0, 1024, 1, nullptr); });
  msg += refusal("signal past the user slots", [&] { stream::signal(b, 0, pad::kUserSlots, 1, SignalOp::kSet, nullptr); });
  msg += refusal("wait on slot -1", [&] { stream::wait(b, -1, Cmp::kEq, 1, nullptr); });
  ASSERT_ALL(msg.empty(), msg);
  heap().free(b);
}
