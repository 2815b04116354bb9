// Rainfall total and number of wet hours (>= 0.1 mm) per gauge station from an hourly record,
// rain is nhours x nstations, row-major. Negative values mark missing hours and are skipped.
extern "C" __global__ void station_rain(float* total, int* wet_hours, const float* rain,
                                        int nhours, int nstations)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nstations) return;

    float sum = 0.0f;
    int wet = 0;
    int idx = s;
    int h = 0;
    while (h < nhours) {
        float r = rain[idx];
        if (r >= 0.0f) {
            sum += r;
            if (r >= 0.1f) wet++;
        }
        idx += nstations;
        h++;
    }
    total[s] = sum;
    wet_hours[s] = wet;
}
