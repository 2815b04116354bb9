"""The config table in the layout vLLM and SGLang load (`search.vllm_table`): written from a
search's winners and by `config convert`, read back by `best_config`, and loaded by
tests/vllm_lookup.py, a script that looks configs up as those servers do (by the device's name
and the batch size) with nothing of pragma-ncu imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli
from pragma_ncu.search import configs, table, vllm_table
from pragma_ncu.search.autotune import SearchOptions, tune_parameters
from pragma_ncu.search.output import TableFormat, write_table
from pragma_ncu.search.results import Budget, SearchResult
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import spec_tables, toml_text
from pragma_ncu.spec.model import TaskSpec
from tests.fakes.replay import ReplayEvaluator
from tests.fakes.tuner import H200_LIMITS, synthetic_recording, synthetic_spec

ROOT = Path(__file__).resolve().parents[2]
LOOKUP = ROOT / "tests" / "vllm_lookup.py"
DEVICE = "NVIDIA H100 80GB HBM3"  # what torch.cuda.get_device_name() says of an H100 SXM
BATCHES = (1, 16, 64, 256, 1024)


def _moe_spec(tmp: Path, batches=BATCHES, n=(384,)) -> TaskSpec:
    """The synthetic spec with MoE-like dims: M (the batch) varies, E and N stay fixed."""
    shapes = [{"name": f"m{m}-n{nn}", "T": m, "d": nn, "E": 128} for nn in n for m in batches]
    args = [{"name": "out", "dtype": "fp16", "shape": ["T", "d"], "role": "output"},
            {"name": "x", "dtype": "fp16", "shape": ["T", "2 * d"], "role": "input"},
            {"name": "d", "dtype": "int32", "role": "scalar", "value": "d"},
            {"name": "e", "dtype": "int32", "role": "scalar", "value": "E"}]
    return synthetic_spec(tmp, shapes=shapes, args=args)


def _searched(spec: TaskSpec) -> SearchResult:
    """Each shape's winner depends on its batch size: the cost model favours the BLOCK
    nearest 2 * T."""
    names = tuple(s.name for s in spec.shapes)
    sizes = {s.name: s.as_dict()["T"] for s in spec.shapes}

    def cost(point, shape: str) -> float:
        best = min((32, 64, 128, 256, 512, 1024), key=lambda b: abs(b - 2 * sizes[shape]))
        return 10.0 * (1 + abs(int(point["BLOCK"]).bit_length() - best.bit_length()) * 0.2
                       + {1: 0.9, 2: 0.45, 4: 0.15, 8: 0.0}[int(point["VEC"])]
                       + {1: 0.0, 2: 0.04, 4: 0.12}[int(point["ROWS"])])
    space = Space.from_spec(spec)
    evaluator = ReplayEvaluator(synthetic_recording(space, names, cost=cost), H200_LIMITS,
                                seed=1)
    result = tune_parameters(Problem(spec, spec.shapes, space), evaluator,
                             SearchOptions(strategy="exhaustive", budget=Budget(500)),
                             clock=evaluator.clock)
    return type(result)(**{**result.__dict__, "device": DEVICE})


def _lookup(folder: Path, fixed: list[str], batches) -> dict:
    args = [sys.executable, str(LOOKUP), str(folder), "--device-name", DEVICE]
    args += [a for f in fixed for a in ("--fixed", f)]
    args += [a for b in batches for a in ("--batch", str(b))]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_names_follow_the_servers_convention() -> None:
    assert vllm_table.file_name({"E": 128, "N": 384}, "NVIDIA H200") == \
        "E=128,N=384,device_name=NVIDIA_H200.json"
    assert vllm_table.file_name({}, "NVIDIA A100-SXM4-80GB") == \
        "device_name=NVIDIA_A100-SXM4-80GB.json"  # only spaces change
    assert vllm_table.device_part(DEVICE) == "NVIDIA_H100_80GB_HBM3"
    name = "E=256,N=128,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
    assert vllm_table.parse_file_name(name) == (
        {"E": 256, "N": 128}, "NVIDIA_H200", ",dtype=fp8_w8a8,block_shape=[128,128]")
    for bad in ("NVIDIA_H200.json", "E=x,device_name=H.json", "Edevice_name=H.json"):
        with pytest.raises(table.TableError):
            vllm_table.parse_file_name(bad)


def test_the_batch_dim_is_the_one_that_varies_or_the_one_named() -> None:
    moe = [{"M": m, "E": 128, "N": 384} for m in (1, 64, 4096)]
    assert vllm_table.batch_dim(moe) == "M"
    assert vllm_table.batch_dim([{"T": 7}]) == "T"  # one dim: nothing else to fix
    assert vllm_table.batch_dim(moe, "E") == "E"
    two = [{"T": 4096, "d": 11008}, {"T": 64, "d": 4096}]
    with pytest.raises(table.TableError, match="vary in T, d: name the batch-size dim"):
        vllm_table.batch_dim(two)
    with pytest.raises(table.TableError, match=r"fix every dim \(T, d\)"):
        vllm_table.batch_dim(two[:1])
    with pytest.raises(table.TableError, match="the shapes' dims are T, d"):
        vllm_table.batch_dim(two, "M")


def test_a_search_writes_the_layout_best_config_and_a_vllm_style_lookup_agree(
        tmp_path: Path) -> None:
    spec = _moe_spec(tmp_path)
    result = _searched(spec)
    root = tmp_path / "configs"
    [path] = write_table([result], spec, root, fmt=TableFormat("vllm"))
    assert path == root / "d=384,E=128,device_name=NVIDIA_H100_80GB_HBM3.json"
    data = json.loads(path.read_text())
    chosen = {s.as_dict()["T"]: dict(result.per_shape)[s.name].chosen for s in spec.shapes}
    assert list(data) == [str(m) for m in BATCHES]  # ascending batch sizes, as strings
    assert {int(k): v for k, v in data.items()} == chosen  # bare parameter dicts
    assert len({json.dumps(v, sort_keys=True) for v in data.values()}) > 1
    asked = [1, 2, 9, 16, 40, 41, 100, 160, 161, 600, 700, 5000]
    looked = _lookup(root, ["d=384", "E=128"], asked)
    assert looked["file"] == path.name
    for m in asked:
        mine = configs.best_config(path, m)
        assert looked["configs"][str(m)] == mine, m
        assert configs.best_config(root, {"T": m, "d": 384, "E": 128}, device=DEVICE) == mine
        assert configs.best_config(path, f"T={m}") == mine
    # nearest by absolute difference, as the servers do (this layout's log distance would take
    # 1024 for 600), and a tie goes to the first key in the file, the smaller
    assert chosen[256] != chosen[1024] and chosen[16] != chosen[64]
    assert configs.best_config(path, 600) == chosen[256]
    assert configs.best_config(path, 40) == chosen[16]
    assert configs.best_config(path, 41) == chosen[64]


def test_more_than_one_varying_dim_splits_the_table_by_the_others(tmp_path: Path) -> None:
    spec = _moe_spec(tmp_path, batches=(1, 64), n=(384, 768))
    result = _searched(spec)
    root = tmp_path / "configs"
    with pytest.raises(table.TableError, match="vary in T, d"):
        write_table([result], spec, root, fmt=TableFormat("vllm"))
    paths = write_table([result], spec, root, fmt=TableFormat("vllm", "T"))
    assert [p.name for p in paths] == [f"d={n},E=128,device_name=NVIDIA_H100_80GB_HBM3.json"
                                       for n in (384, 768)]
    for n in (384, 768):
        looked = _lookup(root, [f"d={n}", "E=128"], [1, 64])["configs"]
        for m in (1, 64):
            assert looked[str(m)] == dict(result.per_shape)[f"m{m}-n{n}"].chosen


def test_writing_again_keeps_the_batch_sizes_not_tuned_now(tmp_path: Path) -> None:
    root = tmp_path / "configs"
    old = {"E": 128, "N": 384}
    name = vllm_table.file_name(old, DEVICE)
    first = vllm_table.VllmTable(old, "", "", {1: {"A": 1}, 64: {"A": 2}})
    vllm_table.write(root, {name: first})
    vllm_table.write(root, {name: vllm_table.VllmTable(old, "", "", {64: {"A": 3},
                                                                     8: {"A": 4}})})
    assert json.loads((root / name).read_text()) == {"1": {"A": 1}, "8": {"A": 4},
                                                     "64": {"A": 3}}


def test_bad_files_and_questions_get_clear_errors(tmp_path: Path) -> None:
    path = tmp_path / vllm_table.file_name({"E": 8}, "NVIDIA H200")
    path.write_text('{"16": {"A": 1}, "x": {"A": 2}}')
    with pytest.raises(table.TableError, match="every key must be a batch size"):
        configs.best_config(path, 3)
    path.write_text('{"16": {"A": 1}}')
    with pytest.raises(table.TableError, match="the file is for E=8; the shape gives E=9"):
        configs.best_config(path, {"M": 3, "E": 9})
    with pytest.raises(table.TableError, match="exactly one dim"):
        configs.best_config(path, {"M": 3, "K": 9})
    with pytest.raises(table.TableError, match="no tuned-config table"):
        configs.best_config(tmp_path, {"M": 3, "E": 8}, device="NVIDIA A100")
    assert configs.best_config(tmp_path, {"M": 3, "E": 8}, device="NVIDIA H200") == {"A": 1}


def test_config_convert_writes_the_layout_from_an_autotune_table(tmp_path: Path) -> None:
    spec = _moe_spec(tmp_path)
    result = _searched(spec)
    [own] = write_table([result], spec, tmp_path / "configs")
    assert own.name == "NVIDIA_H100_80GB_HBM3.json"
    out = tmp_path / "vllm"
    res = CliRunner().invoke(cli, ["config", "convert", str(own), "--to", "vllm", "--out",
                                   str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    [written] = json.loads(res.output).values()
    assert Path(written).name == "d=384,E=128,device_name=NVIDIA_H100_80GB_HBM3.json"
    looked = _lookup(out, ["d=384", "E=128"], BATCHES)["configs"]
    for s in spec.shapes:
        assert looked[str(s.as_dict()["T"])] == dict(result.per_shape)[s.name].chosen
        assert configs.best_config(Path(written), s.as_dict()) == configs.best_config(own,
                                                                                  s.as_dict())
    bad = CliRunner().invoke(cli, ["config", "convert", str(own), "--to", "vllm",
                                   "--batch-dim", "Q"])
    assert bad.exit_code == 2 and "--batch-dim" in bad.output


@pytest.mark.parametrize(("dims", "params", "words"), [
    ({"M": "x", "N": 2}, {"B": 1}, "configs['M=1,N=2'].dims.M must be a positive whole number, "
     "not 'x'"),
    ({"M": 1, "N": -3.5}, {"B": 1}, "configs['M=1,N=2'].dims.N must be a positive whole "
     "number, not -3.5"),
    ({"M": 1, "N": [2]}, {"B": 1}, "dims.N must be a positive whole number, not [2]"),
    ({"M": 1}, {"B": 1}, "configs['M=1,N=2'].dims must give M, N"),
    ({"M": 1, "N": 2}, [1, 2], "configs['M=1,N=2'].params must be an object of parameter "
     "values, not [1, 2]"),
])
def test_config_convert_refuses_a_table_it_would_misread_naming_the_key(
        tmp_path: Path, dims: dict, params: object, words: str) -> None:
    """Issue 35: a non-numeric dim or list-shaped params exited 70; a dim of -3.5 was written
    as "N=-3" (truncated)."""
    own = tmp_path / "t.json"
    own.write_text(json.dumps({"format": 1, "kernel": "k", "device": "NVIDIA H200",
                               "dims": ["M", "N"], "configs": {
                                   "M=1,N=2": {"params": params, "dims": dims}}}))
    res = CliRunner().invoke(cli, ["config", "convert", str(own), "--to", "vllm",
                                   "--batch-dim", "M"])
    assert res.exit_code == 2, res.output
    assert f"{own} is not a pragma-ncu config table" in res.output and words in res.output
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]  # nothing written


def test_a_whole_number_written_as_a_float_is_read_and_a_fraction_is_refused() -> None:
    assert table.parse_dims({"M": 4096.0}) == {"M": 4096}
    with pytest.raises(table.TableError, match="M=3.5 is not a whole number"):
        table.parse_dims({"M": 3.5})


def test_autotune_refuses_a_vllm_table_without_a_batch_dim_before_any_work(
        tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path)  # shapes vary in T and d
    spec.spec_path.write_text(toml_text(spec_tables(spec)))
    res = CliRunner().invoke(cli, ["autotune", "--kernel", str(spec.source_path),
                                   "--spec", str(spec.spec_path), "--config-format", "vllm",
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert "vary in T, d" in res.output and "--batch-dim" in res.output
    assert not (tmp_path / "out").exists()
    res = CliRunner().invoke(cli, ["autotune", "--kernel", str(spec.source_path),
                                   "--spec", str(spec.spec_path), "--batch-dim", "T"])
    assert res.exit_code == 2 and "goes with --config-format vllm" in res.output
