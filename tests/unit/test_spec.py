"""Unit tests for pragma_ncu.spec.file (TOML -> TaskSpec) and pragma_ncu.spec.model (resolve)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pragma_ncu.infra.errors import SpecError
from pragma_ncu.spec import dtypes
from pragma_ncu.spec.file import load_spec, spec_path_for
from pragma_ncu.spec.model import Init, Param, Role, Shape

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.toml")) + sorted(
    (REPO / "examples" / "faults").glob("*.toml"))

# A small, valid spec, one section per entry so tests can replace or drop sections.
BASE = {
    "kernel": '[kernel]\nname = "scale"\nflags = ["-O3", "-lineinfo"]\n',
    "params": '[params]\nBLOCK = { default = 128, values = [64, 128, 256] }\nUNROLL = 4\n',
    "launch": ('[launch]\ngrid = ["ceil_div(n, BLOCK)"]\nblock = ["BLOCK"]\n'
               'shared_mem = "BLOCK * 4"\n'),
    "args": '''
[[args]]
name = "x"
dtype = "fp32"
shape = ["n"]
role = "input"
init = { dist = "uniform", low = -2.0, high = 2.0 }

[[args]]
name = "y"
dtype = "fp32"
shape = ["n"]
role = "output"

[[args]]
name = "n"
dtype = "int32"
role = "scalar"
value = "n"
''',
    "shapes": '''
[[shapes]]
name = "big"
n = 1000

[[shapes]]
name = "odd"
n = 37
''',
    "tolerance": '[tolerance]\nfp32 = { atol = 1e-5, rtol = 1e-4 }\nmax_bad_fraction = 0.01\n',
    "reference": '[reference]\nfunction = "reference.py:scale"\n',
}


def spec_text(**sections: str | None) -> str:
    """The base spec with some sections replaced (a string) or dropped (None)."""
    merged = {**BASE, **sections}
    return "\n".join(text for text in merged.values() if text is not None)


def write(tmp_path: Path, text: str, name: str = "k.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def load(tmp_path: Path, text: str):
    return load_spec(write(tmp_path, text))


def assert_spec_error(tmp_path: Path, text: str, field: str, *expected: str) -> SpecError:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    err = info.value
    msg = str(err)
    assert err.field == field, msg
    assert f"field '{field}'" in msg
    assert str(path) in msg
    for part in expected:
        assert part in err.expected, (part, err.expected)
        assert part in msg
    return err


# ----------------------------------------------------------------------------------------------
# A good spec
# ----------------------------------------------------------------------------------------------

def test_good_spec_fields(tmp_path):
    spec = load(tmp_path, spec_text())
    assert spec.kernel_name == "scale"
    assert spec.spec_path == tmp_path / "k.toml"
    assert spec.source_path == tmp_path / "k.cu"  # default: the .cu beside the spec
    assert spec.flags == ("-O3", "-lineinfo")
    assert spec.params == (Param("BLOCK", 128, (64, 128, 256)), Param("UNROLL", 4, ()))
    assert spec.default_params() == {"BLOCK": 128, "UNROLL": 4}
    assert spec.launch.grid == ("ceil_div(n, BLOCK)",)
    assert spec.launch.block == ("BLOCK",)
    assert spec.launch.shared_mem == "BLOCK * 4"
    assert [a.name for a in spec.args] == ["x", "y", "n"]
    assert [a.role for a in spec.args] == [Role.INPUT, Role.OUTPUT, Role.SCALAR]
    x, y, n = spec.args
    assert x.dtype is dtypes.lookup("fp32")
    assert x.shape == ("n",)
    assert x.init == Init("uniform", "-2.0", "2.0")
    assert y.init is None  # outputs are poisoned, never initialised
    assert n.value == "n" and n.shape == ()
    assert spec.shapes == (Shape("big", (("n", 1000),)), Shape("odd", (("n", 37),)))
    assert spec.tolerance.max_bad_fraction == 0.01
    assert spec.tolerance.for_dtype(dtypes.lookup("fp32")) == (1e-5, 1e-4)
    # dtypes without an entry fall back to the dtype's defaults
    fp16 = dtypes.lookup("fp16")
    assert spec.tolerance.for_dtype(fp16) == (fp16.atol, fp16.rtol)
    assert spec.reference.function == "reference.py:scale"
    assert spec.reference.base_dir == tmp_path
    assert spec.bytes_expr is None and spec.flops_expr is None


def test_kernel_source_and_override(tmp_path):
    text = spec_text(kernel='[kernel]\nname = "scale"\nsource = "src/other.cu"\n')
    path = write(tmp_path, text)
    assert load_spec(path).source_path == tmp_path / "src" / "other.cu"
    override = tmp_path / "elsewhere.cu"
    assert load_spec(path, override).source_path == override
    assert spec_path_for(Path("/a/b/foo.cu")) == Path("/a/b/foo.toml")


def test_optional_sections_may_be_missing(tmp_path):
    spec = load(tmp_path, spec_text(params=None, tolerance=None, reference=None,
                                    launch='[launch]\ngrid = ["ceil_div(n, 64)"]\nblock = 64\n'))
    assert spec.params == ()
    assert spec.flags == ("-O3", "-lineinfo")
    assert spec.launch.block == ("64",)  # a single number is accepted
    assert spec.launch.shared_mem == "0"
    assert spec.tolerance.per_dtype == () and spec.tolerance.max_bad_fraction == 0.0
    assert spec.reference.function is None  # the original kernel is the reference
    assert spec.reference.base_dir == tmp_path


def test_unnamed_shapes_get_positional_names(tmp_path):
    spec = load(tmp_path, spec_text(shapes="[[shapes]]\nn = 5\n\n[[shapes]]\nn = 6\n"))
    assert [s.name for s in spec.shapes] == ["shape0", "shape1"]
    assert spec.shapes[1].label() == "n=6"


def test_resolve_default_params(tmp_path):
    spec = load(tmp_path, spec_text())
    task = spec.resolve(spec.shape_named("big"))
    assert task.kernel_name == "scale"
    assert task.shape_name == "big"
    assert task.dims == {"n": 1000}
    assert task.params == {"BLOCK": 128, "UNROLL": 4}
    assert task.launch.grid == (8, 1, 1)  # ceil_div(1000, 128)
    assert task.launch.block == (128, 1, 1)
    assert task.launch.shared_mem == 512
    assert task.launch.threads_per_block == 128
    x, y, n = task.args
    assert (x.name, x.dtype, x.role, x.shape, x.itemsize) == ("x", "fp32", "input", (1000,), 4)
    assert x.init == ("uniform", -2.0, 2.0)
    assert y.shape == (1000,) and y.init is None
    assert n.role == "scalar" and n.value == 1000 and type(n.value) is int and n.shape == ()
    assert n.numel == 0 and n.bytes_moved == 0
    assert task.bytes_moved == 2 * 1000 * 4
    assert task.flops is None


def test_resolve_param_overrides_change_launch_geometry(tmp_path):
    spec = load(tmp_path, spec_text())
    shape = spec.shape_named("odd")
    default = spec.resolve(shape)
    assert default.launch.grid == (1, 1, 1) and default.launch.block == (128, 1, 1)
    big = spec.shape_named("big")
    task = spec.resolve(big, {"BLOCK": 256})
    assert task.launch.grid == (4, 1, 1)  # ceil_div(1000, 256)
    assert task.launch.block == (256, 1, 1)
    assert task.launch.shared_mem == 1024
    assert task.params == {"BLOCK": 256, "UNROLL": 4}
    task = spec.resolve(big, {"BLOCK": 64})
    assert task.launch.grid == (16, 1, 1)
    assert task.launch.block == (64, 1, 1)
    # the spec itself is untouched by an override
    assert spec.resolve(big).launch.block == (128, 1, 1)


def test_resolve_2d_launch_and_metrics(tmp_path):
    text = spec_text(
        launch=('[launch]\ngrid = ["ceil_div(N, BX)", "ceil_div(M, BY)"]\n'
                'block = ["BX", "BY"]\n'),
        params='[params]\nBX = 16\nBY = 8\n',
        args='''
[[args]]
name = "A"
dtype = "bf16"
shape = ["M", "N"]
role = "inout"

[[args]]
name = "s"
dtype = "fp32"
role = "scalar"
value = 0.5
''',
        shapes="[[shapes]]\nM = 100\nN = 33\n",
        reference=None,
    ) + '\n[metrics]\nbytes = "M * N * 3"\nflops = "2 * M * N"\n'
    spec = load(tmp_path, text)
    task = spec.resolve(spec.shapes[0])
    assert task.launch.grid == (3, 13, 1)
    assert task.launch.block == (16, 8, 1)
    assert task.launch.threads_per_block == 128
    assert task.bytes_moved == 100 * 33 * 3  # metrics.bytes overrides the default count
    assert task.flops == 6600.0 and isinstance(task.flops, float)
    a, s = task.args
    assert a.bytes_moved == 2 * 100 * 33 * 2  # inout: read and written
    assert a.init == ("normal", 0.0, 1.0)
    assert s.value == 0.5


def test_inout_counts_twice_in_default_bytes(tmp_path):
    args = BASE["args"].replace('name = "y"\ndtype = "fp32"\nshape = ["n"]\nrole = "output"',
                                'name = "y"\ndtype = "fp16"\nshape = ["n", 3]\nrole = "inout"')
    spec = load(tmp_path, spec_text(args=args))
    task = spec.resolve(spec.shape_named("odd"))
    assert task.args[1].shape == (37, 3)
    assert task.bytes_moved == 37 * 4 + 2 * 37 * 3 * 2


def test_default_init(tmp_path):
    args = '''
[[args]]
name = "f"
dtype = "half"
shape = ["n"]
role = "input"

[[args]]
name = "i"
dtype = "int64"
shape = ["n"]
role = "inout"

[[args]]
name = "o"
dtype = "float"
shape = ["n"]
role = "output"
'''
    spec = load(tmp_path, spec_text(args=args))
    f, i, o = spec.args
    assert f.dtype.name == "fp16"  # alias
    assert o.dtype.name == "fp32"  # alias
    assert f.init == Init("normal", 0.0, 1.0)
    assert i.init == Init("randint", 0, 100)
    assert o.init is None
    task = spec.resolve(spec.shapes[0])
    assert task.args[0].init == ("normal", 0.0, 1.0)
    assert task.args[1].init == ("randint", 0.0, 100.0)
    assert task.args[2].init is None


def test_init_bounds_may_be_expressions(tmp_path):
    args = BASE["args"].replace(
        'dtype = "fp32"\nshape = ["n"]\nrole = "input"\ninit = { dist = "uniform", low = -2.0, '
        'high = 2.0 }',
        'dtype = "int32"\nshape = ["n"]\nrole = "input"\ninit = { dist = "randint", low = 0, '
        'high = "n" }')
    spec = load(tmp_path, spec_text(args=args))
    assert spec.args[0].init == Init("randint", "0", "n")
    assert spec.resolve(spec.shape_named("odd")).args[0].init == ("randint", 0.0, 37.0)


def test_shape_named(tmp_path):
    spec = load(tmp_path, spec_text())
    assert spec.shape_named("odd") == Shape("odd", (("n", 37),))
    with pytest.raises(SpecError) as info:
        spec.shape_named("huge")
    err = info.value
    assert err.field == "shapes"
    assert err.got == "huge"
    assert "a shape name among: big, odd" in str(err)
    assert "'huge'" in str(err)


# ----------------------------------------------------------------------------------------------
# Every shipped example loads and resolves
# ----------------------------------------------------------------------------------------------

def test_examples_exist():
    names = {p.name for p in EXAMPLES}
    assert "silu_and_mul.toml" in names and "scale.toml" in names
    assert len(EXAMPLES) >= 14


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_resolves_every_shape(path):
    spec = load_spec(path)
    assert spec.shapes, path
    assert spec.source_path.is_file()
    assert spec.kernel_name
    assert spec.bytes_expr is None  # so bytes_moved is the default count checked below
    expected_roles = {"input": 1, "output": 1, "inout": 2}
    for shape in spec.shapes:
        task = spec.resolve(shape)
        assert task.shape_name == shape.name
        assert task.dims == shape.as_dict()
        assert all(v > 0 for v in task.launch.grid + task.launch.block)
        assert task.launch.shared_mem >= 0
        total = 0
        for arg, arg_spec in zip(task.args, spec.args, strict=True):
            assert arg.itemsize == arg_spec.dtype.itemsize
            if arg.role == "scalar":
                assert arg.shape == ()
                assert arg.value is not None
                if not arg_spec.dtype.is_float:
                    assert type(arg.value) is int
                continue
            assert arg.shape, arg.name
            assert all(isinstance(s, int) and s > 0 for s in arg.shape), (arg.name, arg.shape)
            total += expected_roles[arg.role] * math.prod(arg.shape) * arg.itemsize
        assert task.bytes_moved == total
        assert any(a.role in ("output", "inout") for a in task.args)


def test_silu_and_mul_example_values():
    spec = load_spec(REPO / "examples" / "silu_and_mul.toml")
    task = spec.resolve(spec.shape_named("odd"))
    assert task.launch.grid == (37, 1, 1)
    assert task.launch.block == (256, 1, 1)
    out, x, d = task.args
    assert out.shape == (37, 1001) and x.shape == (37, 2002)
    assert d.value == 1001
    assert task.bytes_moved == 37 * 1001 * 2 + 37 * 2002 * 2
    task = spec.resolve(spec.shape_named("odd"), {"BLOCK": 1024})
    assert task.launch.block == (1024, 1, 1)


def test_sgemm_example_flops():
    spec = load_spec(REPO / "examples" / "sgemm.toml")
    task = spec.resolve(spec.shape_named("odd"))
    assert task.flops == 2.0 * 333 * 517 * 1001
    assert task.launch.grid == (33, 21, 1)


# ----------------------------------------------------------------------------------------------
# Bad specs: SpecError naming the field and what was expected
# ----------------------------------------------------------------------------------------------

def _arg_x(**fields: str) -> str:
    base = {"name": '"x"', "dtype": '"fp32"', "shape": '["n"]', "role": '"input"'}
    base.update(fields)
    body = "\n".join(f"{k} = {v}" for k, v in base.items() if v is not None)
    return f"[[args]]\n{body}\n"


_Y = '[[args]]\nname = "y"\ndtype = "fp32"\nshape = ["n"]\nrole = "output"\n'


def test_missing_kernel_table(tmp_path):
    assert_spec_error(tmp_path, spec_text(kernel=None), "kernel", "a [kernel] table")


def test_kernel_not_a_table(tmp_path):
    text = 'kernel = "scale"\n' + spec_text(kernel=None)
    assert_spec_error(tmp_path, text, "kernel", "a table")


def test_missing_kernel_name(tmp_path):
    err = assert_spec_error(tmp_path, spec_text(kernel='[kernel]\nflags = []\n'), "kernel.name",
                            "a non-empty string")
    assert err.got is None


def test_blank_kernel_name(tmp_path):
    assert_spec_error(tmp_path, spec_text(kernel='[kernel]\nname = "  "\n'), "kernel.name",
                      "a non-empty string")


def test_unknown_top_level_section(tmp_path):
    err = assert_spec_error(tmp_path, spec_text() + "\n[kernal]\nname = 'x'\n", "kernal",
                            "one of the sections", "'kernel'", "'launch'", "'args'")
    assert "kernal" in str(err)


def test_bad_flags(tmp_path):
    assert_spec_error(tmp_path, spec_text(kernel='[kernel]\nname = "k"\nflags = "-O3"\n'),
                      "kernel.flags", "a list of strings")


def test_missing_launch(tmp_path):
    assert_spec_error(tmp_path, spec_text(launch=None), "launch", "a [launch] table")


def test_missing_launch_block(tmp_path):
    assert_spec_error(tmp_path, spec_text(launch='[launch]\ngrid = ["1"]\n'), "launch.block",
                      "1 to 3 expressions")


def test_too_many_grid_dims(tmp_path):
    assert_spec_error(tmp_path, spec_text(launch='[launch]\ngrid = [1, 1, 1, 1]\nblock = 32\n'),
                      "launch.grid", "1 to 3 expressions")


@pytest.mark.parametrize("dtype", ['"fp8"', '"float128"', '""', "4"])
def test_bad_dtype(tmp_path, dtype):
    err = assert_spec_error(tmp_path, spec_text(args=_arg_x(dtype=dtype) + _Y), "args[0].dtype",
                            "one of fp16, bf16, fp32, fp64, int8, uint8, int32, uint32, int64, "
                            "uint64")
    assert repr(err.got) in str(err)


def test_missing_dtype(tmp_path):
    assert_spec_error(tmp_path, spec_text(args=_arg_x(dtype=None) + _Y), "args[0].dtype",
                      "one of fp16")


@pytest.mark.parametrize("role", ['"in"', '"Output"', "1"])
def test_bad_role(tmp_path, role):
    err = assert_spec_error(tmp_path, spec_text(args=_arg_x(role=role) + _Y), "args[0].role",
                            "one of input, output, inout, scalar")
    assert err.got is not None


def test_missing_role(tmp_path):
    assert_spec_error(tmp_path, spec_text(args=_Y + _arg_x(role=None)), "args[1].role",
                      "one of input, output, inout, scalar")


@pytest.mark.parametrize("shape", [None, "[]", '"n"'])
def test_missing_shape_for_array_arg(tmp_path, shape):
    assert_spec_error(tmp_path, spec_text(args=_Y + _arg_x(shape=shape)), "args[1].shape",
                      "a non-empty list of size expressions")


def test_scalar_without_value(tmp_path):
    args = _arg_x() + _Y + '[[args]]\nname = "n"\ndtype = "int32"\nrole = "scalar"\n'
    assert_spec_error(tmp_path, spec_text(args=args), "args[2].value", "the scalar's value")


def test_duplicate_arg_name(tmp_path):
    args = _arg_x() + _Y + _arg_x()
    err = assert_spec_error(tmp_path, spec_text(args=args), "args[2].name", "a unique identifier")
    assert err.got == "x"


def test_arg_name_not_identifier(tmp_path):
    err = assert_spec_error(tmp_path, spec_text(args=_arg_x(name='"my-x"') + _Y),
                            "args[0].name", "a unique identifier")
    assert err.got == "my-x"


def test_missing_args(tmp_path):
    assert_spec_error(tmp_path, spec_text(args=None), "args", "a non-empty array of [[args]]")


def test_no_output_arg(tmp_path):
    args = _arg_x() + _arg_x(name='"z"')
    assert_spec_error(tmp_path, spec_text(args=args), "args",
                      "at least one argument with role output or inout")


def test_shape_missing_a_dim(tmp_path):
    args = _arg_x(shape='["n", "m"]') + _Y
    shapes = '[[shapes]]\nname = "full"\nn = 10\nm = 2\n\n[[shapes]]\nname = "partial"\nn = 5\n'
    err = assert_spec_error(tmp_path, spec_text(args=args, shapes=shapes),
                            "shapes[1] (partial)", "a value for 'm'", "args.x.shape")
    assert "partial" in str(err)


def test_shape_missing_a_dim_used_by_launch(tmp_path):
    launch = '[launch]\ngrid = ["ceil_div(n * H, BLOCK)"]\nblock = ["BLOCK"]\n'
    assert_spec_error(tmp_path, spec_text(launch=launch), "shapes[0] (big)", "a value for 'H'",
                      "launch.grid[0]")


def test_params_count_as_known_names(tmp_path):
    # BLOCK is a param, not a dim: no shape needs to define it.
    spec = load(tmp_path, spec_text())
    assert all("BLOCK" not in s.as_dict() for s in spec.shapes)


def test_missing_shapes(tmp_path):
    assert_spec_error(tmp_path, spec_text(shapes=None), "shapes",
                      "a non-empty array of [[shapes]]")


@pytest.mark.parametrize("value", ["0", "-4", "2.5", "true", '"8"'])
def test_non_positive_or_non_integer_dim(tmp_path, value):
    shapes = f'[[shapes]]\nname = "a"\nn = 8\n\n[[shapes]]\nname = "b"\nn = {value}\n'
    err = assert_spec_error(tmp_path, spec_text(shapes=shapes), "shapes[1].n",
                            "a positive integer")
    assert repr(err.got) in str(err)


def test_duplicate_shape_name(tmp_path):
    shapes = '[[shapes]]\nname = "a"\nn = 8\n\n[[shapes]]\nname = "a"\nn = 9\n'
    assert_spec_error(tmp_path, spec_text(shapes=shapes), "shapes[1].name", "a unique name")


@pytest.mark.parametrize("bad", ['"n +"', '"(n"', '"n n"'])
def test_bad_expression_syntax(tmp_path, bad):
    err = assert_spec_error(tmp_path, spec_text(args=_arg_x(shape=f'["n", {bad}]') + _Y),
                            "args[0].shape[1]", "a valid expression")
    assert "cannot parse expression" in str(err)


def test_bad_expression_in_launch(tmp_path):
    launch = '[launch]\ngrid = ["ceil_div(n, BLOCK"]\nblock = ["BLOCK"]\n'
    assert_spec_error(tmp_path, spec_text(launch=launch), "launch.grid[0]", "a valid expression")


@pytest.mark.parametrize(
    ("launch", "field"),
    [
        ('grid = ["__import__(\'os\').system(\'true\')"]\nblock = ["BLOCK"]', "launch.grid[0]"),
        ('grid = ["1"]\nblock = ["open(\'/etc/passwd\')"]', "launch.block[0]"),
        ('grid = ["1"]\nblock = [32]\nshared_mem = "exec(\'1\')"', "launch.shared_mem"),
        ('grid = ["n.bit_length()"]\nblock = [32]', "launch.grid[0]"),
    ],
)
def test_forbidden_function_in_expression(tmp_path, launch, field):
    err = assert_spec_error(tmp_path, spec_text(launch=f"[launch]\n{launch}\n"), field,
                            "a valid expression")
    assert "only the functions" in str(err)


def test_forbidden_construct_in_scalar_value(tmp_path):
    scalar = '[[args]]\nname = "n"\ndtype = "int32"\nrole = "scalar"\nvalue = "n[0]"\n'
    args = _arg_x() + _Y + scalar
    err = assert_spec_error(tmp_path, spec_text(args=args), "args[2].value", "a valid expression")
    assert "Subscript is not allowed" in str(err)


def test_tolerance_negative_atol(tmp_path):
    err = assert_spec_error(tmp_path,
                            spec_text(tolerance="[tolerance]\nfp32 = { atol = -1e-3 }\n"),
                            "tolerance.fp32.atol", "a non-negative number")
    assert err.got == -1e-3


def test_tolerance_negative_rtol(tmp_path):
    assert_spec_error(tmp_path, spec_text(tolerance="[tolerance]\nhalf = { rtol = -1 }\n"),
                      "tolerance.half.rtol", "a non-negative number")


def test_tolerance_unknown_dtype(tmp_path):
    assert_spec_error(tmp_path, spec_text(tolerance="[tolerance]\nfp8 = { atol = 1 }\n"),
                      "tolerance.fp8", "a dtype name mapped to {atol, rtol}")


def test_tolerance_alias_and_partial(tmp_path):
    spec = load(tmp_path, spec_text(tolerance="[tolerance]\nhalf = { atol = 0.5 }\n"))
    fp16 = dtypes.lookup("fp16")
    assert spec.tolerance.per_dtype == (("fp16", 0.5, fp16.rtol),)
    assert spec.tolerance.for_dtype(fp16) == (0.5, fp16.rtol)


@pytest.mark.parametrize("fraction", ["1.0", "1", "-0.1", "1.5", "true", '"0.1"', "nan"])
def test_max_bad_fraction_out_of_range(tmp_path, fraction):
    err = assert_spec_error(tmp_path,
                            spec_text(tolerance=f"[tolerance]\nmax_bad_fraction = {fraction}\n"),
                            "tolerance.max_bad_fraction", "a number in [0, 1)")
    assert "got" in str(err)


@pytest.mark.parametrize("fraction", ["0", "0.0", "0.5", "0.999"])
def test_max_bad_fraction_in_range(tmp_path, fraction):
    spec = load(tmp_path, spec_text(tolerance=f"[tolerance]\nmax_bad_fraction = {fraction}\n"))
    assert spec.tolerance.max_bad_fraction == float(fraction)


@pytest.mark.parametrize("fn", ['"reference.py"', '"a:b:c"', '":scale"', '"ref.py:"', "3"])
def test_reference_not_a_colon_b(tmp_path, fn):
    err = assert_spec_error(tmp_path, spec_text(reference=f"[reference]\nfunction = {fn}\n"),
                            "reference.function", "'file.py:function' or 'module:function'")
    assert repr(err.got) in str(err)


def test_reference_module_function(tmp_path):
    spec = load(tmp_path, spec_text(reference='[reference]\nfunction = "my.mod:f"\n'))
    assert spec.reference.function == "my.mod:f"


def test_randint_on_float_arg(tmp_path):
    arg = _arg_x(init='{ dist = "randint", low = 0, high = 10 }')
    err = assert_spec_error(tmp_path, spec_text(args=arg + _Y), "args[0].init.dist",
                            "normal or uniform for a floating-point argument")
    assert err.got == "randint"


def test_unknown_init_dist(tmp_path):
    arg = _arg_x(init='{ dist = "gauss", mean = 0, std = 1 }')
    assert_spec_error(tmp_path, spec_text(args=arg + _Y), "args[0].init",
                      "a table with dist one of ['normal', 'randint', 'uniform']")


def test_init_missing_bound(tmp_path):
    arg = _arg_x(init='{ dist = "uniform", low = 0 }')
    assert_spec_error(tmp_path, spec_text(args=arg + _Y), "args[0].init.high",
                      "a value for 'high' (uniform)")


def test_param_table_without_default(tmp_path):
    assert_spec_error(tmp_path, spec_text(params="[params]\nBLOCK = { values = [1, 2] }\n"),
                      "params.BLOCK.default", "a default value")


def test_invalid_toml_syntax(tmp_path):
    err = assert_spec_error(tmp_path, spec_text() + "\n[[args]\nname = \n", "(syntax)",
                            "valid TOML")
    assert isinstance(err.got, str) and err.got


def test_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(SpecError) as info:
        load_spec(path)
    err = info.value
    assert err.field == "(file)"
    assert "an existing TOML spec file" in err.expected
    assert str(path) in str(err)


def test_directory_is_not_a_spec_file(tmp_path):
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path)
    assert info.value.field == "(file)"


def test_non_string_kernel_source(tmp_path):
    assert_spec_error(tmp_path, spec_text(kernel='[kernel]\nname = "k"\nsource = 5\n'),
                      "kernel.source", "string")


# ----------------------------------------------------------------------------------------------
# Errors found only when resolving a shape
# ----------------------------------------------------------------------------------------------

BIG_ONLY = '[[shapes]]\nname = "big"\nn = 1000\n'
ODD_ONLY = '[[shapes]]\nname = "odd"\nn = 37\n'


# A shape that does not resolve at the defaults is refused when the spec is read (the spec
# check runs before anything else), with the words resolve itself uses.

def test_resolve_non_integer_size(tmp_path):
    spec = load(tmp_path, spec_text(args=_arg_x(shape='["n / 3"]') + _Y, shapes=None) + """
[[shapes]]
name = "nine"
n = 9
""")
    assert spec.resolve(Shape("nine", (("n", 9),))).args[0].shape == (3,)
    with pytest.raises(SpecError) as info:
        load(tmp_path, spec_text(args=_arg_x(shape='["n / 3"]') + _Y))  # 1000 / 3
    err = info.value
    assert err.field == "expression"
    assert "shape big" in str(err)
    assert "expected an integer" in str(err)


def test_resolve_zero_size(tmp_path):
    spec = load(tmp_path, spec_text(args=_arg_x(shape='["n - 37"]') + _Y, shapes=BIG_ONLY))
    spec.resolve(spec.shape_named("big"))
    with pytest.raises(SpecError) as info:
        spec.resolve(Shape("odd", (("n", 37),)))
    assert info.value.field == "args[0].shape"
    assert "positive sizes" in str(info.value)
    assert info.value.got == (0,)
    with pytest.raises(SpecError, match="shape odd.*positive sizes"):
        load(tmp_path, spec_text(args=_arg_x(shape='["n - 37"]') + _Y))


def test_resolve_zero_launch(tmp_path):
    launch = '[launch]\ngrid = ["n - 37"]\nblock = ["BLOCK"]\n'
    spec = load(tmp_path, spec_text(launch=launch, shapes=BIG_ONLY))
    assert spec.resolve(spec.shape_named("big")).launch.grid == (963, 1, 1)
    with pytest.raises(SpecError) as info:
        spec.resolve(Shape("odd", (("n", 37),)))
    assert info.value.field == "launch"
    assert "positive grid and block sizes" in str(info.value)
    with pytest.raises(SpecError, match="shape odd.*positive grid"):
        load(tmp_path, spec_text(launch=launch))


def test_resolve_unknown_name_from_string_param(tmp_path):
    # String params become -D macros but are not numbers, so expressions cannot use them.
    params = '[params]\nBLOCK = 128\nMODE = "fast"\n'
    launch = '[launch]\ngrid = ["ceil_div(n, BLOCK) + MODE"]\nblock = ["BLOCK"]\n'
    with pytest.raises(SpecError) as info:
        load(tmp_path, spec_text(params=params, launch=launch))
    assert "unknown name 'MODE'" in str(info.value)


def test_resolve_rejects_negative_dims(tmp_path):
    with pytest.raises(SpecError, match="shape big.*positive sizes.*936, -1048"):
        load(tmp_path, spec_text(args=_arg_x(shape='["n - 64", "n - 2048"]') + _Y))


@pytest.mark.parametrize("table,bad", [
    ("[kernel]", "nmae"), ("[launch]", "blocks"), ("[metrics]", "byte"), ("[reference]", "fn"),
])
def test_misspelled_key_is_rejected(tmp_path, table, bad):
    from pragma_ncu.infra.errors import SpecError
    from pragma_ncu.spec.file import load_spec

    text = (REPO / "examples" / "faults" / "scale.toml").read_text()
    if table not in text:
        text += f"\n{table}\n"
    text = text.replace(f"{table}\n", f"{table}\n{bad} = \"x\"\n", 1)
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert err.value.field.endswith(bad)


def test_misspelled_arg_and_tolerance_keys(tmp_path):
    from pragma_ncu.infra.errors import SpecError
    from pragma_ncu.spec.file import load_spec

    base = (REPO / "examples" / "faults" / "scale.toml").read_text()
    for old, new, field in (('role = "input"', 'role = "input"\nshpae = ["n"]', "args[0].shpae"),
                            ("atol = 1e-5", "atoll = 1e-5", "tolerance.fp32.atoll")):
        path = tmp_path / "s.toml"
        path.write_text(base.replace(old, new, 1))
        with pytest.raises(SpecError) as err:
            load_spec(path)
        assert err.value.field == field
