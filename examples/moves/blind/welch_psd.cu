// Welch power spectrum: the mean over frames of |X|^2 in every frequency bin. X holds the FFT
// of each windowed frame as interleaved (re, im) floats, nframes x nbins complex, row-major.
extern "C" __global__ void welch_psd(float* psd, const float* X, int nframes, int nbins)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nbins) return;

    float acc = 0.0f;
    for (int f = 0; f < nframes; f++) {
        size_t i = 2 * ((size_t)f * nbins + k);
        float re = X[i];
        float im = X[i + 1];
        acc += re * re + im * im;
    }
    psd[k] = acc / nframes;
}
