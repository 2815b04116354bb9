// add_transposed: c = a + b^T in fp64, a and c [M, N], b [N, M] (the symmetric part of a
// matrix, a gradient summed with its transpose). One thread per element of c, adjacent threads
// along its rows: a and c are read and written coalesced, b is read M doubles apart.
extern "C" __global__ void add_transposed(const double* a, const double* b, double* c, int M, int N)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < M && j < N)
        c[(long long)i * N + j] = a[(long long)i * N + j] + b[(long long)j * M + i];
}
