// CORPUS (second hold-out) local_memory: each thread insertion-sorts its own 16 values in a
// per-thread array; the insertion position depends on the data, so the array is indexed at run
// time and lives on the stack (no spills), every compare and shift a local access.
extern "C" __global__ void local_sort(float* y, const float* x, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float v[16];
    int len = 0;
    for (int j = 0; j < 16; ++j) {
        const float e = x[(long long)j * n + t];  // coalesced: column j of a [16, n] array
        int p = len;
        while (p > 0 && v[p - 1] > e) { v[p] = v[p - 1]; --p; }
        v[p] = e;
        ++len;
    }
    float s = 0.0f;
    for (int j = 0; j < 16; ++j) s = fmaf(s, 0.5f, v[j]);
    y[t] = s;
}
