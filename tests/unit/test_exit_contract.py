"""The exit-code contract every command keeps (errors.ExitStatus, docs/trust.md): 0 ok, 1 the
command's negative verdict, 2 bad input or usage, 3 the environment, 130 interrupted, 70 a bug;
every error this package raises on purpose is of a kind that decides its status."""

from __future__ import annotations

import ast
import errno
import importlib
import os
import pkgutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner

import pragma_ncu
from pragma_ncu.cli.common import ContractGroup
from pragma_ncu.cli.main import cli
from pragma_ncu.infra import errors
from pragma_ncu.infra.errors import ExitStatus, exit_status
from pragma_ncu.infra.store import Store
from pragma_ncu.profile.read import ReportError
from tests.recorded_run import write_run

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "tests" / "fixtures" / "profiles"
XSD = ROOT / "tests" / "fixtures" / "junit" / "junit.xsd"
KINDS = (errors.InputError, errors.ToolchainError, errors.KernelFailure)


def _modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(pragma_ncu.__path__, "pragma_ncu.")
            if ".data" not in m.name]


def test_every_error_class_of_the_package_is_of_one_kind():
    """A PragmaError that is neither bad input, the environment nor a kernel's failure would
    exit 70 (a bug): every class the package defines must say which it is."""
    found = set()
    for name in _modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, errors.PragmaError)
                    and value.__module__ == name and value is not errors.PragmaError):
                found.add(value)
    assert len(found) > 15
    unclassified = [c.__qualname__ for c in found if not issubclass(c, KINDS)]
    assert not unclassified
    assert {exit_status(c) for c in found} == {ExitStatus.INPUT, ExitStatus.ENVIRONMENT,
                                               ExitStatus.VERDICT}


def test_no_bare_pragma_error_is_raised():
    """`raise PragmaError(...)` has no kind: it would reach a user as an internal error."""
    bare = []
    for path in (ROOT / "pragma_ncu").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                    and getattr(node.exc.func, "id", "") == "PragmaError"):
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bare


@pytest.mark.parametrize(("error", "status"), [
    (errors.SpecError("s.toml", "args", "a list"), 2),
    (errors.ExpressionError("1 +"), 2),
    (errors.NoGPUError("no driver"), 3),
    (errors.LLMUnavailable("timed out"), 3),
    (errors.KernelFailure("does not compile"), 1),
    (KeyboardInterrupt(), 130),
    (ZeroDivisionError(), 70),
    (errors.PragmaError("of no kind"), 70),
])
def test_exit_status_by_kind(error, status):
    assert exit_status(error) == status and exit_status(type(error)) == status


def _group(action) -> click.Group:
    @click.group(cls=ContractGroup)
    @click.option("--traceback", is_flag=True)
    def group(traceback: bool) -> None:
        pass

    @group.command()
    def go() -> None:
        action()
    return group


def _raise(exc: BaseException):
    def action() -> None:
        raise exc
    return action


@pytest.mark.parametrize(("exc", "status", "words"), [
    (errors.ToolchainError("ncu not found"), 3, "Error: ncu not found"),
    (ReportError("x.json: cannot read it"), 2, "Error: x.json: cannot read it"),
    (errors.KernelFailure("k.cu does not compile"), 1, "Error: k.cu does not compile"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (EOFError("Compressed file ended"), 70, "internal error, a bug in pragma-ncu (EOFError"),
    (IndexError("list index out of range"), 70, "IndexError: list index out of range"),
])
def test_the_group_answers_what_a_command_lets_through(exc, status, words):
    result = CliRunner().invoke(_group(_raise(exc)), ["go"])
    assert result.exit_code == status, result.output
    assert words in result.output and "Traceback" not in result.output
    assert "Aborted!" not in result.output  # click's answer to EOFError and Ctrl-C: exit 1


def test_traceback_shows_a_bugs_traceback():
    result = CliRunner().invoke(_group(_raise(IndexError("boom"))), ["--traceback", "go"])
    assert isinstance(result.exception, IndexError)


@pytest.mark.parametrize("flags", [[], ["--traceback"]])
@pytest.mark.parametrize(("exc", "words"), [
    (FileNotFoundError(errno.ENOENT, "No such file or directory", "/proc/x/y.html"),
     "Error: /proc/x/y.html: No such file or directory"),
    (PermissionError(errno.EACCES, "Permission denied", "/out/t.md"),
     "Error: /out/t.md: Permission denied"),
    (OSError(errno.ENOSPC, "No space left on device"),
     "Error: cannot write the output (standard output or another stream): No space left on "
     "device"),
])
def test_an_io_error_is_bad_input_in_one_line_with_and_without_traceback(exc, words, flags):
    """Issue 35: `trace RUN -o /proc/x/y.html` and `explain ... > /dev/full` exited 70 ("a bug
    in pragma-ncu"), and 1 with --traceback."""
    result = CliRunner().invoke(_group(_raise(exc)), [*flags, "go"])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == words and exit_status(exc) == 2


def test_a_closed_pipe_is_still_clicks_to_answer():
    """`pragma-ncu explain ... | head -1`: click's own answer, a quiet exit, no message."""
    result = CliRunner().invoke(_group(_raise(BrokenPipeError(errno.EPIPE, "Broken pipe"))),
                                ["go"])
    assert result.exit_code == 1 and "Error" not in result.output


def test_trace_to_an_unwritable_path_exits_2_naming_it(tmp_path):
    store = tmp_path / "runs.sqlite"
    with Store.open(store) as db:
        run = write_run(db)
    for flags in ([], ["--traceback"]):
        result = CliRunner().invoke(cli, [*flags, "trace", run, "--store", str(store),
                                          "--format", "html", "-o", "/proc/x/y.html"])
        assert result.exit_code == 2, result.output
        assert result.output.strip() == "Error: /proc/x: No such file or directory"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("flags", [[], ["--traceback"]])
def test_explain_to_a_full_disk_exits_2_in_one_line(flags):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "pragma_ncu", *flags, "explain",
                               str(PROFILES / "uncoalesced")], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("Error: cannot write the output (standard output or another "
                                   "stream): No space left on device")


def test_the_cli_is_a_contract_group_with_traceback():
    assert isinstance(cli, ContractGroup)
    assert "--traceback" in CliRunner().invoke(cli, ["--help"]).output


def _truncated(tmp_path: Path) -> Path:
    data = (PROFILES / "silu_and_mul" / "profile.json.gz").read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    return path


def test_explain_and_triage_exit_2_on_the_same_bad_input(tmp_path):
    """The probes of issue 25: explain exited 1 where triage exited 2; triage exited 1
    ("regression", stderr "Aborted!") on a truncated .json.gz."""
    runner = CliRunner()
    good = PROFILES / "silu_and_mul" / "profile.json.gz"
    for bad in (_truncated(tmp_path), tmp_path / "missing.json"):
        explained = runner.invoke(cli, ["explain", str(bad)])
        triaged = runner.invoke(cli, ["triage", str(good), str(bad)])
        assert explained.exit_code == triaged.exit_code == 2, (explained.output, triaged.output)
        assert "Aborted!" not in triaged.output and "regression" not in triaged.output


def test_junit_on_bad_input_is_an_error_case_that_validates(tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    good = PROFILES / "silu_and_mul" / "profile.json.gz"
    result = CliRunner().invoke(cli, ["triage", str(good), str(_truncated(tmp_path)),
                                      "--format", "junit"])
    assert result.exit_code == 2
    xml = result.stdout
    xmlschema.XMLSchema(str(XSD)).validate(xml)
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None and suite.get("errors") == "1" and suite.get("failures") == "0"
    error = suite.find("testcase/error")
    assert error is not None and error.get("type") == "input"
    assert "cut.json.gz" in (error.get("message") or "")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["exit_code"] == "2"
    assert "Error: " in result.stderr and "cut.json.gz" in result.stderr


def test_junit_on_a_usage_error_found_by_the_api_is_xml_too(tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    good = str(PROFILES / "silu_and_mul" / "profile.json.gz")
    result = CliRunner().invoke(cli, ["triage", good, good, "--param", "nonsense",
                                      "--format", "junit"])
    assert result.exit_code == 2
    xmlschema.XMLSchema(str(XSD)).validate(result.stdout)
    assert "--param" in result.stdout


def test_a_tune_resume_without_a_store_is_bad_input_and_creates_none(tmp_path):
    store = tmp_path / "s" / "runs.sqlite"
    result = CliRunner().invoke(cli, ["tune", "--resume", "last", "--store", str(store)])
    assert result.exit_code == 2 and "no run store at" in result.output
    assert not store.parent.exists()


def _run(built: bool = True, device: bool = True, status: str | None = "ok",
         collected: str | None = None) -> SimpleNamespace:
    from pragma_ncu.backends.cuda.collect import CollectStatus
    from pragma_ncu.measure.measurement import Status

    return SimpleNamespace(
        profile=None, build=SimpleNamespace(ok=built), device=object() if device else None,
        measurement=SimpleNamespace(status=Status(status)) if status else None,
        collection=SimpleNamespace(status=CollectStatus(collected)) if collected else None)


@pytest.mark.parametrize(("run", "kind", "status"), [
    (_run(built=False, status=None), errors.KernelFailure, 1),
    (_run(status="wrong_answer"), errors.KernelFailure, 1),
    (_run(collected="crash"), errors.KernelFailure, 1),
    (_run(device=False, status=None), errors.ToolchainError, 3),
    (_run(collected="no_permission"), errors.ToolchainError, 3),  # timing only: was exit 4
    (_run(), errors.ToolchainError, 3),  # ncu not found: timing only
    (_run(collected="timeout"), errors.ToolchainError, 3),
])
def test_what_stopped_a_profile_decides_profile_and_explain(run, kind, status):
    from pragma_ncu.backends.cuda.profiling import failure_of
    from pragma_ncu.report.profile import exit_code

    run.failure_kind = lambda: failure_of(run)
    assert run.failure_kind() is kind
    assert exit_code(run) == status
