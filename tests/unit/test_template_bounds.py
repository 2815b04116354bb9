"""Kernel templates (the user's .cu.j2, and an LLM's rewrites, rendered by the coder's check)
render in jinja2's sandbox with their arithmetic bounded as spec expressions are: no template
reaches Python's internals, and none renders for long."""

from __future__ import annotations

import time

import pytest

from pragma_ncu.infra.errors import TemplateError
from pragma_ncu.spec.template import render_jinja


def test_ordinary_templates_render_as_before() -> None:
    text = ("constexpr int kVec = {{ VEC }};\n{% for i in range(VEC) %}x[{{ i }}] "
            "{% endfor %}{{ 2 ** 10 }} {{ BLOCK * VEC }} {{ '/' * 3 }}\n")
    assert render_jinja(text, {"VEC": 2, "BLOCK": 256}, "k.cu.j2") == (
        "constexpr int kVec = 2;\nx[0] x[1] 1024 512 ///\n")


@pytest.mark.parametrize(("text", "said"), [
    ("{{ 9 ** 9 ** 7 }}", r"goes beyond 2\*\*64"),
    ("{{ 'x' * 10 ** 9 }}", "at most 1048576"),
    ("{% for i in range(10 ** 9) %}{% endfor %}", "Range too big"),
    ("{{ ''.__class__.__mro__ }}", "unsafe"),
    ("{{ cycler.__init__.__globals__ }}", "unsafe"),
])
def test_a_template_cannot_run_code_or_render_for_long(text: str, said: str) -> None:
    start = time.perf_counter()
    with pytest.raises(TemplateError, match=said):
        render_jinja(text, {}, "k.cu.j2")
    assert time.perf_counter() - start < 0.5
