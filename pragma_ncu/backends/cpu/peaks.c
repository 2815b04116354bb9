/* The CPU's FP32 FMA ceiling: 64 independent accumulators per thread (enough to fill every
 * vector FMA unit's pipeline at any width the compiler picks with -march=native), `iters`
 * steps, one copy per OpenMP thread when built with -fopenmp. The returned sum keeps the
 * work; the run-time multiplier m = 1 keeps it unfoldable. */
#define ACC 64

float peak_fma(long iters, float m)
{
    float total = 0.0f;
#pragma omp parallel reduction(+ : total)
    {
        float acc[ACC];
        for (int a = 0; a < ACC; ++a) acc[a] = (float)a;
        for (long i = 0; i < iters; ++i)
            for (int a = 0; a < ACC; ++a) acc[a] = acc[a] * m + 1.0f;
        for (int a = 0; a < ACC; ++a) total += acc[a];
    }
    return total;
}

int peak_threads(void)
{
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n += 1;
    return n;
}
