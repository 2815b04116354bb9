"""Typed exceptions for unexpected failures, and the exit status each kind means.

Expected failures of a candidate (compile error, wrong answer, hang, ...) are data: a status on the
result. These exceptions are for bad input and broken environments; each names the bad value and
what was allowed, so the CLI can print it without a traceback. Every error this package raises on
purpose is a `PragmaError` of one of three kinds, and the kind decides the exit status of every
command (`exit_status`, docs/trust.md):

- `InputError` (exit 2): something the user gave cannot be used: a spec, a source, a report, a
  profile, a run store, an option, an argument of the wrong type. `SpecError`,
  `ExpressionError`, `TemplateError`, `DraftError`, `ArgumentError`, `ReportError`,
  `TriageError`, `StoreError` and `UsageError` are InputErrors.
- `ToolchainError` (exit 3): the environment: a tool, device or service is missing or unusable
  (no GPU: `NoGPUError`; nvcc, ncu, counter permission, the C compiler, perf; a worker that
  answers garbage: `WorkerProtocolError`; a pool: `PoolError`; the LLM: `LLMUnavailable`,
  `LLMBadReply`).
- `KernelFailure` (exit 1): the command's negative verdict on the kernel it was given: it does
  not compile, or it fails verification (`TuneError`, `DeviceCheckError`, `CpuRunError`).
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """The exit-code contract of every command (README, docs/trust.md)."""

    OK = 0
    VERDICT = 1  # the command's negative verdict: a regression, a kernel that fails
    INPUT = 2  # bad input or usage
    ENVIRONMENT = 3  # no GPU, nvcc, ncu, counter permission, ...
    INTERNAL = 70  # a bug in pragma-ncu (BSD's EX_SOFTWARE): nothing else raised it
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells say it)


class PragmaError(Exception):
    """Base class of every error this package raises on purpose."""


class InputError(PragmaError):
    """Something the user gave cannot be used: a spec, a source, a report or profile, a value.
    The CLI exits 2 on these (bad input or usage), never 1 (a command's negative verdict)."""


class SpecError(InputError):
    """A task spec is malformed: `field` names where, `expected` says what was allowed."""

    def __init__(self, source: str, field: str, expected: str, got: object = None) -> None:
        self.source = source
        self.field = field
        self.expected = expected
        self.got = got
        detail = (f"{_one_line(source)}: field '{_one_line(field)}': expected "
                  f"{_one_line(expected)}")
        if got is not None:
            shown = repr(got)  # one line, and short: a value can be a whole table
            detail += f", got {shown if len(shown) <= 160 else shown[:157] + '...'}"
        super().__init__(detail)


class ReferenceCheckError(SpecError):
    """The spec's reference function fails before any kernel runs (a missing file or function,
    a syntax error, an exception, outputs that are not the spec's): the spec's mistake, said
    naming the file and the function, not the kernel's failure."""

    def __init__(self, source: str, function: str, problem: str) -> None:
        super().__init__(source, "reference.function", "a reference function that loads and "
                         "answers for the spec's inputs", function)
        self.problem = problem
        self.args = (f"{_one_line(source)}: reference {function}: {_one_line(problem)}",)


class ParamNameClash(SpecError):
    """A parameter passed to the compiler as a -D macro is also a name the kernel declares:
    the macro would replace it (`int 256 = ...`), and the compiler's message would not say
    why. The message names both, and the line."""

    def __init__(self, source: str, name: str, value: str, kernel: str, line: int,
                 code: str, compiler: str) -> None:
        super().__init__(source, f"params.{name}", "a name the kernel does not declare", name)
        self.line = line
        self.args = (f"{_one_line(source)}: parameter {name} is passed to {compiler} as "
                     f"-D{name}={value}, and the kernel also declares or uses {name} as a name "
                     f"at {kernel}:{line} ({_one_line(code)[:120]}): rename one (or make "
                     f"{name} an #ifndef knob of the file, if a macro is meant)",)


def _one_line(text: str) -> str:
    """`text` with control characters escaped (a TOML key may hold a newline)."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


class ExpressionError(InputError):
    """An expression in a spec cannot be parsed or evaluated."""


class ToolchainError(PragmaError):
    """The environment: a required tool, device or service (nvcc, ncu and its counter
    permission, a GPU, a C compiler, a profiler, an LLM endpoint) is missing or unusable; the
    message says how to fix it. The CLI exits 3 on these."""


class ArgumentError(InputError, TypeError):
    """A library call got an argument of a type it does not take (`api.explain(42)`); the
    message names the function, the argument and what it accepts. A TypeError too, as Python
    code expects of a wrong type."""


class KernelFailure(PragmaError):
    """The kernel given fails what the command checks: it does not compile, or it fails
    verification. The command's negative verdict on it (exit 1), not bad input."""


class NoGPUError(ToolchainError):
    """No CUDA device could be opened; `reason` is what the driver or the worker said."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"no CUDA GPU available: {reason}")


class WorkerProtocolError(ToolchainError):
    """The worker process answered something that is not a protocol message."""


class LLMUnavailable(ToolchainError):
    """The LLM endpoint could not answer (not configured, unreachable, timed out, rate-limited or
    failing after the allowed retries); callers fall back to rules."""


class LLMBadReply(ToolchainError):
    """The LLM answered, but not with what was asked (no JSON object, wrong keys or types);
    `reply` is the text it sent, for the log."""

    def __init__(self, message: str, reply: str = "") -> None:
        self.reply = reply
        super().__init__(message)


class TemplateError(InputError):
    """A kernel template cannot be rendered (jinja2 syntax, an undefined variable, a failing
    `{% raise %}`-style check); the message names the template and the line."""


class DraftError(InputError):
    """`init` cannot draft a spec from a source: no kernel in it, several and none chosen, or
    an argument a spec cannot describe; the message names it and what would work."""


def exit_status(error: BaseException | type[BaseException]) -> ExitStatus:
    """The exit status an error (or a kind of error) means under the contract: its kind for a
    PragmaError, 130 for an interrupt, 2 for an I/O error the package let through (a file it
    was told to write or read, standard output: `io_error` says which and why), 70 (a bug) for
    anything else."""
    kind = error if isinstance(error, type) else type(error)
    for base, status in ((KeyboardInterrupt, ExitStatus.INTERRUPTED),
                         (InputError, ExitStatus.INPUT), (ToolchainError, ExitStatus.ENVIRONMENT),
                         (KernelFailure, ExitStatus.VERDICT), (OSError, ExitStatus.INPUT)):
        if issubclass(kind, base):
            return status
    return ExitStatus.INTERNAL


def io_error(error: OSError) -> str:
    """An I/O error in one line: the path and the OS's reason (`/proc/x/y.html: No such file
    or directory`); an error without a path is one of writing the output (a full disk under
    `> out.txt`, /dev/full)."""
    reason = error.strerror or str(error) or type(error).__name__
    if error.filename is None:
        return f"cannot write the output (standard output or another stream): {reason}"
    where = str(error.filename) + (f" -> {error.filename2}" if error.filename2 else "")
    return f"{where}: {reason}"


class SourceError(InputError):
    """A kernel source cannot be used as given: missing, unreadable or not text; the message
    names the file and what would work."""


class KernelNotFound(InputError):
    """The kernel a spec names is not defined in its source: the message names it, the file,
    and the kernels the file does define (the same words before compiling and after)."""

    def __init__(self, name: str, source: str, defined: tuple[str, ...] | list[str],
                 hint: str = "") -> None:
        self.name = name
        self.source = source
        self.defined = tuple(defined)
        listing = ", ".join(self.defined) if self.defined else "no kernel"
        super().__init__(f"no kernel named {name} in {source} (it defines: {listing})"
                         + (f"; {hint}" if hint else ""))
