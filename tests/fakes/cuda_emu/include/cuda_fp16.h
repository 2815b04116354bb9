// A stand-in for CUDA's fp16 header on the CPU (tests/fakes/cuda_on_cpu.py): __half as _Float16,
// each operation rounded to half once, as the GPU does.
#pragma once
struct __half { _Float16 v; };
struct alignas(4) __half2 { __half x, y; };
inline __half __float2half(float f) { return {(_Float16)f}; }
inline __half __float2half_rn(float f) { return {(_Float16)f}; }
inline float __half2float(__half h) { return (float)h.v; }
inline __half __hadd(__half a, __half b) { return {(_Float16)((float)a.v + (float)b.v)}; }
inline __half __hmul(__half a, __half b) { return {(_Float16)((float)a.v * (float)b.v)}; }
inline __half2 __hadd2(__half2 a, __half2 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
inline __half2 __hmul2(__half2 a, __half2 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
inline float2 __half22float2(__half2 h) { return {(float)h.x.v, (float)h.y.v}; }
inline __half2 __float22half2_rn(float2 f) { return {__float2half(f.x), __float2half(f.y)}; }
inline __half2 __floats2half2_rn(float a, float b) { return {__float2half(a), __float2half(b)}; }
inline float __low2float(__half2 h) { return (float)h.x.v; }
inline float __high2float(__half2 h) { return (float)h.y.v; }
inline __half2 __halves2half2(__half a, __half b) { return {a, b}; }
