
// fused_gelu_0: pointwise, computes out0
// from graph nodes: gelu
extern "C" __global__ void __launch_bounds__(256) fused_gelu_0(const hi_bfloat16* __restrict__ in_ptr0, hi_bfloat16* __restrict__ out_ptr1) {
  // 8 elements per vector group
  for (int g = (int)blockIdx.x * 256 + threadIdx.x; g < 4096; g += (int)gridDim.x * 256) {
    hi_bfloat16 ld0[8];
    hi_load_vec<8>(in_ptr0 + (g*8), ld0);
    hi_bfloat16 st1[8];
    #pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float t0 = (float)(hi_to_float(ld0[j]));
      const float t1 = hi_gelu_tanh(t0);
      const float t2 = hi_round_bf16((float)(t1));
      const float v_out0 = t2;
      st1[j] = hi_make_bf16(v_out0);
    }
    hi_store_vec<8>(out_ptr1 + (g*8), st1);
  }
}
