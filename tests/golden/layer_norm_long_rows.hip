
// fused_native_layer_norm_0: row_reduction, computes buf0 buf1 out0 out1 out2
// from graph nodes: native_layer_norm
extern "C" __global__ void __launch_bounds__(1024) fused_native_layer_norm_0(const float* __restrict__ in_ptr0, const float* __restrict__ in_ptr1, const float* __restrict__ in_ptr2, float* __restrict__ out_ptr5, float* __restrict__ out_ptr6, float* __restrict__ out_ptr7) {
  for (int row = blockIdx.x; row < 512; row += gridDim.x) {
    // buf0, buf1: sum and sum of squared deviations over the row in one pass
    hi_welford_acc acc_buf0 = hi_welford_op::identity<hi_welford_acc>();
    float sum_buf0 = 0.0f;
    for (int cg = threadIdx.x; cg < 16384; cg += 1024) {
      float ld0[4];
      hi_load_vec<4, HI_EVICT_LAST>(in_ptr0 + (cg*4 + row*65536), ld0);
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        acc_buf0 = hi_welford_op::add(acc_buf0, (float)(ld0[j]));
        sum_buf0 += (float)(ld0[j]);
      }
    }
    __shared__ hi_welford_acc smem_buf0[16];
    acc_buf0 = hi_block_reduce<hi_welford_op>(acc_buf0, smem_buf0);
    __shared__ float smem_sum_buf0[16];
    sum_buf0 = hi_block_reduce<hi_sum_op>(sum_buf0, smem_sum_buf0);
    const float v_buf0 = sum_buf0;
    const float v_buf1 = acc_buf0.m2;
    // out0: epilogue
    for (int cg = threadIdx.x; cg < 16384; cg += 1024) {
      float ld1[4];
      hi_load_vec<4, HI_EVICT_LAST>(in_ptr0 + (cg*4 + row*65536), ld1);
      float ld2[4];
      hi_load_vec<4, HI_EVICT_LAST>(in_ptr1 + (cg*4), ld2);
      float ld3[4];
      hi_load_vec<4, HI_EVICT_LAST>(in_ptr2 + (cg*4), ld3);
      float st4[4];
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float t0 = ld1[j] - acc_buf0.mean;
        const float t1 = hi_div(v_buf1, 65536.0f);
        const float t2 = t1 + 1e-05f;
        const float t3 = hi_rsqrt(t2);
        const float t4 = t0 * t3;
        const float t5 = t4 * ld2[j];
        const float t6 = t5 + ld3[j];
        st4[j] = t6;
      }
      hi_store_vec<4>(out_ptr5 + (cg*4 + row*65536), st4);
    }
    // out1: row epilogue
    const float v_out1 = acc_buf0.mean;
    if (threadIdx.x == 0) out_ptr6[row] = v_out1;
    // out2: row epilogue
    const float t7 = hi_div(v_buf1, 65536.0f);
    const float t8 = t7 + 1e-05f;
    const float t9 = hi_rsqrt(t8);
    const float v_out2 = t9;
    if (threadIdx.x == 0) out_ptr7[row] = v_out2;
  }
}
