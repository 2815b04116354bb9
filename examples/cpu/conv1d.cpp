// A naive 1-D convolution ("valid" mode, correlation order): y[i] = sum_j x[i + j] * w[j].
//
// Naive on purpose: the sum is accumulated in y[i] itself, and since x, w and y may alias the
// compiler must store and reload y[i] on every step of the inner loop. The knobs below
// (see conv1d.toml) are what a performance engineer would try first.
#include <cstdint>

#ifndef ACC
#define ACC 0      // 1: accumulate in a local variable, store y[i] once
#endif
#ifndef THREADS
#define THREADS 1  // OpenMP threads over the output elements
#endif

extern "C" void conv1d(const float* x, const float* w, float* y, int32_t n, int32_t k)
{
    const int32_t m = n - k + 1;
#pragma omp parallel for num_threads(THREADS) if (THREADS > 1) schedule(static)
    for (int32_t i = 0; i < m; ++i) {
#if ACC
        float acc = 0.0f;
        for (int32_t j = 0; j < k; ++j)
            acc += x[i + j] * w[j];
        y[i] = acc;
#else
        y[i] = 0.0f;
        for (int32_t j = 0; j < k; ++j)
            y[i] += x[i + j] * w[j];
#endif
    }
}
