// The scheduler of tests/fakes/cuda_emu/emu.h: a block's threads as fibers (ucontext), run
// until each waits at a barrier or a shuffle or ends; a shuffle is done once all 32 lanes of its
// warp wait at it, a barrier once every thread of the block waits at the same one.
#include <ucontext.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
struct emu_uint3 { unsigned x, y, z; };
emu_uint3 threadIdx, blockIdx, blockDim, gridDim;
enum { READY, AT_SYNC, AT_SHFL, DONE };
struct Fiber { ucontext_t ctx; emu_uint3 tid; int state, kind, arg, width, line;
               unsigned mask; unsigned long long val, res; };
static std::vector<Fiber> F;
static std::vector<char*> stacks;
static ucontext_t sched_ctx;
static int cur;
static void (*g_entry)(void**);
static void** g_args;
static const size_t STK = 256 * 1024;
static void fail(const char* m) { fprintf(stderr, "EMU ERROR: %s (block %u,%u,%u thread %d)\n", m,
    blockIdx.x, blockIdx.y, blockIdx.z, cur); fflush(stderr); _Exit(3); }
static void yield() { swapcontext(&F[cur].ctx, &sched_ctx); }
extern "C" void emu_syncthreads(int line) { F[cur].state = AT_SYNC; F[cur].line = line; yield(); }
extern "C" unsigned long long emu_shfl(int kind, unsigned mask, unsigned long long bits, int arg,
                                       int width, int line) {
    Fiber& f = F[cur]; f.state = AT_SHFL; f.kind = kind; f.mask = mask; f.val = bits; f.arg = arg;
    f.width = width; f.line = line; yield(); return F[cur].res;
}
extern "C" void emu_syncwarp_unsupported() { fail("__syncwarp not emulated"); }
static void entry() { g_entry(g_args); F[cur].state = DONE; swapcontext(&F[cur].ctx, &sched_ctx); }
extern "C" int emu_launch(void (*fn)(void**), void** args, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz) {
    g_entry = fn; g_args = args;
    unsigned nt = bx * by * bz;
    if (nt == 0 || nt > 1024 || nt % 32) { fprintf(stderr, "EMU: block of %u threads\n", nt); return 2; }
    F.resize(nt);
    while (stacks.size() < nt) stacks.push_back((char*)malloc(STK));
    gridDim = {gx, gy, gz}; blockDim = {bx, by, bz};
    for (unsigned z = 0; z < gz; ++z) for (unsigned y = 0; y < gy; ++y) for (unsigned x = 0; x < gx; ++x) {
        blockIdx = {x, y, z};
        for (unsigned t = 0; t < nt; ++t) {
            Fiber& f = F[t]; f.tid = {t % bx, (t / bx) % by, t / (bx * by)}; f.state = READY;
            getcontext(&f.ctx); f.ctx.uc_stack.ss_sp = stacks[t]; f.ctx.uc_stack.ss_size = STK;
            f.ctx.uc_link = nullptr; makecontext(&f.ctx, entry, 0);
        }
        for (;;) {
            for (unsigned t = 0; t < nt; ++t) if (F[t].state == READY) {
                cur = t; threadIdx = F[t].tid; swapcontext(&sched_ctx, &F[t].ctx);
            }
            bool alldone = true, prog = false;
            for (unsigned t = 0; t < nt; ++t) alldone &= F[t].state == DONE;
            if (alldone) break;
            for (unsigned w = 0; w < nt / 32; ++w) {
                int nsh = 0;
                for (int l = 0; l < 32; ++l) nsh += F[w * 32 + l].state == AT_SHFL;
                if (!nsh) continue;
                for (int l = 0; l < 32; ++l) {
                    Fiber& f = F[w * 32 + l]; cur = w * 32 + l;
                    if (f.state != AT_SHFL) fail("shuffle while other lanes of the warp are elsewhere");
                    if (f.mask != 0xffffffffu) fail("shuffle mask not full");
                    if (f.kind != F[w * 32].kind || f.line != F[w * 32].line || f.width != F[w*32].width)
                        fail("lanes at different shuffles");
                }
                for (int l = 0; l < 32; ++l) {
                    Fiber& f = F[w * 32 + l]; int wd = f.width, src = l, base = l / wd * wd, li = l % wd;
                    if (f.kind == 0) src = base + ((li ^ f.arg) % wd) ;
                    else if (f.kind == 1) src = li + f.arg < wd ? l + f.arg : l;
                    else if (f.kind == 2) src = li >= f.arg ? l - f.arg : l;
                    else src = base + (f.arg % wd);
                    if (f.kind == 0 && (li ^ f.arg) >= wd) src = l;
                    f.res = F[w * 32 + src].val;
                }
                for (int l = 0; l < 32; ++l) F[w * 32 + l].state = READY;
                prog = true;
            }
            if (prog) continue;
            int line = -1;
            for (unsigned t = 0; t < nt; ++t) {
                cur = t;
                if (F[t].state == DONE) fail("__syncthreads while some threads have exited");
                if (F[t].state != AT_SYNC) fail("deadlock");
                if (line == -1) line = F[t].line; else if (line != F[t].line) fail("threads at different __syncthreads");
            }
            for (unsigned t = 0; t < nt; ++t) F[t].state = READY;
        }
    }
    return 0;
}
