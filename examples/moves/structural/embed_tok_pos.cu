// embed_tok_pos: out[b, t, c] = wte[tokens[b, t], c] + wpe[t, c], the token plus position
// embedding at the input of a GPT; one thread per output element.
extern "C" __global__ void embed_tok_pos(float* out, const int* tokens, const float* wte,
                                         const float* wpe, int B, int T, int C)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)B * T * C;
    if (idx >= total) return;
    long long bt = idx / C;
    int c = (int)(idx % C);
    int t = (int)(bt % T);
    int tok = tokens[bt];
    out[idx] = wte[(long long)tok * C + c] + wpe[(long long)t * C + c];
}
