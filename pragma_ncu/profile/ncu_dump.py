"""`python -m pragma_ncu.profile.ncu_dump REPORT --ncu-python DIR`: a report as a raw JSON dump.

Runs in its own process because `ncu_report` is a compiled module from the user's ncu install
(it must be put on sys.path, and a bad report can crash it): a crash here costs one subprocess,
and the caller falls back to the CSV reader. Only the standard library and `ncu_report` are used.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from typing import Any

PER_PC_PREFIXES = ("smsp__pcsamp_", "inst_executed", "sass__inst_executed", "thread_inst_executed")


def _literal(value: Any) -> Any:
    """ncu_report hands some rule fields over as dicts, others as their string form."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value


def _value(metric: Any) -> Any:
    try:
        value = metric.value()
    except Exception:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float | str):
        return value
    return None if value is None else str(value)


def _metrics(action: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name in sorted(action.metric_names()):
        metric = action.metric_by_name(name)
        value = _value(metric)
        if value is not None:
            out[name] = [value, metric.unit() or ""]
    return out


def _message(raw: dict[str, Any]) -> dict[str, Any]:
    message = _literal(raw.get("rule_message"))
    if isinstance(message, list):  # several messages: keep the first that has text
        message = next((m for m in map(_literal, message)
                        if isinstance(m, dict) and m.get("message")), {})
    if not isinstance(message, dict):
        message = {"message": str(message or "")}
    return message


def _rules(action: Any) -> list[dict[str, Any]]:
    try:
        results = list(action.rule_results_as_dicts())
    except Exception:
        return []
    rules = []
    for raw in results:
        message = _message(raw)
        speedup = _literal(raw.get("speedup_estimation")) or {}
        if not isinstance(speedup, dict):
            speedup = {}
        kind = message.get("type")
        rules.append({
            "section": str(raw.get("section_identifier") or ""),
            "rule": str(raw.get("rule_identifier") or raw.get("name") or ""),
            "title": str(message.get("title") or raw.get("name") or ""),
            "kind": "" if kind is None else str(kind),
            "message": str(message.get("message") or ""),
            "speedup": speedup.get("speedup"),
            "speedup_type": str(speedup.get("type") or ""),
        })
        if not rules[-1]["message"]:
            rules[-1]["raw"] = repr(raw)[:2000]  # kept to see what this ncu version sends
    return rules


def _per_pc(action: Any) -> dict[int, dict[str, float]]:
    """PC -> {metric: value} for the source-correlated metrics (sampling and instruction counts)."""
    table: dict[int, dict[str, float]] = defaultdict(dict)
    for name in action.metric_names():
        if not name.startswith(PER_PC_PREFIXES):
            continue
        metric = action.metric_by_name(name)
        if not metric.has_correlation_ids():
            continue
        ids = metric.correlation_ids()
        for i in range(metric.num_instances()):
            value = metric.as_double(i)
            if value:
                table[int(ids.as_uint64(i))][name] = value
    return table


def _source(action: Any) -> list[dict[str, Any]]:
    """Per-PC values summed per source line (needs -lineinfo); SASS-only rows are dropped."""
    lines: dict[tuple[str, int], dict[str, float]] = {}
    for pc, values in _per_pc(action).items():
        info = action.source_info(pc)
        if info is None:
            continue
        key = (str(info.file_name()), int(info.line()))
        row = lines.setdefault(key, defaultdict(float))
        for name, value in values.items():
            row[name] += value
    try:
        files = {k: v for k, v in dict(action.source_files()).items() if v}
    except Exception:
        files = {}
    return [{"file": f, "line": n, "values": dict(v), "text": _line_text(files, f, n)}
            for (f, n), v in sorted(lines.items())]


def _line_text(files: dict[str, str], name: str, line: int) -> str:
    text = files.get(name)
    if not text:
        return ""
    rows = text.splitlines()
    return rows[line - 1].strip() if 0 < line <= len(rows) else ""


def _names(action: Any, module: Any) -> dict[str, str]:
    base = module.IAction
    names = {"name": str(action.name())}
    for key, attr in (("mangled", "NameBase_MANGLED"), ("display_name", "NameBase_DEMANGLED")):
        try:
            names[key] = str(action.name(getattr(base, attr)))
        except Exception:
            names[key] = names["name"]
    return names


def _light(action: Any, names: tuple[str, ...]) -> dict[str, list[Any]]:
    """Only the metrics `names` of an action (a cheap pass over thousands of launches)."""
    out: dict[str, list[Any]] = {}
    for name in names:
        try:
            metric = action.metric_by_name(name)
        except Exception:
            metric = None
        value = _value(metric) if metric is not None else None
        if value is not None:
            out[name] = [value, metric.unit() or ""]
    return out


def dump(path: str, module: Any, light: tuple[str, ...] = (),
         actions: frozenset[int] | None = None) -> dict[str, Any]:
    """Every action of the report (flattened over ranges, `index` its position). With
    `light`, only those metrics and no rules or source; with `actions`, only those indices."""
    context = module.load_report(path)
    kernels: list[dict[str, Any]] = []
    index = 0
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            if actions is None or index in actions:
                action = rng.action_by_idx(a)
                entry = {"index": index, **_names(action, module)}
                if light:
                    entry["metrics"] = _light(action, light)
                else:
                    entry.update(metrics=_metrics(action), rules=_rules(action),
                                 source=_source(action))
                kernels.append(entry)
            index += 1
    return {"reader": "ncu_report", "report": path, "kernels": kernels}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("report")
    parser.add_argument("--ncu-python", required=True, help="folder holding ncu_report.py")
    parser.add_argument("--light", default="", help="comma-separated metrics: only these, "
                        "for every action, without rules or source")
    parser.add_argument("--actions", default=None, help="comma-separated action indices: "
                        "only these, in full")
    args = parser.parse_args(argv)
    light = tuple(n for n in args.light.split(",") if n)
    actions = (frozenset(int(i) for i in args.actions.split(",") if i)
               if args.actions is not None else None)
    sys.path.insert(0, args.ncu_python)
    try:
        import ncu_report
    except ImportError as exc:
        print(f"cannot import ncu_report from {args.ncu_python}: {exc}", file=sys.stderr)
        return 3
    try:
        data = dump(args.report, ncu_report, light, actions)
    except Exception as exc:  # a corrupt or too-new report: the caller falls back to CSV
        print(f"ncu_report could not read {args.report}: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 4
    json.dump(data, sys.stdout, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
