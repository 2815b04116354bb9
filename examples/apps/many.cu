// A large application for triage's speed (issue 16): KERNELS template instantiations of one
// function, work<0> ... work<KERNELS-1>, each launched LAUNCHES times (default 100 x 50 = 5,000
// launches). Built twice from this one file:
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o many_base many.cu
//   nvcc -O3 -arch=sm_90 -lineinfo -DNEW -o many_new many.cu
//
// NEW differs from BASE in three instantiations (examples/apps/README.md):
//   work<17>   regression: consecutive threads read 32 floats apart (uncoalesced)
//   work<42>   regression: 64 more dependent FMAs per element (compute)
//   work<77>   its 16 extra dependent FMAs per element dropped: meant as an improvement, but
//              the kernel waits on memory and the H200 measured -3.7% (under the threshold)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
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

constexpr int KERNELS = 100;
constexpr int N = 1 << 20;

template <int K>
struct Plan {
    static constexpr int extra = K % 5;   // a little work that differs between instantiations
#ifdef NEW
    static constexpr int stride = K == 17 ? 32 : 1;
    static constexpr int fmas = K == 42 ? 64 : (K == 77 ? 0 : extra);
#else
    static constexpr int stride = 1;
    static constexpr int fmas = K == 77 ? 16 : extra;
#endif
};

template <int K>
__global__ void work(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    // With stride 32, thread i reads element (i * 32) % n + i / (n / 32): a permutation, so
    // every element is still read once, but a warp's 32 loads touch 32 sectors.
    int j = Plan<K>::stride == 1 ? i : (int)(((long long)i * 32) % n + i / (n / 32));
    float v = x[j];
#pragma unroll
    for (int f = 0; f < Plan<K>::fmas; ++f) v = fmaf(v, 0.999f, 0.001f);
    y[i] = v * (float)(K + 1);
}

template <int K>
void launch_one(float* y, const float* x)
{
    work<K><<<N / 256, 256>>>(y, x, N);
    CHECK(cudaGetLastError());
}

template <int... K>
void launch_all(std::integer_sequence<int, K...>, float* y, const float* x)
{
    (launch_one<K>(y, x), ...);
}

int main(int argc, char** argv)
{
    int launches = argc > 1 ? std::atoi(argv[1]) : 50;
    std::vector<float> h(N);
    unsigned s = 12345u;
    for (auto& v : h) {
        s = s * 1664525u + 1013904223u;
        v = (s >> 8) * (1.0f / 16777216.0f) - 0.5f;
    }
    float *x = nullptr, *y = nullptr;
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    CHECK(cudaMemcpy(x, h.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    for (int layer = 0; layer < launches; ++layer)
        launch_all(std::make_integer_sequence<int, KERNELS>{}, y, x);
    CHECK(cudaDeviceSynchronize());
    std::printf("many: %d launches of %d kernels\n", launches * KERNELS, KERNELS);
    return 0;
}
