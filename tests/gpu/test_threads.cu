// symmem called from a thread whose current device is another GPU (every new thread starts on
// device 0): each entry point makes its Context's GPU current for the call and gives the thread
// its own back (src/runtime/call_scope.hpp), as NCCL's calls do. Where the machine has one GPU the
// other device is that one, and the test checks the results and the device given back only; with
// a GPU a rank (2 GPUs and more) every rank's thread starts on its neighbour's GPU.
#include <exception>
#include <functional>
#include <thread>

#include "reference.hpp"

using namespace symmem;
using namespace symmem::test;

namespace {

// Runs f on a new thread whose current device is `device`; returns what went wrong ("" if nothing),
// including a device not given back.
std::string on_device_thread(int device, const std::function<void()>& f) {
  std::string why;
  std::thread t([&] {
    try {
      SYMMEM_CUDA_CHECK(cudaSetDevice(device));
      f();
      int now = -1;
      SYMMEM_CUDA_CHECK(cudaGetDevice(&now));
      if (now != device) why = "the thread's current device is " + std::to_string(now) + " after the calls, not its own " + std::to_string(device);
    } catch (const std::exception& e) {
      why = e.what();
    }
  });
  t.join();
  return why;
}

}  // namespace

TEST(Threads, CallsFromAThreadWhoseDeviceIsAnotherGpu) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  int gpus = 0;
  SYMMEM_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  const int mine = ctx()->device(), other = (mine + 1) % gpus;
  const size_t count = 4099, bytes = count * sizeof(float);
  std::vector<std::vector<uint8_t>> ins;
  for (int r = 0; r < n; ++r) ins.push_back(random_elems(DataType::kFloat32, count, 8800 + r, ReduceOp::kSum));
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));  // on this rank's GPU
  SymmetricBuffer in, out;
  std::string why = on_device_thread(other, [&] {
    in = c.alloc(bytes);
    out = c.alloc(bytes);
  });
  ASSERT_ALL(why.empty(), "alloc from a thread on GPU " << other << ": " << why);
  upload(in.ptr(), ins[me]);
  poison(out.ptr(), bytes);
  why = on_device_thread(other, [&] {
    c.all_reduce(in.ptr(), out.ptr(), count, DataType::kFloat32, ReduceOp::kSum, s, Algo::kLL);
    stream::barrier(in, s);
    stream::signal(in, (me + 1) % n, 5, 1, SignalOp::kAdd, s);
    stream::wait(in, 5, Cmp::kGe, 1, s);
    ctx()->synchronize(s, "calls from another GPU's thread");
  });
  long bad = -1;
  if (why.empty()) bad = check_reduced(DataType::kFloat32, ReduceOp::kSum, ins, 0, download(out.ptr(), bytes), count, n, &why);
  ASSERT_ALL(bad == 0, "all_reduce, barrier, signal and wait from a thread on GPU " << other << " (the rank's is " << mine
                                                                                    << "): " << bad << " wrong; " << why);
  why = on_device_thread(other, [&] {
    stream::barrier(in, s);
    ctx()->synchronize(s, "barrier");
    c.free(in);
    c.free(out);
  });
  ASSERT_ALL(why.empty(), "free from a thread on GPU " << other << ": " << why);
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
}
