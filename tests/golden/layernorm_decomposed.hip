
// fused_var_mean_sub_add_rsqrt_mul_0: row_reduction, computes buf0 buf1 out0
// from graph nodes: var_mean sub add rsqrt mul mul_1 add_1
extern "C" __global__ void __launch_bounds__(256) fused_var_mean_sub_add_rsqrt_mul_0(const float* __restrict__ in_ptr0, const float* __restrict__ in_ptr1, const float* __restrict__ in_ptr2, float* __restrict__ out_ptr5) {
  // persistent rows: 64 threads per row, 12 values per thread in registers, 4 per vector access
  for (int row0 = (int)blockIdx.x * 4; row0 < 128; row0 += (int)gridDim.x * 4) {
    const int lane = threadIdx.x % 64;
    const bool row_ok = row0 + (int)(threadIdx.x / 64) < 128;
    const int row = row_ok ? row0 + (int)(threadIdx.x / 64) : 127;
    float ld0[12];
    #pragma unroll
    for (int e = 0; e < 3; ++e) {
      const int cg = e * 64 + lane;
      hi_load_vec<4>(in_ptr0 + (cg*4 + row*768), &ld0[e * 4]);
    }
    float cv1[12];
    // buf0: sum over the row
    float acc_buf0 = hi_sum_op::identity<float>();
    {
      #pragma unroll
      for (int q = 0; q < 12; ++q) {
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
      for (int q = 0; q < 12; ++q) {
        const int cg = (q / 4) * 64 + lane;
        const int j = q % 4;
        const float t0 = hi_div(v_buf0, 768.0f);
        const float t1 = ld0[q] - t0;
        const float t2 = t1 * t1;
        acc_buf1 = hi_deviation_sums_op::combine(acc_buf1, hi_make_deviation_sums(t2, t1));
        cv1[q] = t1;
      }
    }
    acc_buf1 = hi_group_reduce<hi_deviation_sums_op>(acc_buf1, 64);
    const float t3 = hi_div(v_buf0, 768.0f);
    const float mean_buf1 = t3 + hi_div(acc_buf1.d, 768.0f);
    const float v_buf1 = hi_corrected_m2(acc_buf1, 768.0f);
    // out0: epilogue
    float st2[12];
    {
      float ld3[12];
      float ld4[12];
      #pragma unroll
      for (int e = 0; e < 3; ++e) {
        const int cg = e * 64 + lane;
        hi_load_vec<4, HI_EVICT_LAST>(in_ptr1 + (cg*4), &ld3[e * 4]);
        hi_load_vec<4, HI_EVICT_LAST>(in_ptr2 + (cg*4), &ld4[e * 4]);
      }
      #pragma unroll
      for (int q = 0; q < 12; ++q) {
        const int cg = (q / 4) * 64 + lane;
        const int j = q % 4;
        const float t4 = ld0[q] - mean_buf1;
        const float t5 = hi_div(v_buf1, 768.0f);
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
    for (int e = 0; e < 3; ++e) {
      const int cg = e * 64 + lane;
      if (row_ok) hi_store_vec<4>(out_ptr5 + (cg*4 + row*768), &st2[e * 4]);
    }
  }
}
