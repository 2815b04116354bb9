"""Fuzz of what users and models hand the library: specs (TOML bytes, and tables with values of
every type), kernel sources, and LLM coder replies. Each is accepted, or refused with an
InputError whose message is one line (for a reply: the ReplyError the coder turns into a
retry); never another exception, and never slowly. Bounded for CI (2 cores): a few seconds per
test, the same examples on every run (derandomized, no example database)."""

from __future__ import annotations

import copy
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pragma_ncu import api
from pragma_ncu.build import task as tasks
from pragma_ncu.coder.reply import ReplyError, parse_reply
from pragma_ncu.draft import draft_spec
from pragma_ncu.infra.errors import InputError
from pragma_ncu.spec.file import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC_BYTES = (ROOT / "examples" / "faults" / "scale.toml").read_bytes()
SPEC_DATA = tomllib.loads(SPEC_BYTES.decode())
FUZZ = settings(max_examples=400, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def refused_in_one_line(call: Any) -> None:
    """`call()` succeeds or raises an InputError of one line, within a second."""
    start = time.perf_counter()
    try:
        call()
    except InputError as exc:
        message = str(exc)
        assert message.strip() and "\n" not in message and len(message) < 1000, message
    assert time.perf_counter() - start < 3.0  # a hang, not a busy machine


def mutations(data: bytes) -> st.SearchStrategy[bytes]:
    """`data` truncated, with a span replaced by random bytes, or with one byte changed."""
    n = len(data)
    cut = st.integers(0, n).map(lambda i: data[:i])
    splice = st.tuples(st.integers(0, n), st.integers(0, 40), st.binary(max_size=40)).map(
        lambda t: data[:t[0]] + t[2] + data[t[0] + t[1]:])
    flip = st.tuples(st.integers(0, max(0, n - 1)), st.integers(0, 255)).map(
        lambda t: data[:t[0]] + bytes([t[1]]) + data[t[0] + 1:])
    return st.one_of(cut, splice, flip)


# --- specs ------------------------------------------------------------------------------------

@FUZZ
@given(st.one_of(st.binary(max_size=300), mutations(SPEC_BYTES),
                 st.sampled_from([SPEC_BYTES.decode().encode("utf-16"),
                                  SPEC_BYTES.replace(b"# ", b"# caf\xe9 "),
                                  b"[[args]]\n" * 2000, b"x = [" * 400 + b"]" * 400,
                                  b"a = {b = " * 400 + b"1" + b"}" * 400])))
def test_spec_files_truncated_garbled_or_foreign(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scale.toml"
        path.write_bytes(data)
        (Path(folder) / "scale.cu").write_text("")
        refused_in_one_line(lambda: load_spec(path))


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in spec tables (a key of a table, an item of a list)."""
    items = (data.items() if isinstance(data, dict)
             else enumerate(data) if isinstance(data, list) else ())
    found = []
    for key, value in items:
        found.append((*prefix, key))
        found += _paths(value, (*prefix, key))
    return found


PATHS = _paths(SPEC_DATA)
SCALARS = st.one_of(
    st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([0, -1, 10**12, 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["n * n * n * n", "9**9**7", "ceil_div(n, 0)", "1e308 * 1e308", "(" * 300,
                     "log2(-1)", "n if n else", "min()", "__import__('os')", "<fill>"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(PATHS), st.one_of(VALUES, st.just(KeyError))),
                min_size=1, max_size=3))
def test_spec_tables_with_values_of_every_type(changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    """Each change sets one place of a valid spec to another value (KeyError: removes it)."""
    data = copy.deepcopy(SPEC_DATA)
    for path, value in changes:
        parent = data
        try:
            for key in path[:-1]:
                parent = parent[key]
            if value is KeyError:
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or replaced this place
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "scale.cu").write_text("")
        refused_in_one_line(lambda: parse_spec(data, Path(folder) / "scale.toml"))


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(st.sampled_from(["n", "BLOCK", "0", "1", "9", "2.5", "1e300", "-7"]),
                       st.integers(0, 10**30).map(str))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", "and"]),
                  inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["ceil_div", "min", "max"]), inner, inner).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        inner.map(lambda e: f"-{e}"), inner.map(lambda e: f"log2({e})")), max_leaves=40)


@FUZZ
@given(st.one_of(_expressions(), st.sampled_from(["9**9**7", "2**2**2**2**2**2**2", "-" * 500 + "n",
                                                   "min(" + "n, " * 400 + "n)"])),
       st.sampled_from([("launch", "grid", 0), ("launch", "shared_mem"),
                                        ("args", 0, "shape", 0), ("metrics", "bytes")]))
def test_spec_expressions_deep_and_huge(text: str, where: tuple[Any, ...]) -> None:
    data = copy.deepcopy(SPEC_DATA)
    data.setdefault("metrics", {})
    parent = data
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = text
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "scale.cu").write_text("")
        refused_in_one_line(lambda: parse_spec(data, Path(folder) / "scale.toml"))


# --- kernel sources ---------------------------------------------------------------------------

KERNEL = (ROOT / "examples" / "faults" / "scale.cu").read_bytes()


@FUZZ
@given(st.one_of(st.binary(max_size=200), mutations(KERNEL), st.sampled_from([
    b"", b"\n", KERNEL.decode().encode("utf-16"), KERNEL.decode().encode("utf-32"),
    b"// caf\xe9\n" + KERNEL, KERNEL.replace(b"scale", b"sca1e"), b"\x00" * 64,
    b"#include \"missing.h\"\n", b"__global__ void {{ oops(\n"])))
def test_kernel_sources_binary_empty_foreign_or_without_the_kernel(data: bytes) -> None:
    """Loading (which checks the kernel is there) and drafting a spec (`init`)."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "scale.toml").write_bytes(SPEC_BYTES)
        kernel = Path(folder) / "scale.cu"
        kernel.write_bytes(data)
        refused_in_one_line(lambda: api.load(kernel))
        refused_in_one_line(lambda: draft_spec(kernel))


@FUZZ
@given(st.one_of(st.text(max_size=120), mutations(b"{% if BLOCK > 1 %}{{ BLOCK }}{% endif %}\n"
                                                  ).map(lambda b: b.decode("latin-1"))))
def test_kernel_templates_that_do_not_render(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        data = copy.deepcopy(SPEC_DATA)
        data["kernel"]["source"] = "scale.cu.j2"
        (Path(folder) / "scale.cu.j2").write_text(text + KERNEL.decode())
        spec = parse_spec(data, Path(folder) / "scale.toml")
        refused_in_one_line(lambda: tasks.build_request(spec, "sm_90"))


# --- LLM replies ------------------------------------------------------------------------------

CODE = """#ifndef BLOCK
#define BLOCK 256
#endif
extern "C" __global__ void scale(float* y, const float* x, int n, float alpha)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = alpha * x[i];
}
"""
TOML = """[params]
BLOCK = { default = 256, values = [128, 256] }

[launch]
grid = ["ceil_div(n, BLOCK)"]
block = ["BLOCK"]
"""
REPLY = f"Here it is.\n\n```cuda\n{CODE}```\n\n```toml\n{TOML}```\n\nOne block per 256.\n"


@FUZZ
@given(st.one_of(
    st.text(max_size=300),
    mutations(REPLY.encode()).map(lambda b: b.decode("utf-8", "replace")),
    _expressions().map(lambda e: REPLY.replace('"ceil_div(n, BLOCK)"', f'"{e}"')),
    st.sampled_from(['{"code": "', REPLY[:len(REPLY) // 2], REPLY.replace("```toml", "```json"),
                     REPLY.replace("[params]", "[params]\n" + "x = [" * 300),
                     REPLY.replace('"BLOCK"]', '"' + "BLOCK * " * 400 + 'BLOCK"]')])))
def test_llm_replies_garbled_truncated_or_huge(text: str) -> None:
    start = time.perf_counter()
    try:
        parse_reply(text, "scale", spec=SPEC_DATA)
    except ReplyError as exc:
        assert str(exc).strip()
    assert time.perf_counter() - start < 3.0  # a hang, not a busy machine
