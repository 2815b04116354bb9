"""The triage as JUnit XML (the Ant/Jenkins format CI systems read natively): one test case per
kernel group, a <failure> for each regression, <skipped> for kernels on one side only (not
compared) and for groups too noisy to decide; improvements and unchanged groups pass. A test
case's time is the group's device time on NEW, in seconds; its system-out carries the verdict's
basis, the time change and the cause. Built with the standard library's ElementTree, which
escapes names and messages."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from pragma_ncu.infra.errors import ExitStatus
from pragma_ncu.report.triage_overview import change_text, duration_text, headline, signed_duration
from pragma_ncu.triage.groups import KernelGroup
from pragma_ncu.triage.report import REGRESSION, UNDECIDED, GroupTriage, TriageReport

SUITE = "pragma-ncu triage"


def report_junit(report: TriageReport) -> str:
    """The XML document (UTF-8, with its declaration)."""
    cases = [_case(g, report.device_word) for g in report.kernels]
    cases += [_one_side(g, "removed: only on BASE") for g in report.removed]
    cases += [_one_side(g, "added: only on NEW") for g in report.added]
    if report.one_side_regressed:
        cases.append(_one_side_loss(report))
    failures = report.count(REGRESSION) + report.one_side_regressed
    skipped = len(report.added) + len(report.removed) + report.count(UNDECIDED)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0",
              "skipped": str(skipped), "time": _seconds(report.new_total_us)}
    root = ET.Element("testsuites", {"name": SUITE, **{k: v for k, v in counts.items()
                                                       if k != "skipped"}})
    suite = ET.SubElement(root, "testsuite", {"name": f"{SUITE}: {report.base.label} vs "
                                              f"{report.new.label}", **counts})
    properties = ET.SubElement(suite, "properties")
    for name, value in (("threshold_pct", f"{report.threshold_pct:g}"),
                        ("exit_code", str(report.exit_code)), ("base", report.base.label),
                        ("new", report.new.label), ("device", report.new.device)):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    suite.extend(cases)
    ET.SubElement(suite, "system-out").text = "\n".join(headline(report) + list(report.notes))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def error_junit(base: str, new: str, message: str, status: int) -> str:
    """The XML of a triage that could not be made (a side it cannot read, nothing in common,
    no GPU for a kernel side): one test case with an <error> holding the message, so that a
    CI system shows why the gate did not run instead of a missing or empty file."""
    kinds: dict[int, str] = {ExitStatus.INPUT: "input", ExitStatus.ENVIRONMENT: "environment"}
    kind = kinds.get(status, "internal")
    counts = {"tests": "1", "failures": "0", "errors": "1", "time": _seconds(0.0)}
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": f"{SUITE}: {base} vs {new}", **counts,
                                              "skipped": "0"})
    properties = ET.SubElement(suite, "properties")
    for name, value in (("exit_code", str(status)), ("base", base), ("new", new)):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    case = ET.SubElement(suite, "testcase", {"classname": "triage.input",
                                             "name": "read and compare BASE and NEW",
                                             "time": _seconds(0.0)})
    first = message.splitlines()[0] if message else kind
    ET.SubElement(case, "error", {"message": first, "type": kind}).text = message
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _case(g: GroupTriage, device: str) -> ET.Element:
    case = ET.Element("testcase", {"classname": "triage." + g.match.new.base_name,
                                   "name": _case_name(g.match.new),
                                   "time": _seconds(g.match.new.total_us)})
    top = g.top_cause
    summary = (f"{g.verdict}: {change_text(g)}, {signed_duration(g.delta_us)} of {device} time"
               + (f"; cause {top.bottleneck}" if top else "")
               + (f" ({g.evidence})" if g.evidence else ""))
    if g.verdict == REGRESSION:
        failure = ET.SubElement(case, "failure", {"message": summary, "type": "regression"})
        failure.text = g.detail.diagnosis if g.detail else g.duration.note
    elif g.verdict == UNDECIDED:
        ET.SubElement(case, "skipped", {"message": f"too noisy to decide: {g.duration.note}"})
    ET.SubElement(case, "system-out").text = f"{summary}\n{g.duration.note}"
    return case


def _one_side_loss(report: TriageReport) -> ET.Element:
    """The kernels on one side only, as one failed case when they cost NEW more than the
    threshold of BASE's device time (a kernel replaced by another pairs with nothing)."""
    case = ET.Element("testcase", {"classname": "triage.application",
                                   "name": "kernels on one side only",
                                   "time": _seconds(report.added_us)})
    message = (f"regression: the kernels on NEW only take {duration_text(report.added_us)}, "
               f"those on BASE only took {duration_text(report.removed_us)}: "
               f"{signed_duration(report.one_side_net_us)} net, over the "
               f"{report.threshold_pct:g}% threshold of BASE's "
               f"{duration_text(report.base_total_us)}")
    ET.SubElement(case, "failure", {"message": message, "type": "regression"}).text = message
    return case


def _one_side(g: KernelGroup, why: str) -> ET.Element:
    case = ET.Element("testcase", {"classname": "triage." + g.base_name,
                                   "name": _case_name(g), "time": _seconds(g.total_us)})
    ET.SubElement(case, "skipped", {"message": f"{why}, {g.count} launches, "
                                    f"{duration_text(g.total_us)}: not compared"})
    return case


def _case_name(g: KernelGroup) -> str:
    return f"{g.name} [{g.config.label()}]"


def _seconds(us: float) -> str:
    return f"{us / 1e6:.6f}"
