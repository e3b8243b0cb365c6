
// fused_native_layer_norm_0: row_reduction, computes buf0 buf1 out0 out1 out2
// from graph nodes: native_layer_norm
extern "C" __global__ void __launch_bounds__(256) fused_native_layer_norm_0(const float* __restrict__ in_ptr0, const float* __restrict__ in_ptr1, const float* __restrict__ in_ptr2, float* __restrict__ out_ptr5, float* __restrict__ out_ptr6, float* __restrict__ out_ptr7) {
  for (int row = blockIdx.x; row < 64; row += gridDim.x) {
    // buf0: sum over the row
    float acc_buf0 = hi_sum_op::identity<float>();
    for (int col = threadIdx.x; col < 256; col += 256) {
      const float t0 = in_ptr0[col + row*256];
      acc_buf0 = hi_sum_op::combine(acc_buf0, (float)(t0));
    }
    __shared__ float smem_buf0[4];
    acc_buf0 = hi_block_reduce<hi_sum_op>(acc_buf0, smem_buf0);
    const float v_buf0 = acc_buf0;
    // buf1: sum over the row
    float acc_buf1 = hi_sum_op::identity<float>();
    for (int col = threadIdx.x; col < 256; col += 256) {
      const float t1 = in_ptr0[col + row*256];
      const float t2 = v_buf0 / 256.0f;
      const float t3 = t1 - t2;
      const float t4 = t3 * t3;
      acc_buf1 = hi_sum_op::combine(acc_buf1, (float)(t4));
    }
    __shared__ float smem_buf1[4];
    acc_buf1 = hi_block_reduce<hi_sum_op>(acc_buf1, smem_buf1);
    const float v_buf1 = acc_buf1;
    // out0: epilogue
    for (int col = threadIdx.x; col < 256; col += 256) {
      const float t5 = in_ptr0[col + row*256];
      const float t6 = v_buf0 / 256.0f;
      const float t7 = t5 - t6;
      const float t8 = v_buf1 / 256.0f;
      const float t9 = t8 + 1e-05f;
      const float t10 = hi_rsqrt(t9);
      const float t11 = t7 * t10;
      const float t12 = in_ptr1[col];
      const float t13 = t11 * t12;
      const float t14 = in_ptr2[col];
      const float t15 = t13 + t14;
      out_ptr5[col + row*256] = t15;
    }
    // out1: row epilogue
    const float t16 = v_buf0 / 256.0f;
    const float v_out1 = t16;
    if (threadIdx.x == 0) out_ptr6[row] = v_out1;
    // out2: row epilogue
    const float t17 = v_buf1 / 256.0f;
    const float t18 = t17 + 1e-05f;
    const float t19 = hi_rsqrt(t18);
    const float v_out2 = t19;
    if (threadIdx.x == 0) out_ptr7[row] = v_out2;
  }
}
