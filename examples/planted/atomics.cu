// PLANTED: atomic_contention.
// Histogram of n keys into `bins` (8) int32 counters: hist[key[i]] += 1, one atomicAdd per
// element straight to global memory. All ~1M atomics of the whole grid land on 8 words in one
// 32-byte sector, so the L2 slice that owns it applies them one after another while the rest of
// the GPU waits (RED.E.ADD with 8 distinct addresses per warp, no return value used).
// Loads are coalesced and tiny; there is no other work.
// The fix is privatization: a per-block histogram in shared memory (or warp aggregation with
// __match_any_sync / __reduce_add_sync), then one global atomic per bin per block.
extern "C" __global__ void atomics(int* hist, const int* key, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[key[i]], 1);
}
