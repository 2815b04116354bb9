"""The syntax layer's reader of shared-memory tree reductions (`pragma_ncu.syntax.trees`): the
two forms with their combines, the strides worked out at a block size, what is no tree and
why, the names holding threadIdx.x, integer constants, and what stands around a tree."""

from __future__ import annotations

import pytest

from pragma_ncu import syntax as ts
from pragma_ncu.syntax import reductions as rd
from pragma_ncu.syntax import trees as tr

KERNEL = """__global__ void k(const float* x, float* y, int n)
{{
    __shared__ float buf[256];
    const int tid = (int)threadIdx.x;
    buf[tid] = x[tid];
    __syncthreads();
    {tree}
    y[blockIdx.x] = buf[0];
}}
"""
HALVING = """for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }"""
INTERLEAVED = """for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            buf[tid] = fmaxf(buf[tid], buf[tid + s]);
        }
        __syncthreads();
    }"""


def read(tree: str, block: int = 256, extra: dict[str, int] | None = None
         ) -> tuple[list[tr.Tree], list[str]]:
    root = ts.syntax_tree(KERNEL.format(tree=tree))
    kernel = ts.functions(root)[0]
    body = ts.body(kernel)
    shared = {a.name for a in ts.shared_arrays(kernel)}
    return tr.trees(body, tr.holding(body, "threadIdx.x"), shared,
                    {"blockDim.x": block, **(extra or {})})


def one(tree: str, block: int = 256, extra: dict[str, int] | None = None) -> tr.Tree:
    found, why = read(tree, block, extra)
    assert len(found) == 1 and not why, why
    return found[0]


def why_not(tree: str, block: int = 256) -> str:
    found, why = read(tree, block)
    assert not found and len(why) == 1
    return why[0]


def test_the_halving_tree_and_its_combine() -> None:
    t = one(HALVING)
    assert (t.form, t.array, t.combine, t.width) == (tr.HALVING, "buf", rd.SUM, 256)
    assert t.combined("v", "u") == "v += u"
    assert one(HALVING, 64).width == 64


def test_the_interleaved_tree_with_a_max() -> None:
    t = one(INTERLEAVED, 512)
    assert (t.form, t.combine, t.width) == (tr.INTERLEAVED, "fmaxf", 512)
    assert t.combined("v", "u") == "v = fmaxf(v, u)"


@pytest.mark.parametrize(("old", "new", "combine", "combined"), [
    ("s >>= 1", "s /= 2", rd.SUM, "v += u"),
    ("s >>= 1", "s = s >> 1", rd.SUM, "v += u"),
    ("blockDim.x / 2", "128", rd.SUM, "v += u"),
    ("blockDim.x / 2", "THREADS / 2", rd.SUM, "v += u"),
    ("tid < s", "s > threadIdx.x", rd.SUM, "v += u"),
    ("buf[tid] += buf[tid + s]", "buf[tid] = buf[tid] + buf[s + tid]", rd.SUM, "v = v + u"),
    ("buf[tid] += buf[tid + s]", "buf[tid] = buf[tid + s] > buf[tid] ? buf[tid + s] : buf[tid]",
     "max", "v = u > v ? u : v"),
    ("buf[tid] += buf[tid + s]", "buf[tid] = min(buf[tid], buf[tid + s])", "min",
     "v = min(v, u)"),
])
def test_the_forms_a_halving_tree_is_written_in(old: str, new: str, combine: str,
                                               combined: str) -> None:
    t = one(HALVING.replace(old, new), extra={"THREADS": 256})
    assert (t.combine, t.combined("v", "u"), t.width) == (combine, combined, 256)


@pytest.mark.parametrize(("old", "new"), [
    ("s *= 2", "s <<= 1"), ("s *= 2", "s = s * 2"), ("s *= 2", "s += s"),
    ("2 * s", "s * 2"), ("tid % (2 * s) == 0", "0 == tid % (s << 1)"),
    ("s < blockDim.x", "s < 256u"), ("s < blockDim.x", "s <= 128"),
])
def test_the_forms_an_interleaved_tree_is_written_in(old: str, new: str) -> None:
    assert one(INTERLEAVED.replace(old, new)).width == 256


@pytest.mark.parametrize(("old", "new", "why"), [
    ("buf[tid] += buf[tid + s]", "buf[tid] -= buf[tid + s]", "by a sum, min or max"),
    ("buf[tid] += buf[tid + s]", "buf[tid] += 2.0f * buf[tid + s]", "by a sum, min or max"),
    ("buf[tid] += buf[tid + s]", "buf[tid] *= buf[tid + s]", "by a sum, min or max"),
    ("buf[tid] += buf[tid + s]", "buf[tid] += buf[tid + 2 * s]", "neither the thread's slot"),
    ("buf[tid] += buf[tid + s]", "buf[tid + 1] += buf[tid + s]", "at the thread's slot"),
    ("tid < s", "tid <= s", "its test is neither"),
    ("s > 0", "s > 32", "do not halve from a power of two to 1"),
    ("s >>= 1", "s = s / 3", "(128, 42, 14, 4, 1) do not halve"),
    ("s >>= 1", "s -= 1", "does not end within 11 steps"),
    ("blockDim.x / 2", "n / 2", "is no number at this block size"),
    ("if (tid < s) buf[tid] += buf[tid + s];", "if (tid < s) buf[tid] += buf[tid + s];\n"
     "        if (tid == 0) s = 0;", "its body is not"),
])
def test_what_is_no_tree_and_why(old: str, new: str, why: str) -> None:
    assert why in why_not(HALVING.replace(old, new))


def test_a_loop_without_a_barrier_among_its_statements_is_not_taken_for_one() -> None:
    assert read(HALVING.replace("        __syncthreads();\n", "")) == ([], [])


def test_the_innermost_loop_that_looks_like_a_tree_says_why_first() -> None:
    """A loop around a tree has a barrier among its statements and stores to the slots too."""
    found, why = read("""for (int r = 0; r < n; ++r) {
        buf[tid] = x[r];
        __syncthreads();
        for (int s = 128; s >= 32; s >>= 1) {
            if (tid < s) buf[tid] += buf[tid + s];
            __syncthreads();
        }
    }""")
    assert not found and len(why) == 2
    assert why[0].startswith("the loop at line 10 is no tree reduction: its strides at this "
                             "block size (128, 64, 32) do not halve")
    assert why[1].startswith("the loop at line 7 is no tree reduction: its body is not")


def test_a_tree_that_would_skip_slots_at_this_block_is_refused() -> None:
    """96 threads halve as 48, 24, 12, 6, 3, 1: slot 2 is never added in."""
    assert "(48, 24, 12, 6, 3, 1) do not halve" in why_not(HALVING, 96)
    assert one(INTERLEAVED, 96).width == 128  # the caller compares it with the block


def test_names_holding_thread_and_block_indices() -> None:
    body = ts.body(ts.functions(ts.syntax_tree(
        "__global__ void k(int* y) { int a = threadIdx.x; const unsigned b = (unsigned)"
        "threadIdx.x; int c = threadIdx.x; c += 1; int d = blockIdx.x; int e = threadIdx.y; "
        "{ int a = 2; } }"))[0])
    assert tr.holding(body, "threadIdx.x") == {"b"}  # a is declared twice, c changed
    assert tr.holding(body, "blockIdx.x") == {"d"}


@pytest.mark.parametrize(("expression", "value"), [
    ("blockDim.x / 2", 128), ("blockDim.x >> 1", 128), ("(THREADS + 1) / 2", 128),
    ("256u / 4", 64), ("0x100 - 1", 255), ("-7 / 2", -3), ("-7 % 2", -1), ("(int)blockDim.x", 256),
    ("s < blockDim.x", 1), ("!(s > 4)", 1), ("(float)blockDim.x / 2", None), ("n / 2", None),
    ("1.5f", None), ("blockDim.x / 0", None),
])
def test_integer_constants(expression: str, value: int | None) -> None:
    node = ts.syntax_tree(f"int v = {expression};").children[0]
    init = ts.declarators(node)[0][1].child_by_field_name("value")
    assert tr.constant(init, {"blockDim.x": 256, "THREADS": 255, "s": 3}) == value


def around(before: str, guard: str = "") -> tuple[str, int | None]:
    """What leaves before the tree, and the line of a divergent statement around it, in a
    kernel whose tree follows `before` (inside a row loop) under `guard`."""
    source = ("__global__ void k(const float* x, float* y, int n)\n{\n"
              "    __shared__ float buf[256];\n    const int tid = threadIdx.x;\n"
              "    for (int r = 0; r < n; ++r) {\n" + before +
              "        buf[tid] = x[tid];\n        __syncthreads();\n" + guard +
              "        " + HALVING + "\n    }\n}\n")
    body = ts.body(ts.functions(ts.syntax_tree(source))[0])
    loop = next(n for n in ts.walk(body) if ts.text(n).startswith("for (int s"))
    leaves, divergent = tr.leaves_before(body, loop), tr.divergent_around(body, loop)
    return (ts.text(leaves) if leaves is not None else "",
            ts.first_line(divergent) if divergent is not None else None)


def test_what_stands_around_a_tree() -> None:
    assert around("") == ("", None)
    assert around("        if (x[r] > 0) return;\n") == ("return;", None)
    assert around("        if (tid > 3) continue;\n") == ("continue;", None)
    assert around("        for (int j = 0; j < tid; ++j) if (x[j] > 0) break;\n") == ("", None)
    assert around("", "        if (tid < 64)\n") == ("", 8)
    assert around("", "        if (n > 64)\n") == ("", None)


def test_update_kind_reads_an_element_as_it_reads_a_name() -> None:
    stmt = ts.syntax_tree("void f() { buf[t] = fmaxf(buf[t], buf[t + s]); a = fmaxf(a, b); }")
    updates = [n for n in ts.walk(stmt) if n.type == "assignment_expression"]
    assert rd.update_kind(updates[0], "buf[t]") == "fmaxf"
    assert rd.update_kind(updates[1], "a") == "fmaxf"


def test_walks_across_reads_a_column_along_adjacent_outputs() -> None:
    source = """__global__ void k(const float* x, float* y, int R, int C)
{
    int c = blockIdx.x;
    const float* p = x + c;
    float a = 0.f;
    for (int r = threadIdx.x; r < R; r += blockDim.x) a += x[(size_t)r * C + c];
    for (int r = threadIdx.x; r < R; r += blockDim.x) a += p[r * C];
    for (int r = threadIdx.x; r < R; r += blockDim.x) a += x[r * C + 2 * c];
    y[c] = a;
}
"""
    kernel = ts.functions(ts.syntax_tree(source))[0]
    loops = [n for n in ts.walk(kernel) if n.type == "for_statement"]
    got = [ts.walks_across(loop, {"x"}, ts.body(kernel), "c") for loop in loops]
    assert got == [True, True, False]
