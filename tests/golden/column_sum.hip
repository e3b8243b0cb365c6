
// fused_sum_0: column_reduction, computes out0
// from graph nodes: sum
extern "C" __global__ void __launch_bounds__(256) fused_sum_0(const float* __restrict__ in_ptr0, float* __restrict__ out_ptr1) {
  for (int i = (int)blockIdx.x * 256 + threadIdx.x; i < 512; i += (int)gridDim.x * 256) {
    float acc_out0 = hi_sum_op::identity<float>();
    for (int r = 0; r < 1024; ++r) {
      const float t0 = in_ptr0[i + r*512];
      acc_out0 = hi_sum_op::combine(acc_out0, (float)(t0));
    }
    out_ptr1[i] = acc_out0;
  }
}
