// The harnesses' timing: each variant's launches timed with CUDA events after a 256 MB memset (the dirty L2 that
// triton.testing.do_bench's flush leaves), in rounds that interleave the variants.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

struct Variant {
  const char* name;
  void (*run)();
  std::vector<float> ms;
};

/// Times every variant `reps` times per round (the first 5 of a round as warm-up) and prints median, 10th percentile
/// and minimum in ms, then the CUDA error state.
inline void time_variants(std::vector<Variant>& vs, int rounds = 5, int reps = 40) {
  char* flush = nullptr;
  cudaMalloc(&flush, 256 << 20);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int round = 0; round < rounds; ++round)
    for (auto& v : vs)
      for (int it = 0; it < reps; ++it) {
        cudaMemsetAsync(flush, 0, 256 << 20);
        cudaEventRecord(e0);
        v.run();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (it >= 5) v.ms.push_back(ms);
      }
  for (auto& v : vs) {
    std::sort(v.ms.begin(), v.ms.end());
    printf("%-26s median %.4f  p10 %.4f  min %.4f ms\n", v.name, v.ms[v.ms.size() / 2], v.ms[v.ms.size() / 10],
           v.ms[0]);
  }
  printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
  cudaFree(flush);
}
