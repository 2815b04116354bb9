"""The per-shape config table: written from search results, read back by `best_config`, the
nearest tuned shape standing in for one that was not tuned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pragma_ncu.search import configs, table
from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.output import write_table
from pragma_ncu.search.results import Budget
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Space
from pragma_ncu.spec.model import Shape
from tests.fakes.replay import ReplayEvaluator
from tests.fakes.tuner import H200_LIMITS, synthetic_recording, synthetic_spec

ROWS = (16, 256, 4096)


def _entry(t: int, block: int, us: float = 10.0) -> table.Entry:
    return table.Entry(params={"BLOCK": block, "VEC": 8}, dims={"T": t, "d": 4096},
                       median_us=us, shape=f"T{t}")


def _tables(tmp: Path) -> Path:
    root = tmp / "configs"
    table.update_table(root, "k", "NVIDIA H200", ["T", "d"],
                       [_entry(t, b) for t, b in zip(ROWS, (64, 256, 1024), strict=True)])
    return root


def test_the_table_is_one_file_per_kernel_and_device_keyed_by_shape(tmp_path: Path) -> None:
    root = _tables(tmp_path)
    path = root / "k" / "NVIDIA_H200.json"
    data = json.loads(path.read_text())
    assert data["kernel"] == "k" and data["device"] == "NVIDIA H200"
    assert data["dims"] == ["T", "d"]
    assert list(data["configs"]) == ["T=16,d=4096", "T=256,d=4096", "T=4096,d=4096"]
    assert data["configs"]["T=256,d=4096"]["params"] == {"BLOCK": 256, "VEC": 8}


def test_best_config_round_trips_every_tuned_shape(tmp_path: Path) -> None:
    root = _tables(tmp_path)
    for t, block in zip(ROWS, (64, 256, 1024), strict=True):
        for query in ({"T": t, "d": 4096}, f"T={t},d=4096", f"d=4096,T={t}"):
            got = configs.best_config(root, query, kernel="k", device="NVIDIA H200")
            assert got == {"BLOCK": block, "VEC": 8}
        got = configs.best_config(root / "k" / "NVIDIA_H200.json", {"T": t, "d": 4096})
        assert got["BLOCK"] == block


def test_an_untuned_shape_gets_the_nearest_tuned_one_in_log_space(tmp_path: Path) -> None:
    loaded = table.load_table(_tables(tmp_path) / "k" / "NVIDIA_H200.json")
    for t, expect in ((1, 64), (40, 64), (100, 256), (700, 256), (2000, 1024), (10**6, 1024)):
        entry, exact = table.lookup(loaded, {"T": t, "d": 4096})
        assert not exact and entry.params["BLOCK"] == expect, t
    # 64 is 2 octaves from 16 and 2 from 256: the tie goes to the larger shape
    assert table.lookup(loaded, {"T": 64, "d": 4096})[0].params["BLOCK"] == 256
    # every dim counts: (16, 128) is 5 octaves from (16, 4096) and 8 from (4096, 128)
    two = table.Table("k", "x", ("T", "d"), {
        "a": table.Entry({"BLOCK": 1}, {"T": 16, "d": 4096}),
        "b": table.Entry({"BLOCK": 2}, {"T": 4096, "d": 128})})
    assert table.lookup(two, {"T": 16, "d": 128})[0].params == {"BLOCK": 1}
    assert table.lookup(two, {"T": 2048, "d": 256})[0].params == {"BLOCK": 2}


def test_updates_replace_and_keep_shapes(tmp_path: Path) -> None:
    root = _tables(tmp_path)
    table.update_table(root, "k", "NVIDIA H200", ["T", "d"],
                       [_entry(256, 512, us=8.0), _entry(1024, 128)])
    loaded = table.load_table(root / "k" / "NVIDIA_H200.json")
    assert len(loaded.configs) == 4
    assert loaded.configs["T=256,d=4096"].params["BLOCK"] == 512
    with pytest.raises(table.TableError, match="keyed by"):
        table.update_table(root, "k", "NVIDIA H200", ["M", "N"], [])


def test_bad_questions_get_clear_errors(tmp_path: Path) -> None:
    root = _tables(tmp_path)
    with pytest.raises(table.TableError, match="keyed by T, d; the shape gives T"):
        configs.best_config(root / "k" / "NVIDIA_H200.json", {"T": 16})
    with pytest.raises(table.TableError, match="name the kernel and the device"):
        configs.best_config(root, {"T": 16, "d": 1})
    with pytest.raises(table.TableError, match="no tuned-config table"):
        configs.best_config(root, {"T": 16, "d": 1}, kernel="k", device="NVIDIA A100")
    with pytest.raises(table.TableError, match="NAME=INT"):
        configs.best_config(root / "k" / "NVIDIA_H200.json", "T=big")
    (tmp_path / "junk.json").write_text("[]")
    with pytest.raises(table.TableError, match="not a pragma-ncu config table"):
        table.load_table(tmp_path / "junk.json")


def test_a_search_writes_its_per_shape_winners_and_they_load_back(tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path)
    space = Space.from_spec(spec)
    recording = synthetic_recording(space, ("big", "small"))
    evaluator = ReplayEvaluator(recording, H200_LIMITS, seed=1)
    result = tune_parameters(Problem(spec, spec.shapes, space), evaluator,
                             SearchOptions(strategy="exhaustive", budget=Budget(500)),
                             clock=evaluator.clock)
    result = type(result)(**{**result.__dict__, "device": "NVIDIA H200"})
    [path] = write_table([result], spec, tmp_path / "configs")
    assert path == tmp_path / "configs" / "k" / "NVIDIA_H200.json"
    for shape in spec.shapes:
        chosen = dict(result.per_shape)[shape.name].chosen
        assert configs.best_config(path, shape.as_dict()) == chosen
    extra = Shape("T=8,d=4096", (("T", 8), ("d", 4096)))
    assert configs.best_config(path, extra.as_dict()) == dict(result.per_shape)["small"].chosen
