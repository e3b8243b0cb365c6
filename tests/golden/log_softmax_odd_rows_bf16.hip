
// fused_log_softmax_0: row_reduction, computes buf0 buf1 out0
// from graph nodes: _log_softmax
extern "C" __global__ void __launch_bounds__(1024) fused_log_softmax_0(const hi_bfloat16* __restrict__ in_ptr0, hi_bfloat16* __restrict__ out_ptr3) {
  for (int row = blockIdx.x; row < 512; row += gridDim.x) {
    const int head = (int)((8 - (row*50257) % 8) % 8);
    const int ngroups = (50257 - head) / 8;
    // buf0, buf1: max and sum of exp(x - max) over the row in one pass
    hi_softmax_acc acc_buf0 = hi_online_softmax_op<1>::identity<hi_softmax_acc>();
    if (threadIdx.x < 50257 - ngroups * 8) {
      const int col = threadIdx.x < head ? (int)threadIdx.x : (int)threadIdx.x + ngroups * 8;
      const float t0 = hi_to_float(in_ptr0[col + row*50257]);
      const float t1 = (float)(t0);
      acc_buf0 = hi_online_softmax_op<1>::add(acc_buf0, (float)(t1));
    }
    for (int cg = threadIdx.x; cg < ngroups; cg += 1024) {
      hi_bfloat16 ld0[8];
      hi_load_vec<8, HI_EVICT_LAST>(in_ptr0 + (cg*8 + head + row*50257), ld0);
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float t2 = (float)(hi_to_float(ld0[j]));
        acc_buf0 = hi_online_softmax_op<1>::add(acc_buf0, (float)(t2));
      }
    }
    __shared__ hi_softmax_acc smem_buf0[16];
    acc_buf0 = hi_online_softmax_op<1>::finish(hi_block_reduce<hi_online_softmax_op<1>>(acc_buf0, smem_buf0));
    const float v_buf0 = acc_buf0.m;
    const float v_buf1 = acc_buf0.s;
    // out0: epilogue
    if (threadIdx.x < 50257 - ngroups * 8) {
      const int col = threadIdx.x < head ? (int)threadIdx.x : (int)threadIdx.x + ngroups * 8;
      const float t3 = hi_to_float(in_ptr0[col + row*50257]);
      const float t4 = (float)(t3);
      const float t5 = t4 - v_buf0;
      const float t6 = hi_log(v_buf1);
      const float t7 = t5 - t6;
      out_ptr3[col + row*50257] = hi_make_bf16(t7);
    }
    for (int cg = threadIdx.x; cg < ngroups; cg += 1024) {
      hi_bfloat16 ld1[8];
      hi_load_vec<8, HI_EVICT_LAST>(in_ptr0 + (cg*8 + head + row*50257), ld1);
      hi_bfloat16 st2[8];
      #pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float t8 = (float)(hi_to_float(ld1[j]));
        const float t9 = t8 - v_buf0;
        const float t10 = hi_log(v_buf1);
        const float t11 = t9 - t10;
        st2[j] = hi_make_bf16(t11);
      }
      hi_store_vec<8>(out_ptr3 + (cg*8 + head + row*50257), st2);
    }
  }
}
