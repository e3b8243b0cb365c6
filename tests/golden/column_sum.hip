
// fused_sum_0: column_reduction, computes out0
// from graph nodes: sum
extern "C" __global__ void __launch_bounds__(256) fused_sum_0(const float* __restrict__ in_ptr0, float* __restrict__ out_ptr1) {
  // 4 outputs per thread
  for (int g = (int)blockIdx.x * 256 + threadIdx.x; g < 128; g += (int)gridDim.x * 256) {
    float acc_out0[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) acc_out0[j] = hi_sum_op::identity<float>();
    #pragma unroll 4
    for (int r = 0; r < 1024; ++r) {
      float ld0[4];
      hi_load_vec<4>(in_ptr0 + (g*4 + r*512), ld0);
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        acc_out0[j] = hi_sum_op::combine(acc_out0[j], (float)(ld0[j]));
      }
    }
    float st1[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
      st1[j] = acc_out0[j];
    }
    hi_store_vec<4>(out_ptr1 + (g*4), st1);
  }
}
