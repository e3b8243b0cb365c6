
// fused_sum_0: column_reduction, computes out0
// from graph nodes: sum
extern "C" __global__ void __launch_bounds__(1024) fused_sum_0(const float* __restrict__ in_ptr0, float* __restrict__ out_ptr1) {
  // 4 outputs per thread, 8 threads x 128 row slices per block
  const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
  for (int g0 = (int)blockIdx.x * 8; g0 < 128; g0 += (int)gridDim.x * 8) {
    const int g = g0 + tx;
    float acc_out0[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) acc_out0[j] = hi_sum_op::identity<float>();
    #pragma unroll 4
    for (int r = ty; r < 1024; r += 128) {
      float ld0[4];
      hi_load_vec<4, HI_EVICT_FIRST>(in_ptr0 + (g*4 + r*512), ld0);
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        acc_out0[j] = hi_sum_op::combine(acc_out0[j], (float)(ld0[j]));
      }
    }
    __shared__ float smem_out0[128][4][8];
    #pragma unroll
    for (int j = 0; j < 4; ++j) smem_out0[ty][j][tx] = acc_out0[j];
    __syncthreads();
    if (ty == 0) {
      #pragma unroll 1
      for (int y = 1; y < 128; ++y) {
        #pragma unroll
        for (int j = 0; j < 4; ++j) acc_out0[j] = hi_sum_op::combine(acc_out0[j], smem_out0[y][j][tx]);
      }
      float st1[4];
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        st1[j] = acc_out0[j];
      }
      hi_store_vec<4>(out_ptr1 + (g*4), st1);
    }
    __syncthreads();
  }
}
