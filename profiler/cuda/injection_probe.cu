// A PyTorch-free CUDA program for scripts/gpu-check (the injection library's acceptance): two
// "layers", each with a forward, a B and a W range named as ppsim reads them
// ("<layer>/<pass>/<microbatch>"), launching kernels of known relative length, for three
// iterations. Each forward allocates its layer's stash with cudaMalloc (layer + 1 MiB) and W frees
// it. Profiled through ppsim's injection library it must give rows for layers 0 and 1 with F, B and
// W, W about twice B and B about twice F, and activation bytes of 1 and 2 MiB (from CUPTI's
// allocation records).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <string>

__global__ void spin(float *out, int rounds) {
  float value = static_cast<float>(threadIdx.x);
  for (int i = 0; i < rounds; ++i)
    value = value * 0.999f + 0.001f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}

int main() {
  float *buffer = nullptr;
  if (const cudaError_t error = cudaMalloc(&buffer, 1 << 20); error != cudaSuccess) {
    std::fprintf(stderr, "ppsim_injection_probe: cudaMalloc failed: %s\n",
                 cudaGetErrorString(error));
    return 1;
  }
  const char *passes[] = {"F", "B", "W"};
  void *stash[2] = {nullptr, nullptr};
  for (int iteration = 0; iteration < 3; ++iteration) {
    for (int layer = 0; layer < 2; ++layer) {
      for (int pass = 0; pass < 3; ++pass) {
        const std::string name = std::to_string(layer) + "/" + passes[pass] + "/0";
        nvtxRangePushA(name.c_str());
        if (pass == 0 && cudaMalloc(&stash[layer], (layer + 1u) << 20) != cudaSuccess)
          return 1;
        spin<<<64, 256>>>(buffer, 200000 << pass); // F : B : W = 1 : 2 : 4
        if (pass == 2)
          cudaFree(stash[layer]);
        nvtxRangePop();
      }
    }
  }
  const bool ok = cudaDeviceSynchronize() == cudaSuccess;
  cudaFree(buffer);
  return ok ? 0 : 1;
}
