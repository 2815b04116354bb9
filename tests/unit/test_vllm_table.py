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
from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.options import SearchOptions
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
    """The synthetic spec with MoE-like dims: T (the batch) varies, N and E stay fixed (in the
    spec's order, which is not the engines')."""
    shapes = [{"name": f"m{m}-n{nn}", "T": m, "N": nn, "E": 128} for nn in n for m in batches]
    args = [{"name": "out", "dtype": "fp16", "shape": ["T", "N"], "role": "output"},
            {"name": "x", "dtype": "fp16", "shape": ["T", "2 * N"], "role": "input"},
            {"name": "d", "dtype": "int32", "role": "scalar", "value": "N"},
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
    assert path == root / "E=128,N=384,device_name=NVIDIA_H100_80GB_HBM3.json"  # E first
    data = json.loads(path.read_text())
    chosen = {s.as_dict()["T"]: dict(result.per_shape)[s.name].chosen for s in spec.shapes}
    assert list(data) == [str(m) for m in BATCHES]  # ascending batch sizes, as strings
    assert {int(k): v for k, v in data.items()} == chosen  # bare parameter dicts
    assert len({json.dumps(v, sort_keys=True) for v in data.values()}) > 1
    asked = [1, 2, 9, 16, 40, 41, 100, 160, 161, 600, 700, 5000]
    looked = _lookup(root, ["E=128", "N=384"], asked)
    assert looked["file"] == path.name
    for m in asked:
        mine = configs.best_config(path, m)
        assert looked["configs"][str(m)] == mine, m
        assert configs.best_config(root, {"T": m, "N": 384, "E": 128}, device=DEVICE) == mine
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
    with pytest.raises(table.TableError, match="vary in T, N"):
        write_table([result], spec, root, fmt=TableFormat("vllm"))
    paths = write_table([result], spec, root, fmt=TableFormat("vllm", "T"))
    assert [p.name for p in paths] == [f"E=128,N={n},device_name=NVIDIA_H100_80GB_HBM3.json"
                                       for n in (384, 768)]
    for n in (384, 768):
        looked = _lookup(root, ["E=128", f"N={n}"], [1, 64])["configs"]
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
    assert Path(written).name == "E=128,N=384,device_name=NVIDIA_H100_80GB_HBM3.json"
    looked = _lookup(out, ["E=128", "N=384"], BATCHES)["configs"]
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
    assert res.exit_code == 2 and "--batch-dim: go with --config-format vllm or sglang" \
        in res.output


# Issue 36: the engines' own naming, from the file names they ship and their loaders' rules.

SHIPPED = json.loads((ROOT / "tests" / "fixtures" / "engines" / "shipped_config_names.json")
                     .read_text())["files"]


@pytest.mark.parametrize("case", SHIPPED, ids=lambda c: f"{c['engine']}:{c['device']}:"
                         f"{c.get('dtype')}:{c.get('block_shape')}:{c['E']}")
def test_every_shipped_file_name_is_derived_from_what_decides_it(case: dict) -> None:
    naming = vllm_table.Naming(case["engine"], case.get("dtype"),
                               tuple(case["block_shape"]) if case.get("block_shape") else None,
                               triton_version=case.get("triton"))
    name = vllm_table.file_name(naming.fixed({"N": case["N"], "E": case["E"]}),
                                case["device"], naming)
    assert str(naming.folder() / name) == case["name"]
    fixed, _, selectors = vllm_table.parse_file_name(case["name"])  # and read back
    assert fixed == {"E": case["E"], "N": case["N"]}
    assert vllm_table.selectors_of(selectors) == (naming.dtype, naming.block_shape, "")


def _lookup_as(engine: str, folder: Path, device: str, fixed: list[str], batches, *,
               dtype: str | None = None, block: str | None = None,
               triton: str | None = None) -> subprocess.CompletedProcess:
    args = [sys.executable, str(LOOKUP), str(folder), "--engine", engine,
            "--device-name", device, *[a for f in fixed for a in ("--fixed", f)],
            *[a for b in batches for a in ("--batch", str(b))]]
    args += ["--dtype", dtype] if dtype else []
    args += ["--block-shape", block] if block else []
    args += ["--triton", triton] if triton else []
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def _on(result: SearchResult, device: str) -> SearchResult:
    return type(result)(**{**result.__dict__, "device": device})


def test_a_table_tuned_on_an_h200_nvl_is_the_one_vllm_loads_for_its_family(
        tmp_path: Path) -> None:
    """vLLM folds every device name with an H200 token into NVIDIA_H200: a table tuned on an
    "NVIDIA H200 NVL" was written as NVIDIA_H200_NVL and never found. SGLang does not fold."""
    spec = _moe_spec(tmp_path)
    result = _on(_searched(spec), "NVIDIA H200 NVL")
    [path] = write_table([result], spec, tmp_path / "v", fmt=TableFormat("vllm"))
    assert path.name == "E=128,N=384,device_name=NVIDIA_H200.json"
    for device in ("NVIDIA H200 NVL", "NVIDIA H200"):
        proc = _lookup_as("vllm", tmp_path / "v", device, ["E=128", "N=384"], [16])
        assert proc.returncode == 0, proc.stdout
        assert configs.best_config(tmp_path / "v", {"T": 16, "N": 384, "E": 128},
                                   device=device) == json.loads(proc.stdout)["configs"]["16"]
    [own] = write_table([result], spec, tmp_path / "s",
                        fmt=TableFormat("sglang", triton_version="3.4.0"))
    assert own.relative_to(tmp_path / "s").as_posix() == \
        "configs/triton_3_4_0/E=128,N=384,device_name=NVIDIA_H200_NVL.json"


def test_dtype_and_block_shape_selectors_are_written_and_asked_for(tmp_path: Path) -> None:
    """vLLM asks for ...,dtype=fp8_w8a8.json and ...,block_shape=[128,128].json for quantized
    layers; neither could be written."""
    spec = _moe_spec(tmp_path)
    result = _searched(spec)
    fmt = TableFormat("vllm", dtype="fp8_w8a8", block_shape=(128, 128))
    [path] = write_table([result], spec, tmp_path / "v", fmt=fmt)
    assert path.name == ("E=128,N=384,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,"
                         "block_shape=[128,128].json")
    proc = _lookup_as("vllm", tmp_path / "v", DEVICE, ["E=128", "N=384"], [64],
                      dtype="fp8_w8a8", block="128,128")
    assert proc.returncode == 0, proc.stdout
    chosen = dict(result.per_shape)["m64-n384"].chosen
    assert json.loads(proc.stdout)["configs"]["64"] == chosen
    assert configs.best_config(tmp_path / "v", {"T": 64, "N": 384, "E": 128}, device=DEVICE,
                               dtype="fp8_w8a8", block_shape=(128, 128)) == chosen
    assert _lookup_as("vllm", tmp_path / "v", DEVICE, ["E=128", "N=384"], [64]).returncode == 1
    with pytest.raises(table.TableError, match="without dtype or block shape"):
        configs.best_config(tmp_path / "v", {"T": 64, "N": 384, "E": 128}, device=DEVICE)
    res = CliRunner().invoke(cli, ["config", "convert", str(path), "--to", "vllm",
                                   "--block-shape", "128"])
    assert res.exit_code == 2 and "expected two positive whole numbers" in res.output


def test_the_files_are_named_by_the_engines_dims_in_their_order(tmp_path: Path) -> None:
    """A spec with dims T, N, E wrote N=384,E=128,..., which vLLM never asks for: now E
    first; a spec whose fixed dims are not E and N is refused with the option that maps
    them, and the map names the file."""
    spec = _moe_spec(tmp_path)
    [path] = write_table([_searched(spec)], spec, tmp_path / "a", fmt=TableFormat("vllm"))
    assert path.name.startswith("E=128,N=384,")
    own = write_table([_searched(spec)], spec, tmp_path / "own")[0]
    text = own.read_text().replace('"N"', '"inter"').replace('"E"', '"experts"')
    renamed = tmp_path / "renamed.json"
    renamed.write_text(text.replace("N=", "inter=").replace("E=", "experts="))
    res = CliRunner().invoke(cli, ["config", "convert", str(renamed), "--to", "vllm",
                                   "--out", str(tmp_path / "b")])
    assert res.exit_code == 2, res.output
    assert "the table fixes inter, experts" in " ".join(res.output.split())
    assert "--dim-map E=<dim>,N=<dim>" in " ".join(res.output.split())
    assert not (tmp_path / "b").exists()
    res = CliRunner().invoke(cli, ["config", "convert", str(renamed), "--to", "vllm",
                                   "--out", str(tmp_path / "b"), "--dim-map",
                                   "E=experts,N=inter", "--format", "json"])
    assert res.exit_code == 0, res.output
    [written] = json.loads(res.output).values()
    assert Path(written).name == path.name
    naming = vllm_table.Naming(dims=(("E", "experts"), ("N", "inter")))
    assert configs.best_config(tmp_path / "b", {"T": 64, "inter": 384, "experts": 128},
                               device=DEVICE, naming=naming) == \
        configs.best_config(path, 64)
    bad = CliRunner().invoke(cli, ["config", "convert", str(renamed), "--to", "vllm",
                                   "--dim-map", "E=experts"])
    assert bad.exit_code == 2 and "map every fixed dim" in bad.output


def test_autotune_refuses_fixed_dims_the_engine_cannot_name_before_any_work(
        tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path)  # dims T and d: d is neither E nor N
    spec.spec_path.write_text(toml_text(spec_tables(spec)))
    res = CliRunner().invoke(cli, ["autotune", "--kernel", str(spec.source_path),
                                   "--spec", str(spec.spec_path), "--config-format", "vllm",
                                   "--batch-dim", "T", "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert "--dim-map" in res.output and not (tmp_path / "out").exists()
    res = CliRunner().invoke(cli, ["autotune", "--kernel", str(spec.source_path),
                                   "--spec", str(spec.spec_path), "--config-format", "sglang",
                                   "--batch-dim", "T", "--dim-map", "N=d"])
    assert res.exit_code == 2 and "--triton-version" in res.output


def test_a_triton_version_key_is_tolerated_and_kept(tmp_path: Path) -> None:
    """vLLM's files may carry "triton_version", which vLLM drops: best_config and config
    convert into a folder holding such a file failed (exit 2)."""
    folder = tmp_path / "v"
    folder.mkdir()
    name = vllm_table.file_name({"E": 128, "N": 384}, DEVICE)
    (folder / name).write_text(json.dumps({"1": {"A": 1}, "2048": {"A": 2},
                                           "triton_version": "3.4.0"}))
    assert configs.best_config(folder / name, 3) == {"A": 1}
    assert configs.best_config(folder, {"M": 3000, "E": 128, "N": 384}, device=DEVICE) == \
        {"A": 2}
    spec = _moe_spec(tmp_path)
    own = write_table([_searched(spec)], spec, tmp_path / "own")[0]
    res = CliRunner().invoke(cli, ["config", "convert", str(own), "--to", "vllm", "--out",
                                   str(folder)])
    assert res.exit_code == 0, res.output
    data = json.loads((folder / name).read_text())
    assert data["triton_version"] == "3.4.0" and data["2048"] == {"A": 2}
    assert {int(k) for k in data if k != "triton_version"} == {2048, *BATCHES}
    proc = _lookup_as("vllm", folder, DEVICE, ["E=128", "N=384"], [2048])
    assert proc.returncode == 0 and json.loads(proc.stdout)["configs"]["2048"] == {"A": 2}


def test_sglang_files_go_where_sglang_reads_them(tmp_path: Path) -> None:
    """SGLang reads configs/triton_<X_Y_Z>/<name> (block shapes spelled [128, 128]); a flat
    file is not found."""
    spec = _moe_spec(tmp_path)
    result = _searched(spec)
    own = write_table([result], spec, tmp_path / "own")[0]
    out = tmp_path / "sglang"
    res = CliRunner().invoke(cli, ["config", "convert", str(own), "--to", "sglang", "--out",
                                   str(out), "--config-dtype", "fp8_w8a8", "--block-shape",
                                   "128,128", "--triton-version", "3.4.0", "--format", "json"])
    assert res.exit_code == 0, res.output
    [written] = json.loads(res.output).values()
    assert Path(written).relative_to(out).as_posix() == (
        "configs/triton_3_4_0/E=128,N=384,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,"
        "block_shape=[128, 128].json")
    for triton in ("3.4.0", "3.5.1"):  # its own version's folder, else the newest other's
        proc = _lookup_as("sglang", out, DEVICE, ["E=128", "N=384"], [1, 1024],
                          dtype="fp8_w8a8", block="128,128", triton=triton)
        assert proc.returncode == 0, proc.stdout
        for m in (1, 1024):
            assert json.loads(proc.stdout)["configs"][str(m)] == configs.best_config(
                out, {"T": m, "N": 384, "E": 128}, device=DEVICE, dtype="fp8_w8a8",
                block_shape=(128, 128)) == dict(result.per_shape)[f"m{m}-n384"].chosen
    res = CliRunner().invoke(cli, ["config", "convert", str(own), "--to", "sglang"])
    assert res.exit_code == 2 and "--triton-version" in res.output


def test_a_folder_with_a_plain_and_a_dtype_file_answers_each_as_asked(tmp_path: Path) -> None:
    """A folder holding a plain and a dtype= file for the same E and N made best_config raise
    "2 ... match", and there was no dtype argument."""
    for selectors, value in (("", 1), (",dtype=fp8_w8a8", 2),
                             (",dtype=fp8_w8a8,block_shape=[128,128]", 3)):
        (tmp_path / f"E=8,N=64,device_name=NVIDIA_H200{selectors}.json").write_text(
            json.dumps({"16": {"A": value}}))
    shape = {"M": 16, "E": 8, "N": 64}
    assert configs.best_config(tmp_path, shape, device="NVIDIA H200") == {"A": 1}
    assert configs.best_config(tmp_path, shape, device="NVIDIA H200", dtype="fp8_w8a8") == \
        {"A": 2}
    assert configs.best_config(tmp_path, shape, device="NVIDIA H200 NVL", dtype="fp8_w8a8",
                               block_shape=[128, 128]) == {"A": 3}
    with pytest.raises(table.TableError, match="dtype=int8_w8a16 matches"):
        configs.best_config(tmp_path, shape, device="NVIDIA H200", dtype="int8_w8a16")
