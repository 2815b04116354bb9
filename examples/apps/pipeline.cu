// A small "application" for triage at application scale (issue 16): 22 kernel groups, some of
// them template instantiations of one function, each launched LAUNCHES times, the way a model's
// forward pass launches the same kernels layer after layer. Built twice from this one file:
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o pipeline_base pipeline.cu
//   nvcc -O3 -arch=sm_90 -lineinfo -DNEW -o pipeline_new pipeline.cu
//
// NEW differs from BASE in exactly these ways (examples/apps/README.md):
//   row_mean        regression: each lane walks its own contiguous chunk of the row, so the
//                   32 lanes of a warp read 32 different sectors per request (uncoalesced)
//   histogram256    regression: per-block shared-memory histograms replaced by a global
//                   atomicAdd per element on skewed data (atomic contention)
//   norm_scale      improvement: a grid of 32 blocks (grid-stride) replaced by one thread per
//                   element (the small grid fixed)
//   relu_block<B>   template argument changed, 256 -> 512 threads per block: no cost change
//   legacy_norm     removed;   fused_norm added
//   launch order    BASE runs layer by layer (every kernel once per layer); NEW runs each
//                   kernel's launches back to back
// Everything else is the same code at the same launch. Inputs are seeded random, made on the
// host (no generator kernels in the profile); every launch is checked for errors.
//
// Fixes of BASE, for checking explain's estimated savings against measured ones
// (tools/gpu_explain_check.sh), each a build flag, the kernel fixed the way explain says:
//   -DFIX_NORM_SCALE   norm_scale's small grid: one thread per element (as NEW)
//   -DFIX_SGEMM_SMALL  sgemm_small_fixed: 32x32 tiles, K in steps of 32, 2x2 outputs a thread
//                      (4 shared loads per 4 FMAs instead of 2 per 1)
//   -DFIX_SILU_MUL     silu_mul_vec4: 16-byte loads and stores (more bytes in flight)
// `./pipeline_base 10 time` times the whole application with CUDA events (median of 5 after a
// warm-up pass); `./pipeline_base 1 check` checks the fixed kernels against the originals.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                     \
                         cudaGetErrorString(err_));                                     \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

constexpr int N = 1 << 23;          // elements of the elementwise tensors (32 MB in fp32)
constexpr int ROWS = 8192, COLS = 1024;   // row-wise kernels: [ROWS, COLS] = N elements
constexpr int GEMM = 512;
constexpr int BINS = 256;

// ---- elementwise ------------------------------------------------------------------------------
template <int K>
__global__ void scale(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * (float)K + 1.0f;
}

__global__ void axpy(float* y, const float* x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) relu_block(float* y, const float* x, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

__global__ void silu_mul(float* y, const float* gate, const float* up, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float g = gate[i];
        y[i] = g / (1.0f + __expf(-g)) * up[i];
    }
}

__global__ void gelu_tanh(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}

__global__ void clamp_range(float* y, const float* x, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}

__global__ void stencil3(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) y[i] = 0.25f * x[i - 1] + 0.5f * x[i] + 0.25f * x[i + 1];
}

template <int DEG>
__global__ void poly(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i], r = 0.1f;
#pragma unroll 4
        for (int d = 0; d < DEG; ++d) r = fmaf(r, v, 0.3f);
        y[i] = r;
    }
}

// ---- row-wise ----------------------------------------------------------------------------------
__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// One warp per row, 8 rows per 256-thread block.
__global__ void row_mean(float* out, const float* x, int rows, int cols)
{
    int row = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* r = x + (size_t)row * cols;
    float s = 0.0f;
#ifndef NEW
    for (int c = lane; c < cols; c += 32) s += r[c];              // lanes side by side
#else
    int chunk = cols / 32;
    for (int c = lane * chunk; c < (lane + 1) * chunk; ++c) s += r[c];  // lanes chunk apart
#endif
    s = warp_sum(s);
    if (lane == 0) out[row] = s / cols;
}

// One block of 256 threads per row.
__global__ void softmax_rows(float* y, const float* x, int cols)
{
    __shared__ float red[8];
    const float* r = x + (size_t)blockIdx.x * cols;
    float* o = y + (size_t)blockIdx.x * cols;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += 256) m = fmaxf(m, r[c]);
    m = warp_max(m);
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = warp_max(lane < 8 ? red[lane] : -INFINITY);
    __syncthreads();
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 256) s += __expf(r[c] - m);
    s = warp_sum(s);
    if (lane == 0) red[warp] = s;
    __syncthreads();
    s = warp_sum(lane < 8 ? red[lane] : 0.0f);
    for (int c = threadIdx.x; c < cols; c += 256) o[c] = __expf(r[c] - m) / s;
}

__device__ float block_sum_256(float v, float* red)
{
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    return warp_sum(lane < 8 ? red[lane] : 0.0f);
}

__global__ void layernorm_rows(float* y, const float* x, const float* gamma, int cols)
{
    __shared__ float red[8];
    const float* r = x + (size_t)blockIdx.x * cols;
    float* o = y + (size_t)blockIdx.x * cols;
    float s = 0.0f, q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 256) {
        float v = r[c];
        s += v;
        q += v * v;
    }
    float mean = block_sum_256(s, red) / cols;
    float var = block_sum_256(q, red) / cols - mean * mean;
    float inv = rsqrtf(var + 1e-5f);
    for (int c = threadIdx.x; c < cols; c += 256) o[c] = (r[c] - mean) * inv * gamma[c];
}

#ifndef NEW
__global__ void legacy_norm(float* y, const float* x, int cols)   // two passes over the row
{
    __shared__ float red[8];
    const float* r = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 256) s += r[c] * r[c];
    float inv = rsqrtf(block_sum_256(s, red) / cols + 1e-6f);
    for (int c = threadIdx.x; c < cols; c += 256) y[(size_t)blockIdx.x * cols + c] = r[c] * inv;
}
#else
__global__ void fused_norm(float* y, const float* x, int cols)    // the row kept in registers
{
    __shared__ float red[8];
    const float* r = x + (size_t)blockIdx.x * cols;
    float v[4], s = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        v[k] = r[threadIdx.x + 256 * k];
        s += v[k] * v[k];
    }
    float inv = rsqrtf(block_sum_256(s, red) / cols + 1e-6f);
#pragma unroll
    for (int k = 0; k < 4; ++k) y[(size_t)blockIdx.x * cols + threadIdx.x + 256 * k] = v[k] * inv;
}
#endif

// One warp per row of A [ROWS, COLS]: y = A x.
__global__ void matvec(float* y, const float* a, const float* x, int rows, int cols)
{
    int row = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += a[(size_t)row * cols + c] * x[c];
    s = warp_sum(s);
    if (lane == 0) y[row] = s;
}

// ---- tiled -------------------------------------------------------------------------------------
__global__ void transpose_tiled(float* y, const float* x, int rows, int cols)
{
    __shared__ float tile[32][33];
    int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * 32;
    for (int k = threadIdx.y; k < 32; k += 8) tile[k][threadIdx.x] = x[(size_t)(r0 + k) * cols + c];
    __syncthreads();
    int oc = r0 + threadIdx.x, or0 = blockIdx.x * 32;
    for (int k = threadIdx.y; k < 32; k += 8) y[(size_t)(or0 + k) * rows + oc] = tile[threadIdx.x][k];
}

__global__ void sgemm_small(float* c, const float* a, const float* b, int n)
{
    __shared__ float as[16][16], bs[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 16) {
        as[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}

// ---- reductions and atomics ---------------------------------------------------------------------
__global__ void dot_partial(float* out, const float* x, const float* y, int n)
{
    __shared__ float red[8];
    float s = 0.0f;
    for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256) s += x[i] * y[i];
    s = block_sum_256(s, red);
    if (threadIdx.x == 0) atomicAdd(out, s);
}

__global__ void histogram256(unsigned* hist, const unsigned char* v, int n)
{
#ifndef NEW
    __shared__ unsigned local[BINS];
    local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256)
        atomicAdd(&local[v[i]], 1u);
    __syncthreads();
    if (local[threadIdx.x]) atomicAdd(&hist[threadIdx.x], local[threadIdx.x]);
#else
    for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256)
        atomicAdd(&hist[v[i]], 1u);
#endif
}

// ---- the planted improvement --------------------------------------------------------------------
__global__ void norm_scale(float* y, const float* x, float s, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = x[i] * s + 0.5f * y[i];
}

// ---- fixes (see the top of the file) -------------------------------------------------------------
__global__ void __launch_bounds__(256) sgemm_small_fixed(float* c, const float* a, const float* b,
                                                         int n)
{
    __shared__ float as[32][33], bs[32][32];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int row0 = blockIdx.y * 32, col0 = blockIdx.x * 32;
    float c00 = 0.0f, c01 = 0.0f, c10 = 0.0f, c11 = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 32) {
        for (int e = threadIdx.x; e < 32 * 32; e += 256) {
            int r = e / 32, col = e % 32;
            as[r][col] = a[(row0 + r) * n + k0 + col];
            bs[r][col] = b[(k0 + r) * n + col0 + col];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 32; ++k) {
            float a0 = as[ty][k], a1 = as[ty + 16][k], b0 = bs[k][tx], b1 = bs[k][tx + 16];
            c00 += a0 * b0;
            c01 += a0 * b1;
            c10 += a1 * b0;
            c11 += a1 * b1;
        }
        __syncthreads();
    }
    c[(row0 + ty) * n + col0 + tx] = c00;
    c[(row0 + ty) * n + col0 + tx + 16] = c01;
    c[(row0 + ty + 16) * n + col0 + tx] = c10;
    c[(row0 + ty + 16) * n + col0 + tx + 16] = c11;
}

__device__ __forceinline__ float silu_times(float g, float u)
{
    return g / (1.0f + __expf(-g)) * u;
}

__global__ void silu_mul_vec4(float4* y, const float4* gate, const float4* up, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 g = gate[i], u = up[i];
        y[i] = make_float4(silu_times(g.x, u.x), silu_times(g.y, u.y), silu_times(g.z, u.z),
                           silu_times(g.w, u.w));
    }
}

// ---- the application ----------------------------------------------------------------------------
struct Buffers {
    float *x, *y, *z, *w, *small, *gamma;
    unsigned char* bytes;
    unsigned* hist;
};

static float* upload_random(size_t n, unsigned seed, float lo, float hi)
{
    std::vector<float> h(n);
    unsigned s = seed * 2654435761u + 1u;
    for (auto& v : h) {
        s = s * 1664525u + 1013904223u;
        v = lo + (hi - lo) * ((s >> 8) * (1.0f / 16777216.0f));
    }
    float* d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static unsigned char* upload_skewed_bytes(size_t n, unsigned seed)
{
    // Skewed like real data (token ids, quantized values): 3 of 4 values fall in 8 bins.
    std::vector<unsigned char> h(n);
    unsigned s = seed;
    for (auto& v : h) {
        s = s * 1664525u + 1013904223u;
        v = (s >> 24) < 192 ? (unsigned char)(100 + ((s >> 8) & 7)) : (unsigned char)(s >> 16);
    }
    unsigned char* d = nullptr;
    CHECK(cudaMalloc(&d, n));
    CHECK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
    return d;
}

using Launch = std::pair<std::string, std::function<void()>>;

static std::vector<Launch> kernels(const Buffers& b)
{
    const int blocks = N / 256;
    std::vector<Launch> k;
    k.push_back({"scale<1>", [=] { scale<1><<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"scale<2>", [=] { scale<2><<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"scale<3>", [=] { scale<3><<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"scale<4>", [=] { scale<4><<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"axpy", [=] { axpy<<<blocks, 256>>>(b.y, b.x, 0.5f, N); }});
#ifndef NEW
    k.push_back({"relu_block", [=] { relu_block<256><<<N / 256, 256>>>(b.y, b.x, N); }});
#else
    k.push_back({"relu_block", [=] { relu_block<512><<<N / 512, 512>>>(b.y, b.x, N); }});
#endif
#ifndef FIX_SILU_MUL
    k.push_back({"silu_mul", [=] { silu_mul<<<blocks, 256>>>(b.y, b.x, b.z, N); }});
#else
    k.push_back({"silu_mul", [=] {
        silu_mul_vec4<<<N / 4 / 256, 256>>>((float4*)b.y, (const float4*)b.x,
                                            (const float4*)b.z, N / 4);
    }});
#endif
    k.push_back({"gelu_tanh", [=] { gelu_tanh<<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"clamp_range", [=] { clamp_range<<<blocks, 256>>>(b.y, b.x, -0.5f, 0.5f, N); }});
    k.push_back({"stencil3", [=] { stencil3<<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"poly<8>", [=] { poly<8><<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"poly<64>", [=] { poly<64><<<blocks, 256>>>(b.y, b.x, N); }});
    k.push_back({"row_mean", [=] { row_mean<<<ROWS / 8, 256>>>(b.small, b.x, ROWS, COLS); }});
    k.push_back({"softmax_rows", [=] { softmax_rows<<<ROWS, 256>>>(b.y, b.x, COLS); }});
    k.push_back({"layernorm_rows",
                 [=] { layernorm_rows<<<ROWS, 256>>>(b.y, b.x, b.gamma, COLS); }});
#ifndef NEW
    k.push_back({"legacy_norm", [=] { legacy_norm<<<ROWS, 256>>>(b.y, b.x, COLS); }});
#else
    k.push_back({"fused_norm", [=] { fused_norm<<<ROWS, 256>>>(b.y, b.x, COLS); }});
#endif
    k.push_back({"matvec", [=] { matvec<<<ROWS / 8, 256>>>(b.small, b.x, b.w, ROWS, COLS); }});
    k.push_back({"transpose_tiled", [=] {
        transpose_tiled<<<dim3(COLS / 32, ROWS / 32), dim3(32, 8)>>>(b.y, b.x, ROWS, COLS);
    }});
#ifndef FIX_SGEMM_SMALL
    k.push_back({"sgemm_small", [=] {
        sgemm_small<<<dim3(GEMM / 16, GEMM / 16), dim3(16, 16)>>>(b.y, b.x, b.z, GEMM);
    }});
#else
    k.push_back({"sgemm_small", [=] {
        sgemm_small_fixed<<<dim3(GEMM / 32, GEMM / 32), 256>>>(b.y, b.x, b.z, GEMM);
    }});
#endif
    k.push_back({"dot_partial", [=] { dot_partial<<<1024, 256>>>(b.small, b.x, b.z, N); }});
    k.push_back({"histogram256", [=] { histogram256<<<1024, 256>>>(b.hist, b.bytes, N); }});
#if !defined(NEW) && !defined(FIX_NORM_SCALE)
    k.push_back({"norm_scale", [=] { norm_scale<<<32, 256>>>(b.y, b.x, 0.9f, N); }});
#else
    k.push_back({"norm_scale", [=] { norm_scale<<<N / 256, 256>>>(b.y, b.x, 0.9f, N); }});
#endif
    return k;
}

static void run_all(std::vector<Launch>& ks, int launches, int* total)
{
#ifndef NEW
    for (int layer = 0; layer < launches; ++layer)       // layer by layer
        for (auto& [name, launch] : ks) {
#else
    for (auto& [name, launch] : ks)                      // each kernel's launches together
        for (int layer = 0; layer < launches; ++layer) {
#endif
            launch();
            CHECK(cudaGetLastError());
            ++*total;
        }
}

// The application's GPU time by CUDA events: one warm-up pass, then the median of 5.
static void time_all(std::vector<Launch>& ks, int launches)
{
    int total = 0;
    run_all(ks, 1, &total);
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> ms(5);
    for (auto& m : ms) {
        CHECK(cudaEventRecord(start));
        run_all(ks, launches, &total);
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&m, start, stop));
    }
    std::vector<float> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    std::printf("app_ms %.4f (runs:", sorted[2]);
    for (float m : ms) std::printf(" %.4f", m);
    std::printf(")\n");
}

static float max_diff(const float* d1, const float* d2, size_t n)
{
    std::vector<float> h1(n), h2(n);
    CHECK(cudaMemcpy(h1.data(), d1, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h2.data(), d2, n * sizeof(float), cudaMemcpyDeviceToHost));
    float worst = 0.0f;
    for (size_t i = 0; i < n; ++i) worst = std::fmax(worst, std::fabs(h1[i] - h2[i]));
    return worst;
}

// The fixed kernels against the originals on the same inputs.
static int check_fixes(const Buffers& b)
{
    float* out = upload_random(N, 9, 0.0f, 0.0f);
    sgemm_small<<<dim3(GEMM / 16, GEMM / 16), dim3(16, 16)>>>(b.y, b.x, b.z, GEMM);
    sgemm_small_fixed<<<dim3(GEMM / 32, GEMM / 32), 256>>>(out, b.x, b.z, GEMM);
    CHECK(cudaDeviceSynchronize());
    float sgemm = max_diff(b.y, out, (size_t)GEMM * GEMM);
    silu_mul<<<N / 256, 256>>>(b.y, b.x, b.z, N);
    silu_mul_vec4<<<N / 4 / 256, 256>>>((float4*)out, (const float4*)b.x, (const float4*)b.z,
                                        N / 4);
    CHECK(cudaDeviceSynchronize());
    float silu = max_diff(b.y, out, N);
    bool ok = sgemm < 1e-3f && silu < 1e-5f;  // sums of 512 products of values in [-1, 1]
    std::printf("check sgemm_small_fixed max |diff| %.3g, silu_mul_vec4 %.3g: %s\n", sgemm, silu,
                ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

int main(int argc, char** argv)
{
    int launches = argc > 1 ? std::atoi(argv[1]) : 10;
    std::string mode = argc > 2 ? argv[2] : "";
    Buffers b{};
    b.x = upload_random(N, 1, -1.0f, 1.0f);
    b.y = upload_random(N, 2, -1.0f, 1.0f);
    b.z = upload_random(N, 3, -1.0f, 1.0f);
    b.w = upload_random(COLS, 4, -1.0f, 1.0f);
    b.gamma = upload_random(COLS, 5, 0.5f, 1.5f);
    b.small = upload_random(ROWS, 6, 0.0f, 1.0f);
    b.bytes = upload_skewed_bytes(N, 7);
    CHECK(cudaMalloc(&b.hist, BINS * sizeof(unsigned)));
    CHECK(cudaMemset(b.hist, 0, BINS * sizeof(unsigned)));
    if (mode == "check") return check_fixes(b);
    auto ks = kernels(b);
    if (mode == "time") {
        time_all(ks, launches);
        return 0;
    }
    int total = 0;
    run_all(ks, launches, &total);
    CHECK(cudaDeviceSynchronize());
    std::printf("pipeline (%s): %d launches of %zu kernels\n",
#ifndef NEW
                "base",
#else
                "new",
#endif
                total, ks.size());
    return 0;
}
