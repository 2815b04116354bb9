"""The API's boundary: every public function checks its arguments against its own annotations
when called, so that a wrong type fails there, naming the function, the argument and what it
accepts (an ArgumentError: an InputError and a TypeError), instead of deep inside (api.explain(42)
failed in pathlib). A path may be given as a str or any os.PathLike; it arrives as a Path. A
number annotated with a bound (`infra.bounds`: `Count`, `Seconds`, ...) must be in it too:
`tune(budget=0)` fails naming the argument and the range, as `--budget 0` does."""

from __future__ import annotations

import functools
import inspect
import os
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

from pragma_ncu.infra.bounds import Bound
from pragma_ncu.infra.errors import ArgumentError

P = ParamSpec("P")
R = TypeVar("R")


def checked(function: Callable[P, R]) -> Callable[P, R]:
    """`function` with its arguments checked against its annotations at every call."""
    signature = inspect.signature(function)
    hints: dict[str, Any] = {}

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if not hints:  # resolved at the first call: the annotations are strings until then
            hints.update(_resolved(function))
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise ArgumentError(f"{function.__name__}(): {exc}") from None
        for name, value in bound.arguments.items():
            hint = hints.get(name, Any)
            if accepts(value, hint):
                continue
            if _takes_path(hint) and isinstance(value, str | os.PathLike):
                bound.arguments[name] = Path(value)
            else:
                raise ArgumentError(f"{function.__name__}(): argument {name!r} takes "
                                    f"{described(hint, value)}, not {type(value).__name__} "
                                    f"{_short(value)}")
        return function(*bound.args, **bound.kwargs)
    return call


def check_fields(options: Any) -> None:
    """An options dataclass's fields checked against their annotations as `checked` checks a
    call (a path given as a str becomes a Path); call it from `__post_init__`."""
    kind = type(options)
    hints = _resolved(kind.__init__)
    for name in kind.__dataclass_fields__:
        value, hint = getattr(options, name), hints.get(name, Any)
        if accepts(value, hint):
            continue
        if _takes_path(hint) and isinstance(value, str | os.PathLike):
            object.__setattr__(options, name, Path(value))  # frozen: still being made
        else:
            raise ArgumentError(f"{kind.__name__}(): field {name!r} takes "
                                f"{described(hint, value)}, not {type(value).__name__} "
                                f"{_short(value)}")


def _resolved(function: Callable[..., Any]) -> dict[str, Any]:
    """Each annotation evaluated in the function's module; one that cannot be (a name known
    only to type checkers) is not checked."""
    found: dict[str, Any] = {}
    for name, text in function.__annotations__.items():
        try:
            found[name] = eval(text, function.__globals__) if isinstance(text, str) else text
        except Exception:  # an annotation is no reason for a call to fail
            found[name] = Any
    return found


def accepts(value: object, hint: Any) -> bool:
    """Whether `value` is of the annotated type (unions, None, sequences and dicts of their
    items, callables; a bool is no number here)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or isinstance(hint, TypeVar):
        return True
    if origin is Annotated:
        return accepts(value, args[0]) and all(b.allows(value) for b in _bounds(hint))
    if origin in (typing.Union, types.UnionType):
        return any(accepts(value, a) for a in args)
    if hint is None or hint is type(None):
        return value is None
    if origin is Callable:
        return callable(value)
    if origin in (Sequence, list, tuple):
        return (isinstance(value, origin) and not isinstance(value, str)
                and all(accepts(v, args[0]) for v in value) if args else True)
    if origin in (dict, Mapping):
        return isinstance(value, Mapping) and all(
            accepts(k, args[0]) and accepts(v, args[1]) for k, v in value.items())
    if not isinstance(hint, type):
        return True  # a form this check does not know: the function's own checks apply
    if hint in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, int | float) if hint is float else isinstance(value, hint)


def _bounds(hint: Any) -> list[Bound]:
    return [b for b in getattr(hint, "__metadata__", ()) if isinstance(b, Bound)]


def _takes_path(hint: Any) -> bool:
    return hint is Path or Path in typing.get_args(hint)


def described(hint: Any, value: object = None) -> str:
    """A type in words, as the message says what an argument accepts; a bounded number's
    range where `value` is of its type (else the type: `int`)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        in_type = accepts(value, args[0])
        return " and ".join(map(str, _bounds(hint))) if in_type else described(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(described(a, value) for a in args)
    if hint is None or hint is type(None):
        return "None"
    if origin is Callable:
        return "a callable"
    if origin in (Sequence, list, tuple):
        return f"a sequence of {described(args[0])}" if args else "a sequence"
    if origin in (dict, Mapping):
        return f"a dict of {described(args[0])} to {described(args[1])}" if args else "a dict"
    return getattr(hint, "__name__", str(hint))


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
