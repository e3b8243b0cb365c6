
// fused_gelu_0: pointwise, computes out0
// from graph nodes: gelu
extern "C" __global__ void __launch_bounds__(256) fused_gelu_0(const hi_bfloat16* __restrict__ in_ptr0, hi_bfloat16* __restrict__ out_ptr1) {
  for (int i = (int)blockIdx.x * 256 + threadIdx.x; i < 32768; i += (int)gridDim.x * 256) {
    const float t0 = hi_to_float(in_ptr0[i]);
    const float t1 = (float)(t0);
    const float t2 = hi_gelu_tanh(t1);
    const float t3 = hi_round_bf16((float)(t2));
    out_ptr1[i] = hi_make_bf16(t3);
  }
}
