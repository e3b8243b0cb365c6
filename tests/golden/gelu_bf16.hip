
// fused_gelu_0: pointwise, computes out0
// from graph nodes: gelu
extern "C" __global__ void __launch_bounds__(128) fused_gelu_0(const hi_bfloat16* __restrict__ in_ptr0, hi_bfloat16* __restrict__ out_ptr1) {
  // 8 elements per vector group, 2 groups per thread
  for (int g0 = (int)blockIdx.x * 256 + threadIdx.x; g0 < 262144; g0 += (int)gridDim.x * 256) {
    hi_bfloat16 ld0[16];
    #pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int g = g0 + e * 128;
      hi_load_vec<8>(in_ptr0 + (g*8), &ld0[e * 8]);
    }
    hi_bfloat16 st1[16];
    #pragma unroll
    for (int q = 0; q < 16; ++q) {
      const int g = g0 + (q / 8) * 128;
      const int j = q % 8;
      const float t0 = (float)(hi_to_float(ld0[q]));
      const float t1 = hi_gelu_tanh(t0);
      const float t2 = hi_round_bf16((float)(t1));
      const float v_out0 = t2;
      st1[q] = hi_make_bf16(t1);
    }
    #pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int g = g0 + e * 128;
      hi_store_vec<8>(out_ptr1 + (g*8), &st1[e * 8]);
    }
  }
}
