
// fused_mul_slice_neg_cat_add_0: pointwise, computes out0
// from graph nodes: mul slice_1 neg slice cat mul_1 add
extern "C" __global__ void __launch_bounds__(128) fused_mul_slice_neg_cat_add_0(const hi_bfloat16* __restrict__ in_ptr0, const hi_bfloat16* __restrict__ in_ptr1, const hi_bfloat16* __restrict__ in_ptr2, hi_bfloat16* __restrict__ out_ptr3) {
  // 8 elements per vector group, 1 groups per thread
  for (int g0 = (int)blockIdx.x * 128 + threadIdx.x; g0 < 1024; g0 += (int)gridDim.x * 128) {
    hi_bfloat16 ld0[8];
    hi_bfloat16 ld1[8];
    hi_bfloat16 ld2[8];
    hi_bfloat16 ld3[8];
    #pragma unroll
    for (int e = 0; e < 1; ++e) {
      const int g = g0 + e * 128;
      hi_load_vec<8>(in_ptr0 + (g*8), &ld0[e * 8]);
      hi_load_vec<8>(in_ptr1 + (g*8), &ld1[e * 8]);
      hi_load_vec<8>(in_ptr2 + (g*8), &ld2[e * 8]);
      hi_load_vec<8>((((g % 16)*8) < 64) ? in_ptr0 + (g*8 + 64) : in_ptr0 + (g*8 - 64), &ld3[e * 8]);
    }
    hi_bfloat16 st4[8];
    #pragma unroll
    for (int q = 0; q < 8; ++q) {
      const int g = g0 + (q / 8) * 128;
      const int j = q % 8;
      const float t0 = (float)(hi_to_float(ld0[q]));
      const float t1 = (float)(hi_to_float(ld1[q]));
      const float t2 = t0 * t1;
      const float t3 = hi_round_bf16((float)(t2));
      const float t4 = (float)(t3);
      const float t5 = (float)(hi_to_float(ld3[q]));
      const float t6 = -t5;
      const float t7 = hi_round_bf16((float)(t6));
      const int t8 = (int)(j + (g % 16)*8);
      const int t9 = (int)(64);
      const bool t10 = t8 < t9;
      const float t11 = t10 ? t7 : hi_to_float(ld3[q]);
      const float t12 = (float)(t11);
      const float t13 = (float)(hi_to_float(ld2[q]));
      const float t14 = t12 * t13;
      const float t15 = hi_round_bf16((float)(t14));
      const float t16 = (float)(t15);
      const float t17 = t4 + t16;
      const float t18 = hi_round_bf16((float)(t17));
      const float v_out0 = t18;
      st4[q] = hi_make_bf16(t17);
    }
    #pragma unroll
    for (int e = 0; e < 1; ++e) {
      const int g = g0 + e * 128;
      hi_store_vec<8>(out_ptr3 + (g*8), &st4[e * 8]);
    }
  }
}
