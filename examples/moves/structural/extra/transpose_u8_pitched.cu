// transpose_u8_pitched: an 8-bit image of H rows of W pixels, rows pitch_in bytes apart, written
// transposed into rows pitch_out bytes apart (a column-major view for the next stage). One thread
// per pixel: adjacent threads read adjacent bytes and write bytes pitch_out apart.
extern "C" __global__ void transpose_u8_pitched(const unsigned char* src, unsigned char* dst,
                                                int H, int W, int pitch_in, int pitch_out)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x, v = blockIdx.y * blockDim.y + threadIdx.y;
    if (u < W && v < H) {
        dst[u * pitch_out + v] = src[v * pitch_in + u];
    }
}
