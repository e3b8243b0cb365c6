
// fused_sum_0: column_reduction, computes out0
// from graph nodes: sum
extern "C" __global__ void __launch_bounds__(256) fused_sum_0(const float* __restrict__ in_ptr0, float* __restrict__ out_ptr1) {
  // 32 outputs x 8 row slices per block
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  for (int i0 = (int)blockIdx.x * 32; i0 < 512; i0 += (int)gridDim.x * 32) {
    const int i = i0 + tx;
    float acc_out0 = hi_sum_op::identity<float>();
    #pragma unroll 4
    for (int r = ty; r < 1024; r += 8) {
      const float t0 = in_ptr0[i + r*512];
      acc_out0 = hi_sum_op::combine(acc_out0, (float)(t0));
    }
    __shared__ float smem_out0[8][32];
    smem_out0[ty][tx] = acc_out0;
    __syncthreads();
    acc_out0 = smem_out0[0][tx];
    for (int y = 1; y < 8; ++y) acc_out0 = hi_sum_op::combine(acc_out0, smem_out0[y][tx]);
    const float v_out0 = acc_out0;
    if (ty == 0) out_ptr1[i] = acc_out0;
    __syncthreads();
  }
}
