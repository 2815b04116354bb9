// CUDA kernels on the CPU, for tests where CI has no GPU (tests/fakes/cuda_on_cpu.py): every
// thread of a block is a fiber (sched.cpp) that yields at __syncthreads and at warp shuffles,
// which the scheduler completes only when the whole block, or all 32 lanes of the warp, have
// reached the same one; anything else (a barrier some threads skip, a shuffle with a partial
// mask) fails the run. __shared__ arrays are statics: one copy, blocks running one by one.
#pragma once
#include <cmath>
#include <math.h>
#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

struct emu_uint3 { unsigned x, y, z; };
extern emu_uint3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static
#define __launch_bounds__(...)
#define __restrict__ __restrict__

struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) int4 { int x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline float2 make_float2(float a, float b) { return {a, b}; }
template <class T> inline T __ldg(const T* p) { return *p; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline float max(float a, float b) { return std::fmax(a, b); }
inline float min(float a, float b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }

extern "C" void emu_syncthreads(int line);
extern "C" void emu_syncwarp_unsupported();
extern "C" unsigned long long emu_shfl(int kind, unsigned mask, unsigned long long bits,
                                       int arg, int width, int line);
#define __syncthreads() emu_syncthreads(__LINE__)
#define __syncwarp(...) emu_syncwarp_unsupported()
template <class T> inline T emu_shfl_t(int kind, unsigned mask, T v, int arg, int width, int line) {
    static_assert(sizeof(T) <= 8, "shuffle of >8 bytes");
    unsigned long long b = 0; std::memcpy(&b, &v, sizeof(T));
    b = emu_shfl(kind, mask, b, arg, width, line);
    T r; std::memcpy(&r, &b, sizeof(T)); return r;
}
#define __shfl_xor_sync(m, v, a, ...) emu_shfl_t(0, (m), (v), (a), emu_w(__VA_ARGS__ + 0), __LINE__)
#define __shfl_down_sync(m, v, a, ...) emu_shfl_t(1, (m), (v), (a), emu_w(__VA_ARGS__ + 0), __LINE__)
#define __shfl_up_sync(m, v, a, ...) emu_shfl_t(2, (m), (v), (a), emu_w(__VA_ARGS__ + 0), __LINE__)
#define __shfl_sync(m, v, a, ...) emu_shfl_t(3, (m), (v), (a), emu_w(__VA_ARGS__ + 0), __LINE__)
inline int emu_w(int w) { return w == 0 ? 32 : w; }

template <class... P, size_t... I>
void emu_call(void (*f)(P...), void** a, std::index_sequence<I...>) {
    f(*(std::remove_cv_t<P>*)a[I]...);
}
template <class... P> void emu_invoke(void (*f)(P...), void** a) {
    emu_call(f, a, std::index_sequence_for<P...>{});
}
