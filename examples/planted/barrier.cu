// PLANTED: barrier_stall.
// y[i] = x[i] + sum over steps of chain[i % 32] (mod 2^28).
// Per block: warp 0 runs a long dependent integer hash chain (K rounds of v = v * A + (v >> 15)
// per step, ~2 dependent instructions per round) and publishes one value per lane in shared
// memory; then all warps meet at __syncthreads, every thread adds the published value to its
// own accumulator, and all meet again. That repeats `steps` times. While warp 0 hashes, the
// other warps of the block (15 of 16 at the default 512 threads) sit at the barrier: ~15/16 of
// warp stall samples are "barrier", issue slots are mostly idle (one busy warp per
// scheduler), and no pipe or memory level is high.
// The fix is to spread the chain work across all warps (or pipeline it so the waiters do
// useful work), not to touch memory or occupancy.
#ifndef K
#define K 64
#endif

extern "C" __global__ void barrier(unsigned* y, const unsigned* x, int n, int steps, int k,
                                   unsigned seed)
{
    __shared__ unsigned published[32];
    if (k != K) return;  // the reference is told K through `k`; a mismatch fails
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    unsigned acc = gid < n ? x[gid] : 0u;
    // warp 0's chain for lane l starts from seed + l * golden (a run-time value, so nothing is
    // precomputed); every block runs the same 32 chains, so y does not depend on BLOCK.
    unsigned v = seed + (unsigned)lane * 0x9E3779B9u;

    for (int s = 0; s < steps; ++s) {
        if (threadIdx.x < 32) {          // the long work: warp 0 only
#pragma unroll 16
            for (int r = 0; r < K; ++r) v = v * 2654435761u + (v >> 15);
            published[lane] = v;
        }
        __syncthreads();                 // all other warps wait here for warp 0
        acc += published[lane];
        __syncthreads();                 // keep warp 0 from overwriting before all have read
    }
    if (gid < n) y[gid] = acc & 0x0fffffffu;  // < 2^28: never the harness's poison value
}
