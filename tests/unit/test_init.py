"""`pragma-ncu init` on sources written here: C/C++/CUDA types, roles from the body, knobs,
template parameters, the launch guess, the choice of kernel, and the command's refusals."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli
from pragma_ncu.draft import draft_spec, write_draft
from pragma_ncu.draft.infer import KernelDraft, knob_value
from pragma_ncu.infra.errors import DraftError, SpecError
from pragma_ncu.spec.file import load_spec, placeholders

REPO = Path(__file__).resolve().parents[2]


def draft(tmp_path: Path, text: str, name: str = "k.cu", kernel: str | None = None
          ) -> KernelDraft:
    path = tmp_path / name
    path.write_text(text)
    return draft_spec(path, kernel).kernel


def roles(d: KernelDraft) -> dict[str, tuple[str | None, str]]:
    return {a.name: (a.dtype, a.role) for a in d.args}


# --- types ------------------------------------------------------------------------------------
def test_c_and_cuda_types_become_dtypes(tmp_path: Path) -> None:
    d = draft(tmp_path, """
        #include <cuda_fp16.h>
        typedef float real;
        #define IDX long long
        struct Particle { float f[4]; float w; };
        __global__ void k(real* out, const __half* h, const __nv_bfloat16* b, const double* d,
                          const unsigned char* u8, const signed char* i8, const char* c,
                          const unsigned long int* ul, const size_t* sz, const IDX* idx,
                          const float4* v, const half2* h2, const Particle* p, const bool* flags,
                          long unsigned n, int32_t m, unsigned count, bool on, float eps,
                          double w) {
            out[0] = 1;
        }""")
    assert [(a.name, a.dtype, a.lanes) for a in d.args] == [
        ("out", "fp32", 1), ("h", "fp16", 1), ("b", "bf16", 1), ("d", "fp64", 1),
        ("u8", "uint8", 1), ("i8", "int8", 1), ("c", "int8", 1), ("ul", "uint64", 1),
        ("sz", "uint64", 1), ("idx", "int64", 1), ("v", "fp32", 4), ("h2", "fp16", 2),
        ("p", "fp32", 5), ("flags", "uint8", 1), ("n", "uint64", 1), ("m", "int32", 1),
        ("count", "uint32", 1), ("on", "uint8", 1), ("eps", "fp32", 1), ("w", "fp64", 1)]
    by_name = {a.name: a for a in d.args}
    assert by_name["flags"].init == '{ dist = "randint", low = 0, high = 2 }'
    assert "real = float" in by_name["out"].dtype_note
    assert d.dims == ("n", "m", "count")  # integer scalars; bool and float ones need values
    assert by_name["on"].value is None and by_name["eps"].value is None


@pytest.mark.parametrize(("decl", "message"), [
    ("const short* s", "no spec dtype"),
    ("float** pp", "pointer to pointers"),
    ("int& n", r"a C\+\+ reference"),
    ("const Unknown* u", "not a type pragma-ncu knows"),
    ("const struct Mixed* m", "mixes member types"),
])
def test_arguments_a_spec_cannot_describe_are_clear_errors(tmp_path: Path, decl: str,
                                                           message: str) -> None:
    with pytest.raises(DraftError, match=message):
        draft(tmp_path, f"struct Mixed {{ float a; int b; }};\n"
                        f"__global__ void k(float* y, {decl}) {{ y[0] = 0; }}")


# --- roles ------------------------------------------------------------------------------------
def test_roles_follow_the_first_access(tmp_path: Path) -> None:
    d = draft(tmp_path, """
        __device__ void store(float* p, int i, float v) { p[i] = v; }
        __device__ float load(const float* p, int i) { return p[i]; }
        extern "C" __global__ void k(const float* x, float* out, float* acc, float* hist,
                                     float* alias_out, float* via_call, float* scanned,
                                     float* unknown, float* only_read, float* unused,
                                     float* vec, float* ref, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            out[i] = x[i];                    // written first
            acc[i] += x[i];                   // read-modify-write
            atomicAdd(&hist[i % 4], 1.0f);    // an atomic reads the old value
            float* row = alias_out + i;       // through an alias
            row[0] = 2.0f;
            store(via_call, i, 1.0f);         // through a function of this file
            for (int j = 0; j < n; ++j) scanned[j] = scanned[j] + 1.0f;  // right side first
            library_call(unknown);            // this file cannot say
            float s = load(only_read, i);
            reinterpret_cast<float4*>(vec)[i] = make_float4(s, s, s, s);
            float& r = ref[i];
            r = s;
        }""")
    assert {a.name: a.role for a in d.args if a.role != "scalar"} == {
        "x": "input", "out": "output", "acc": "inout", "hist": "inout", "alias_out": "output",
        "via_call": "output", "scanned": "inout", "unknown": "inout", "only_read": "input",
        "unused": "input", "vec": "output", "ref": "output"}
    notes = {a.name: a.role_note for a in d.args}
    assert notes["x"] == "const: only read"
    assert "line 9: out[i] = x[i]" in notes["out"]
    assert "store(via_call, i, 1.0f) -> line 2: p[i] = v" in notes["via_call"]
    assert notes["unused"].startswith("GUESS: never read or written")
    assert all(n.startswith("GUESS") for k, n in notes.items() if k not in ("x", "n"))


def test_a_loop_that_initializes_then_accumulates_is_an_output(tmp_path: Path) -> None:
    d = draft(tmp_path, """
        void conv(const float* x, float* y, int n) {
            for (int i = 0; i < n; ++i) { y[i] = 0.0f; y[i] += x[i]; }
        }""", name="conv.c")
    assert roles(d)["y"] == ("fp32", "output")


def test_a_kernel_that_writes_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DraftError, match="writes none of its arguments"):
        draft(tmp_path, "__global__ void k(const float* x, int n) {}")


# --- knobs, templates, launch ---------------------------------------------------------------
def test_knobs_in_both_forms_with_typed_defaults(tmp_path: Path) -> None:
    d = draft(tmp_path, """
        #ifndef VEC
        #define VEC 4   // elements per load
        #endif
        #if !defined(SCALE)
        #define SCALE 0.5f
        #endif
        #ifndef FAST
        #define FAST true
        #endif
        #ifndef MASK
        #define MASK 0xFFu
        #endif
        #ifndef T
        #define T float
        #endif
        #define NOT_A_KNOB 3
        __global__ void k(T* y) { y[0] = VEC * SCALE; }""")
    assert [(p.name, p.default) for p in d.params] == [
        ("VEC", 4), ("SCALE", 0.5), ("FAST", True), ("MASK", 255), ("T", "float"),
        ("BLOCK", 256)]
    assert d.args[0].dtype == "fp32"  # T resolved through the knob's default
    assert knob_value("(256)") == 256 and knob_value("") == 1 and knob_value("1e-6") == 1e-6


def test_template_parameters_become_params(tmp_path: Path) -> None:
    d = draft(tmp_path, """
        template <typename T = float, int VEC, bool CACHE = true>
        __global__ void __launch_bounds__(256) k(T* y, const T* x, int n) { y[0] = x[0]; }""")
    assert d.template_args == ("T", "VEC", "CACHE")
    assert [(p.name, p.default) for p in d.params] == [("T", "float"), ("VEC", None),
                                                         ("CACHE", True)]
    assert roles(d)["y"] == ("fp32", "output")
    assert d.block == "256" and "__launch_bounds__(256)" in d.block_note


def test_an_element_type_from_a_template_parameter_without_default_is_a_placeholder(
        tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("template <typename T> __global__ void k(T* y) { y[0] = 0; }")
    text = draft_spec(tmp_path / "k.cu").spec_text
    data = tomllib.loads(text)
    assert data["args"][0]["dtype"] == "<fill>"
    assert "params.T.default" in placeholders(data)


def test_launch_guess_uses_the_block_knob_the_bounds_or_a_free_name(tmp_path: Path) -> None:
    assert draft(tmp_path, "#ifndef THREADS\n#define THREADS 128\n#endif\n"
                           "__global__ void k(float* y) { y[0] = 0; }").block == "THREADS"
    assert draft(tmp_path, "#define NT 512\n__global__ void __launch_bounds__(NT) "
                           "k(float* y) { y[0] = 0; }").block == "512"
    d = draft(tmp_path, "__global__ void k(float* y) { const int BLOCK = 3; y[0] = BLOCK; }")
    assert d.block == "BLOCK_SIZE"  # BLOCK is a name in the code: -DBLOCK would break it
    assert ("BLOCK_SIZE", 256) in [(p.name, p.default) for p in d.params]


def test_dynamic_shared_memory_is_a_placeholder(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("__global__ void k(float* y) { extern __shared__ float s[]; "
                                   "y[0] = s[0]; }")
    assert "launch.shared_mem" in placeholders(tomllib.loads(draft_spec(tmp_path / "k.cu")
                                                             .spec_text))


# --- C and C++ for the CPU --------------------------------------------------------------------
def test_a_c_file_is_read_with_the_c_grammar(tmp_path: Path) -> None:
    d = draft(tmp_path, """
        #include <stdint.h>
        static void helper(float* p) { p[0] = 0; }
        void saxpy(float* restrict new, const float* class, float a, int64_t n) {
            for (int64_t i = 0; i < n; ++i) new[i] = a * class[i] + new[i];
        }""", name="saxpy.c")
    assert d.target == "cpu" and d.kernel == "saxpy" and d.block is None
    assert roles(d) == {"new": ("fp32", "inout"), "class_": ("fp32", "input"),
                        "a": ("fp32", "scalar"), "n": ("int64", "scalar")}


def test_cpp_kernels_must_be_extern_c_and_openmp_adds_its_flag(tmp_path: Path) -> None:
    with pytest.raises(DraftError, match='declare it extern "C"'):
        draft(tmp_path, "void k(float* y) { y[0] = 0; }", name="k.cpp", kernel="k")
    d = draft(tmp_path, 'extern "C" void k(float* y, int n) {\n#pragma omp parallel for\n'
                        "for (int i = 0; i < n; ++i) y[i] = 0; }", name="k.cpp")
    assert d.flags == ("-O3", "-fopenmp")


# --- choosing the kernel --------------------------------------------------------------------
def test_several_kernels_need_a_name() -> None:
    source = REPO / "examples" / "apps" / "pipeline.cu"
    with pytest.raises(DraftError, match="choose one with --kernel NAME") as info:
        draft_spec(source)
    assert "axpy" in str(info.value) and "softmax_rows" in str(info.value)
    assert draft_spec(source, "axpy").kernel.kernel == "axpy"
    with pytest.raises(DraftError, match="'nope' is not a kernel here"):
        draft_spec(source, "nope")


def test_no_kernel_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DraftError, match="no __global__ function"):
        draft(tmp_path, "__device__ float f(float x) { return x; }")
    with pytest.raises(DraftError, match="no exported C function"):
        draft(tmp_path, "static void f(float* y) { y[0] = 0; }", name="k.c")


# --- the placeholders and the files ---------------------------------------------------------
def test_a_draft_with_placeholders_left_names_them_all(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("__global__ void k(float* y, float a, int n) { y[0] = a; }")
    write_draft(draft_spec(tmp_path / "k.cu"))
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path / "k.toml")
    message = str(info.value)
    assert "4 left: launch.grid[0], args[0].shape[0], args[1].value, shapes[0].n" in message
    assert "pragma-ncu init" in message


def test_init_writes_refuses_to_overwrite_and_forces(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k(float* y, int n) { y[0] = 1; }")
    runner = CliRunner()
    first = runner.invoke(cli, ["init", str(kernel)])
    assert first.exit_code == 0, first.output
    assert "to fill (3): launch.grid[0], args[0].shape[0], shapes[0].n" in first.output
    spec, ref = tmp_path / "k.toml", tmp_path / "k_reference.py"
    assert spec.is_file() and ref.is_file()
    spec.write_text("# mine\n")
    again = runner.invoke(cli, ["init", str(kernel)])
    assert again.exit_code == 2 and "nothing was written" in again.output  # bad input
    assert "Traceback" not in again.output and spec.read_text() == "# mine\n"
    ref_only = tmp_path / "k.toml"
    ref_only.unlink()
    assert runner.invoke(cli, ["init", str(kernel)]).exit_code == 2  # the stub exists
    assert not ref_only.exists()
    forced = runner.invoke(cli, ["init", str(kernel), "--force"])
    assert forced.exit_code == 0 and spec.read_text().startswith("# Spec of k")


def test_init_cli_errors_and_options(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["init", str(tmp_path / "none.cu")])
    assert missing.exit_code == 2 and "kernel file not found" in missing.output
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k(float* y) { y[0] = 1; }")
    other = tmp_path / "specs" / "mine.toml"
    done = runner.invoke(cli, ["init", str(kernel), "--spec", str(other), "--reference", "none"])
    assert done.exit_code == 0, done.output
    data = tomllib.loads(other.read_text())
    assert data["kernel"]["source"] == "../k.cu" and "reference" not in data
    assert not (tmp_path / "specs" / "mine_reference.py").exists()
    assert f"--spec {other}" in done.output


@pytest.mark.parametrize("library", ["numpy", "torch", "cupy"])
def test_the_reference_stub_has_the_signature_and_raises(tmp_path: Path, library: str) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k(float* y, float* acc, const float* in, int n) "
                      "{ y[0] = in[0]; acc[0] += 1; }")
    d = draft_spec(kernel, reference=library)
    assert d.reference_text is not None
    assert "def k(*, acc, in_, n):" in d.reference_text
    assert "return {'y': ..., 'acc': ...}" in d.reference_text
    assert tomllib.loads(d.spec_text)["reference"] == {"function": "k_reference.py:k",
                                                       "library": library}
    compile(d.reference_text, "k_reference.py", "exec")  # valid Python (imports not run)
