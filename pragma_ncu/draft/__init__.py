"""`pragma-ncu init`: draft a task spec from a kernel's source.

    draft = draft_spec(Path("foo.cu"))            # read foo.cu, infer, render (writes nothing)
    written = write_draft(draft)                  # foo.toml and foo_reference.py, never over
                                                  # existing files unless force=True

The kernel's signature gives the arguments (C types to dtypes, `const T*` inputs, `T*` outputs
or inouts by their first access, integer scalars as dims), the file its `#ifndef` knobs and the
kernel its template parameters; the launch, the shapes' sizes, float scalars and the reference's
body are left for the user, as marked placeholders and GUESS comments.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from pragma_ncu.build.task import read_source
from pragma_ncu.draft.infer import KernelDraft, choose_kernel, infer, kernel_names, kernels_like
from pragma_ncu.draft.render import function_name, reference_text, spec_text
from pragma_ncu.infra import sources
from pragma_ncu.infra.errors import DraftError, KernelNotFound, ParamNameClash
from pragma_ncu.spec.file import spec_path_for
from pragma_ncu.spec.model import REFERENCE_LIBRARIES, TaskSpec, rules_of, target_of
from pragma_ncu.spec.template import define_value, macro_params, render_jinja
from pragma_ncu.syntax.facts import parse_source
from pragma_ncu.syntax.tree import language_of, strip_comments

__all__ = ["Draft", "check_kernel", "check_macro_names", "draft_spec", "write_draft"]

# Flags through which a header the source does not name in quotes may be read.
_INCLUDE_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter", "-include", "--include-path",
                  "--pre-include", "--system-include")


@dataclass(frozen=True)
class Draft:
    """A drafted spec and reference stub, not yet written."""

    kernel: KernelDraft
    spec_path: Path
    spec_text: str
    reference_path: Path | None
    reference_text: str | None

    def paths(self) -> tuple[Path, ...]:
        return (self.spec_path,) + ((self.reference_path,) if self.reference_path else ())


def draft_spec(kernel_path: Path, name: str | None = None, spec_path: Path | None = None,
               reference: str | None = "numpy") -> Draft:
    """Draft the spec of kernel `name` (the file's only kernel by default) of `kernel_path`.

    `spec_path` defaults to the .toml beside the kernel; `reference` is the library of the
    reference stub written beside the spec (numpy, torch or cupy), or None for none (the
    kernel itself is then the reference). Raises DraftError for what cannot be drafted
    (SourceError for a kernel file that is missing or a directory).
    """
    if reference is not None and reference not in REFERENCE_LIBRARIES:
        raise DraftError(f"reference library {reference!r}: expected one of "
                         f"{', '.join(REFERENCE_LIBRARIES)} (or none)")
    if kernel_path.name.endswith(".j2"):
        raise DraftError(f"{kernel_path.name} is a jinja2 template, which is not C/CUDA until it "
                         "is rendered: run init on a rendered instance, then point "
                         "kernel.source at the template and add its variables to [params]")
    sources.require_file(kernel_path)
    target = target_of(kernel_path)
    facts = parse_source(sources.read(kernel_path), language_of(kernel_path.suffix))
    draft = infer(facts, choose_kernel(facts, target, kernel_path, name), kernel_path, target)
    spec_path = spec_path or spec_path_for(kernel_path)
    source_rel = _relative(kernel_path, spec_path.parent)
    ref_path = ref_text = None
    ref_function = None
    if reference is not None:
        ref_path = spec_path.with_name(f"{spec_path.stem}_reference.py")
        ref_function = f"{ref_path.name}:{function_name(draft.kernel)}"
        ref_text = reference_text(draft, reference, ref_path.name)
    text = spec_text(draft, source_rel, ref_function, reference or "numpy", str(kernel_path))
    return Draft(draft, spec_path, text, ref_path, ref_text)


def write_draft(draft: Draft, force: bool = False) -> tuple[Path, ...]:
    """Write the spec and the reference stub; refuses (writing nothing) when either exists,
    unless `force`."""
    existing = [p for p in draft.paths() if p.exists()]
    if existing and not force:
        raise DraftError(f"{', '.join(str(p) for p in existing)} already exist"
                         f"{'s' if len(existing) == 1 else ''}: nothing was written (pass "
                         "--force to replace, or --spec to write elsewhere)")
    draft.spec_path.parent.mkdir(parents=True, exist_ok=True)
    draft.spec_path.write_text(draft.spec_text)
    if draft.reference_path is not None and draft.reference_text is not None:
        draft.reference_path.write_text(draft.reference_text)
    return draft.paths()


def check_kernel(spec: TaskSpec) -> None:
    """The early checks of `spec`'s source, before anything is built: KernelNotFound when it
    certainly does not define its kernel: the name is nowhere in the file (comments aside; a
    template rendered at its defaults) and nothing could bring it in (an #include other than
    a system header's, an include flag, ## token pasting); otherwise the build, which sees
    every header, says it in the same words. The message lists the kernels the file defines.
    Then `check_macro_names`."""
    source = text = read_source(spec)
    if spec.is_jinja:
        text = render_jinja(source, spec.default_params(), str(spec.source_path))
    code = strip_comments(text)
    suffix = Path(spec.source_path.name.removesuffix(".j2")).suffix
    if (spec.kernel_name.isidentifier()  # not a plain name: the build decides
            and not re.search(rf"\b{spec.kernel_name}\b", code) and not _may_include(code, spec)):
        facts = parse_source(text, language_of(suffix))
        defined = kernel_names(facts, spec.target, spec.source_path)
        like = kernels_like(facts, spec.target, spec.source_path, spec.args)
        hint = (f"its one kernel of the spec's signature is {like[0]}: to run it with this "
                f"spec, use --kernel-name {like[0]}" if len(like) == 1 else "")
        raise KernelNotFound(spec.kernel_name, spec.source_path.name, defined, hint)
    check_macro_names(spec, source, text)


def check_macro_names(spec: TaskSpec, source: str, text: str) -> None:
    """A ParamNameClash when a parameter passed to the compiler as -DNAME=value is also a
    name the source declares, names as a member or calls (`int block_size = blockDim.x;`
    becomes `int 256 = blockDim.x;`, which the compiler answers with only "expected an
    identifier"). A parameter that is an `#ifndef` knob of the file is meant to be a macro,
    and a plain use of one reads its value: neither is flagged. `source` is the file's text,
    `text` the source as it is compiled (a template rendered)."""
    macros = macro_params(spec, spec.default_params(), source)
    if not macros:
        return
    suffix = Path(spec.source_path.name.removesuffix(".j2")).suffix
    facts = parse_source(text, language_of(suffix))
    knobs = {k.name for k in facts.knobs}
    for name, value in macros.items():
        line = facts.declared_at(name) if name not in knobs else None
        if line is not None:
            raise ParamNameClash(str(spec.spec_path), name, define_value(value),
                                 spec.source_path.name, line,
                                 text.splitlines()[line - 1].strip(),
                                 rules_of(spec.source_path).compiler)


def _may_include(code: str, spec: TaskSpec) -> bool:
    """Whether code the file does not show could define a kernel: token pasting, a header
    named in quotes or by a macro, any header where include folders are given (flags, or a
    template's own folder)."""
    folders = spec.is_jinja or any(f.startswith(_INCLUDE_FLAGS) for f in spec.compile_flags({}))
    includes = re.findall(r"^\s*#\s*include\s*(\S)", code, re.M)
    return "##" in code or any(c != "<" for c in includes) or (folders and bool(includes))


def _relative(path: Path, folder: Path) -> str:
    return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()
