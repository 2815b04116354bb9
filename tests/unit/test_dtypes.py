"""Unit tests for pragma_ncu.spec.dtypes: names, aliases, bf16 conversion, reference dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from pragma_ncu.spec import dtypes
from pragma_ncu.spec.dtypes import bf16_to_f32, f32_to_bf16, lookup, to_reference


def f32(bits: int) -> np.float32:
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def bf16_bits(values) -> list[int]:
    return [int(b) for b in f32_to_bf16(np.asarray(values, dtype=np.float32))]


# --- lookup -------------------------------------------------------------------------------------

def test_dtype_names():
    assert dtypes.dtype_names() == ["fp16", "bf16", "fp32", "fp64", "int8", "uint8", "int32",
                                    "uint32", "int64", "uint64"]


@pytest.mark.parametrize(
    ("name", "canonical", "itemsize", "is_float"),
    [
        ("fp16", "fp16", 2, True), ("half", "fp16", 2, True), ("float16", "fp16", 2, True),
        ("bf16", "bf16", 2, True), ("bfloat16", "bf16", 2, True),
        ("fp32", "fp32", 4, True), ("float", "fp32", 4, True), ("float32", "fp32", 4, True),
        ("fp64", "fp64", 8, True), ("double", "fp64", 8, True), ("float64", "fp64", 8, True),
        ("int", "int32", 4, False), ("int32", "int32", 4, False),
        ("long", "int64", 8, False), ("uint8", "uint8", 1, False), ("int8", "int8", 1, False),
        ("uint32", "uint32", 4, False), ("uint64", "uint64", 8, False),
        ("  HALF ", "fp16", 2, True), ("BFloat16", "bf16", 2, True), ("FP32", "fp32", 4, True),
    ],
)
def test_lookup(name, canonical, itemsize, is_float):
    d = lookup(name)
    assert d is not None
    assert d.name == canonical
    assert d.itemsize == itemsize
    assert d.is_float is is_float
    assert d.numpy_storage.itemsize == itemsize


@pytest.mark.parametrize("name", ["fp8", "", "float128", "int16", "complex64", "bool"])
def test_lookup_unknown(name):
    assert lookup(name) is None


def test_aliases_are_the_same_object():
    assert lookup("half") is lookup("fp16")
    assert lookup("double") is lookup("fp64")


def test_storage_and_default_tolerances():
    assert lookup("bf16").numpy_storage == np.dtype("uint16")  # raw bits on the host
    assert lookup("fp16").numpy_storage == np.dtype("float16")
    assert (lookup("int32").atol, lookup("int32").rtol) == (0.0, 0.0)
    assert lookup("fp16").atol > lookup("fp32").atol > lookup("fp64").atol > 0


@pytest.mark.parametrize(
    ("name", "ref"),
    [("fp16", "float32"), ("bf16", "float32"), ("fp32", "float32"), ("fp64", "float64"),
     ("int8", "int64"), ("uint8", "int64"), ("int32", "int64"), ("uint32", "int64"),
     ("int64", "int64"), ("uint64", "int64")],
)
def test_reference_dtype(name, ref):
    assert lookup(name).reference_dtype == np.dtype(ref)


# --- bf16 ---------------------------------------------------------------------------------------

def test_bf16_known_values():
    assert bf16_bits([1.0, -2.0, 0.0, -0.0, 0.5, np.inf, -np.inf]) == [
        0x3F80, 0xC000, 0x0000, 0x8000, 0x3F00, 0x7F80, 0xFF80]
    out = bf16_to_f32(np.array([0x3F80, 0xC000, 0x4049, 0x7F80], dtype=np.uint16))
    assert out.dtype == np.float32
    assert out.tolist() == [1.0, -2.0, 3.140625, np.inf]


def test_bf16_round_trip_of_every_non_nan_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    values = bf16_to_f32(bits)
    finite_or_inf = ~np.isnan(values)
    assert finite_or_inf.sum() == 65536 - 2 * 127  # NaN: exponent all ones, 127 mantissas/sign
    back = f32_to_bf16(values)
    assert back.dtype == np.uint16
    assert np.array_equal(back[finite_or_inf], bits[finite_or_inf])


def test_bf16_preserves_shape():
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    b = f32_to_bf16(x)
    assert b.shape == (3, 4)
    assert bf16_to_f32(b).shape == (3, 4)
    assert np.allclose(bf16_to_f32(b), x, rtol=2 ** -8, atol=0)


def test_bf16_rounds_to_nearest_even_on_ties():
    # bf16 keeps 7 mantissa bits: next to 1.0 the spacing is 2**-7, a tie is 2**-8 away.
    assert bf16_bits([1 + 2 ** -8]) == [0x3F80]  # tie between 0x3F80 (even) and 0x3F81: down
    assert bf16_bits([1 + 3 * 2 ** -8]) == [0x3F82]  # tie between 0x3F81 and 0x3F82 (even): up
    assert bf16_bits([-(1 + 2 ** -8)]) == [0xBF80]
    assert bf16_bits([-(1 + 3 * 2 ** -8)]) == [0xBF82]
    # raw bit patterns: lower half exactly 0x8000 is a tie
    assert int(f32_to_bf16(np.array([f32(0x40108000)]))[0]) == 0x4010
    assert int(f32_to_bf16(np.array([f32(0x40118000)]))[0]) == 0x4012


def test_bf16_rounds_to_nearest_off_ties():
    assert bf16_bits([1 + 2 ** -8 + 2 ** -20]) == [0x3F81]  # just above the tie: up
    assert bf16_bits([1 + 2 ** -8 - 2 ** -20]) == [0x3F80]  # just below the tie: down
    assert int(f32_to_bf16(np.array([f32(0x40107FFF)]))[0]) == 0x4010
    assert int(f32_to_bf16(np.array([f32(0x40108001)]))[0]) == 0x4011


def test_bf16_overflow_rounds_to_inf():
    assert bf16_bits([np.finfo(np.float32).max]) == [0x7F80]
    assert bf16_bits([-np.finfo(np.float32).max]) == [0xFF80]


@pytest.mark.parametrize(
    "bits",
    [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FBFFFFF],
)
def test_bf16_nan_stays_nan(bits):
    # 0x7F800001 would truncate to inf and 0xFFFFFFFF would overflow when rounded
    value = np.array([f32(bits), np.float32(1.0)])
    out = f32_to_bf16(value)
    assert int(out[0]) == 0x7FC0
    assert int(out[1]) == 0x3F80
    assert np.isnan(bf16_to_f32(out)[0])


def test_bf16_accepts_float64_and_lists():
    assert bf16_bits([1.0, 2.0]) == [0x3F80, 0x4000]
    out = f32_to_bf16(np.array([1.0, np.nan], dtype=np.float64))
    assert out.tolist() == [0x3F80, 0x7FC0]


# --- to_reference -------------------------------------------------------------------------------

def test_to_reference_bf16_decodes_bits():
    raw = np.array([0x3F80, 0xC040, 0x7FC0], dtype=np.uint16)
    ref = to_reference(lookup("bf16"), raw)
    assert ref.dtype == np.float32
    assert ref[:2].tolist() == [1.0, -3.0]
    assert np.isnan(ref[2])


def test_to_reference_fp16_widens():
    raw = np.array([1.5, -0.25, 65504.0], dtype=np.float16)
    ref = to_reference(lookup("fp16"), raw)
    assert ref.dtype == np.float32
    assert ref.tolist() == [1.5, -0.25, 65504.0]


def test_to_reference_fp32_and_fp64():
    raw32 = np.array([1.1, 2.2], dtype=np.float32)
    ref32 = to_reference(lookup("fp32"), raw32)
    assert ref32.dtype == np.float32 and np.array_equal(ref32, raw32)
    raw64 = np.array([1.1, 2.2], dtype=np.float64)
    ref64 = to_reference(lookup("fp64"), raw64)
    assert ref64.dtype == np.float64 and np.array_equal(ref64, raw64)


@pytest.mark.parametrize(
    ("name", "values"),
    [("int8", [-128, 0, 127]), ("uint8", [0, 200, 255]), ("int32", [-(2 ** 31), 7]),
     ("uint32", [0, 2 ** 32 - 1]), ("int64", [-(2 ** 63), 2 ** 62])],
)
def test_to_reference_integers_widen_to_int64(name, values):
    d = lookup(name)
    raw = np.array(values, dtype=d.numpy_storage)
    ref = to_reference(d, raw)
    assert ref.dtype == np.int64
    assert ref.tolist() == values


def test_to_reference_keeps_shape():
    raw = np.zeros((3, 5), dtype=np.uint16)
    assert to_reference(lookup("bf16"), raw).shape == (3, 5)
