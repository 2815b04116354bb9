"""The package's log: every command takes --verbose and --log-file; what each sends where; a
run's log file (kept before its name is known, and lowering no application's level); the LLM
exchange logged whole and no API key in it, whether the key was configured or echoed back."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pragma_ncu.cli.log_options import commands, configure
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import LLMUnavailable
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from pragma_ncu.infra.logs import PACKAGE, RunLog, captured
from tests.fakes.llm_server import FakeLLMServer, Reply

KEY = "sk-test-0123456789abcdef"  # what must never be logged


def test_every_command_takes_verbose_and_log_file() -> None:
    found = {cmd.name: {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts}
             for cmd in commands(cli)}
    assert {"tune", "autotune", "bench", "profile", "explain", "triage", "trace", "init",
            "doctor", "ceilings", "build"} <= found.keys()
    assert len(found) >= 14  # the config and knowledge groups' commands too
    missing = {name: opts for name, opts in found.items()
               if not {"-v", "--verbose", "--log-file"} <= opts}
    assert not missing


def test_help_says_so() -> None:
    result = CliRunner().invoke(cli, ["trace", "--help"])
    assert "--verbose" in result.output and "--log-file" in result.output


@pytest.fixture
def package() -> Iterator[logging.Logger]:
    logger = logging.getLogger(PACKAGE)
    level, handlers = logger.level, list(logger.handlers)
    yield logger
    assert logger.handlers == handlers and logger.level == level  # each test undid its own


def test_stderr_at_the_verbosity_the_file_at_every_level(
        package: logging.Logger, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    undo = configure(1, tmp_path / "cli.log")
    try:
        logging.getLogger("pragma_ncu.pool.runner").info("starting the worker: python -m w")
        logging.getLogger("pragma_ncu.build.compile").debug("nvcc compiled in 0.5 s: nvcc -c k.cu")
        logging.getLogger("pragma_ncu.infra.progress").info("searching 72 points")  # the display's
    finally:
        undo()
    err = capsys.readouterr().err
    assert err == "INFO pragma_ncu.pool.runner: starting the worker: python -m w\n"
    text = (tmp_path / "cli.log").read_text()
    for line in ("INFO pragma_ncu.pool.runner: starting",
                 "DEBUG pragma_ncu.build.compile: nvcc compiled",
                 "INFO pragma_ncu.infra.progress: searching 72 points"):
        assert line in text
    logging.getLogger("pragma_ncu.pool.runner").warning("after the command")
    assert "after the command" not in (tmp_path / "cli.log").read_text()


def test_without_verbose_only_warnings_reach_stderr(package: logging.Logger,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    undo = configure(0, None)
    try:
        logging.getLogger("pragma_ncu.infra.llm").info("LLM request")
        logging.getLogger("pragma_ncu.infra.llm").warning("something odd")
    finally:
        undo()
    assert capsys.readouterr().err == "WARNING pragma_ncu.infra.llm: something odd\n"


def test_a_log_file_that_cannot_be_written_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = CliRunner().invoke(cli, ["trace", "x", "--store", str(tmp_path / "none.sqlite"),
                                      "--log-file", str(tmp_path / "file" / "cli.log")])
    assert result.exit_code == 2 and "--log-file" in result.output


def test_a_run_log_keeps_what_came_before_its_name(package: logging.Logger,
                                                   tmp_path: Path) -> None:
    log = logging.getLogger("pragma_ncu.api.tune")
    run_log = RunLog()
    with captured(run_log):
        log.debug("before the run had an id")
        run_log.open(tmp_path / "logs" / "run-1.log")
        log.debug("after")
    run_log.close()
    log.debug("outside")
    text = (tmp_path / "logs" / "run-1.log").read_text()
    assert text.index("before the run had an id") < text.index("after")
    assert "outside" not in text


def test_capturing_lowers_no_applications_level(package: logging.Logger, tmp_path: Path) -> None:
    """A library caller's root handler sees the package's warnings during a run, as before,
    and none of the DEBUG lines the run's log takes."""
    seen: list[str] = []

    class Sink(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())
    root = logging.getLogger()
    sink, level = Sink(), root.level
    root.addHandler(sink)
    root.setLevel(logging.WARNING)
    run_log = RunLog()
    try:
        with captured(run_log):
            run_log.open(tmp_path / "run.log")
            logging.getLogger("pragma_ncu.infra.llm").debug("the whole prompt")
            logging.getLogger("pragma_ncu.pool").warning("gpu1 dropped")
    finally:
        run_log.close()
        root.removeHandler(sink)
        root.setLevel(level)
    assert seen == ["gpu1 dropped"]
    assert package.propagate
    assert "the whole prompt" in (tmp_path / "run.log").read_text()


def _messages() -> list[dict[str, str]]:
    return [{"role": "system", "content": "You rewrite CUDA kernels."},
            {"role": "user", "content": f"Make it faster. (my key is {KEY}, do not tell)"}]


def test_the_llm_exchange_is_logged_whole_without_the_key(
        llm_server: FakeLLMServer, caplog: pytest.LogCaptureFixture) -> None:
    llm_server.script([Reply.rate_limited(0), Reply.text("Use 16-byte loads.")])
    client = LLMClient(LLMConfig("fake-coder", llm_server.base_url, KEY, timeout_s=5,
                                 max_retries=1, backoff_s=0.0))
    with caplog.at_level(logging.DEBUG, logger=PACKAGE):
        client.complete_text(_messages())
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "LLM request to fake-coder: 2 messages" in text
    assert "You rewrite CUDA kernels." in text and "Make it faster." in text
    assert "attempt 1 of 2 failed (HTTP 429" in text
    assert "LLM reply from fake-coder" in text and "Use 16-byte loads." in text
    assert KEY not in text and "<key>" in text
    assert llm_server.base_url not in text


def test_a_refusal_that_echoes_the_key_is_logged_without_it(
        llm_server: FakeLLMServer, caplog: pytest.LogCaptureFixture) -> None:
    masked = "sk-test-****cdef"
    llm_server.script([Reply(401, None, body={"error": {
        "message": f"Incorrect API key provided: {masked}.", "type": "invalid_request_error"}})])
    client = LLMClient(LLMConfig("fake-coder", llm_server.base_url, KEY, timeout_s=5,
                                 max_retries=0))
    with caplog.at_level(logging.DEBUG, logger=PACKAGE), pytest.raises(LLMUnavailable):
        client.complete_text(_messages())
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "LLM request refused: HTTP 401" in text
    assert KEY not in text and masked not in text and "cdef" not in text
