"""tools/cpu_noise_check.py's table, on answers shaped as `tune --format json` writes them (this
rule's and the rule before it), and the kernel it tunes is the bundled CPU example."""

from __future__ import annotations

from tests.tools_loader import load_tool


def _answer(*decisions: dict) -> dict:
    rounds = [{"round": 0, "decision": {"outcome": "", "accepted": False, "acceptance": ""}}]
    rounds += [{"round": i + 1, "decision": d} for i, d in enumerate(decisions)]
    return {"summary": {"baseline_us": 400.0, "best_us": 92.0, "speedup": 400 / 92,
                        "stop_reason": "no parameter move is left"}, "rounds": rounds}


def test_each_round_verdict_with_its_interval_and_noise() -> None:
    tool = load_tool("cpu_noise_check")
    assert tool.KERNEL.is_file() and tool.KERNEL.suffix == ".cpp"
    answer = _answer({"outcome": "accepted", "speedup_vs_best": 4.31,
                      "speedup_interval": [4.26, 4.42], "noise_pct": 9.2},
                     {"outcome": "undecided", "speedup_vs_best": 1.05,
                      "speedup_interval": [0.8, 1.4], "noise_pct": 89.0},
                     {"outcome": "", "accepted": False})
    assert tool.verdicts(answer) == ("r1 accepted 4.31x [4.26-4.42] noise 9%; "
                                     "r2 undecided 1.05x [0.80-1.40] noise 89%; "
                                     "r3 no comparison")
    row = tool.row(1, "2.1", "3.0", answer, 31.4)
    assert row[2] == "400.0 → 92.0" and row[3] == "4.35×" and row[-1] == "31"


def test_answers_of_the_rule_before_and_failures_read_too() -> None:
    tool = load_tool("cpu_noise_check")
    old = _answer({"accepted": False, "acceptance": "87.7% faster, within the 2632.6% noise: "
                                                    "the historical best stays"})
    assert tool.verdicts(old).startswith("r1 not accepted: 87.7% faster, within the 2632.6%")
    assert tool.row(2, "1", "1", {"error": "exit 2: bad spec"}, 1.0)[4] == "error"
