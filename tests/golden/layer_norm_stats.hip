
// fused_native_layer_norm_0: row_reduction, computes buf0 buf1 out0 out1 out2
// from graph nodes: native_layer_norm
extern "C" __global__ void __launch_bounds__(256) fused_native_layer_norm_0(const float* __restrict__ in_ptr0, const float* __restrict__ in_ptr1, const float* __restrict__ in_ptr2, float* __restrict__ out_ptr5, float* __restrict__ out_ptr6, float* __restrict__ out_ptr7) {
  // persistent rows: 64 threads per row, 4 values per thread in registers, 4 per vector access
  for (int row0 = (int)blockIdx.x * 4; row0 < 64; row0 += (int)gridDim.x * 4) {
    const int lane = threadIdx.x % 64;
    const bool row_ok = row0 + (int)(threadIdx.x / 64) < 64;
    const int row = row_ok ? row0 + (int)(threadIdx.x / 64) : 63;
    float ld0[4];
    #pragma unroll
    for (int e = 0; e < 1; ++e) {
      const int cg = e * 64 + lane;
      hi_load_vec<4>(in_ptr0 + (cg*4 + row*256), &ld0[e * 4]);
    }
    float cv1[4];
    // buf0: sum over the row
    float acc_buf0 = hi_sum_op::identity<float>();
    {
      #pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int cg = (q / 4) * 64 + lane;
        const int j = q % 4;
        acc_buf0 = hi_sum_op::combine(acc_buf0, (float)(ld0[q]));
      }
    }
    acc_buf0 = hi_group_reduce<hi_sum_op>(acc_buf0, 64);
    const float v_buf0 = acc_buf0;
    // buf1: sums of the deviations from the row's first mean, and of their squares
    hi_deviation_sums acc_buf1 = hi_deviation_sums_op::identity<hi_deviation_sums>();
    {
      #pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int cg = (q / 4) * 64 + lane;
        const int j = q % 4;
        const float t0 = hi_div(v_buf0, 256.0f);
        const float t1 = ld0[q] - t0;
        const float t2 = t1 * t1;
        acc_buf1 = hi_deviation_sums_op::combine(acc_buf1, hi_make_deviation_sums(t2, t1));
        cv1[q] = t1;
      }
    }
    acc_buf1 = hi_group_reduce<hi_deviation_sums_op>(acc_buf1, 64);
    const float t3 = hi_div(v_buf0, 256.0f);
    const float mean_buf1 = t3 + hi_div(acc_buf1.d, 256.0f);
    const float v_buf1 = hi_corrected_m2(acc_buf1, 256.0f);
    // out0: epilogue
    float st2[4];
    {
      float ld3[4];
      float ld4[4];
      #pragma unroll
      for (int e = 0; e < 1; ++e) {
        const int cg = e * 64 + lane;
        hi_load_vec<4, HI_EVICT_LAST>(in_ptr1 + (cg*4), &ld3[e * 4]);
        hi_load_vec<4, HI_EVICT_LAST>(in_ptr2 + (cg*4), &ld4[e * 4]);
      }
      #pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int cg = (q / 4) * 64 + lane;
        const int j = q % 4;
        const float t4 = ld0[q] - mean_buf1;
        const float t5 = hi_div(v_buf1, 256.0f);
        const float t6 = t5 + 1e-05f;
        const float t7 = hi_rsqrt(t6);
        const float t8 = t4 * t7;
        const float t9 = t8 * ld3[q];
        const float t10 = t9 + ld4[q];
        const float v_out0 = t10;
        st2[q] = t10;
      }
    }
    #pragma unroll
    for (int e = 0; e < 1; ++e) {
      const int cg = e * 64 + lane;
      if (row_ok) hi_store_vec<4>(out_ptr5 + (cg*4 + row*256), &st2[e * 4]);
    }
    // out1: row epilogue
    const float v_out1 = mean_buf1;
    if (lane == 0 && row_ok) out_ptr6[row] = v_out1;
    // out2: row epilogue
    const float t11 = hi_div(v_buf1, 256.0f);
    const float t12 = t11 + 1e-05f;
    const float t13 = hi_rsqrt(t12);
    const float v_out2 = t13;
    if (lane == 0 && row_ok) out_ptr7[row] = v_out2;
  }
}
