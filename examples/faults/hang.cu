// PLANTED FAULT (hang): would compute y[i] = 2 * x[i] + 1 (fp32), but first spins until
// the bit pattern of x[0] equals 0x7fc12345 (a NaN payload no normal() draw produces).
// The read is volatile, so the compiler must reload x[0] every iteration and cannot
// delete the loop; the kernel never finishes.
extern "C" __global__ void hang(const float* x, float* y, int n)
{
    const volatile unsigned int* x_bits = (const volatile unsigned int*)x;
    while (x_bits[0] != 0x7fc12345u) {
        // BUG: waits for a value that never arrives
    }
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
