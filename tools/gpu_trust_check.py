"""On a machine with the real ncu (the GPU machine): damaged .ncu-rep files through explain and
triage with each reader, checked against the exit-code contract (docs/trust.md).

The unit tests fake ncu; this asks the real one what it does with a truncated, garbled, empty
or foreign .ncu-rep, through ncu_report and through `ncu --import --csv`. Every case must end
with exit 2, one "Error:" line on stderr and no traceback (the intact report: exit 0 from
explain, 0 from triage of it against itself; with --format junit an XML error case). Bounded:
each command at most 120 s (49 commands, a few minutes in all).

    python tools/gpu_trust_check.py OUT        # writes OUT/<case>-<command>.{out,err}
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from pragma_ncu.infra.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "tests" / "fixtures" / "profiles" / "silu_and_mul" / "report.ncu-rep"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + bytes(range(64))


def cases(data: bytes) -> dict[str, bytes]:
    rng = random.Random(25)
    flipped = bytearray(data)
    for _ in range(64):
        flipped[rng.randrange(len(flipped))] ^= 0xFF
    return {"intact": data, "cut-10pct": data[: len(data) // 10],
            "cut-90pct": data[: len(data) * 9 // 10], "flipped": bytes(flipped),
            "empty": b"", "png": PNG, "random": rng.randbytes(4096)}


def run(args: list[str], out: Path, stem: str) -> tuple[int, int, bool]:
    """(exit status, stderr lines, a traceback seen)."""
    try:
        proc = subprocess.run([sys.executable, "-m", "pragma_ncu", *args], capture_output=True,
                              text=True, timeout=120, cwd=ROOT)
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        code, stdout, stderr = 124, "", "timed out after 120 s"
    (out / f"{stem}.out").write_text(stdout)
    (out / f"{stem}.err").write_text(stderr)
    return code, len(stderr.strip().splitlines()), "Traceback" in stdout + stderr


def main(out: Path) -> int:
    if load_settings().ncu is None:
        print("no ncu here (PATH or PRAGMA_NCU_NCU): run this where Nsight Compute is")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    rows, bad = [], 0
    for name, data in cases(REPORT.read_bytes()).items():
        path = out / f"{name}.ncu-rep"
        path.write_bytes(data)
        for reader in ("auto", "ncu_report", "csv"):
            commands = [("explain", ["explain", str(path), "--reader", reader]),
                        ("triage", ["triage", str(path), str(path), "--reader", reader])]
            if reader == "auto":
                commands.append(("junit", ["triage", str(REPORT), str(path), "--format",
                                           "junit"]))
            for command, args in commands:
                code, lines, trace = run(args, out, f"{name}-{reader}-{command}")
                want = 0 if name == "intact" else 2
                junit_ok = command != "junit" or name == "intact" or "<error" in (
                    out / f"{name}-{reader}-{command}.out").read_text()
                ok = code == want and not trace and junit_ok and (want == 0 or lines == 1)
                bad += not ok
                rows.append((name, reader, command, code, want, lines, trace, ok))
    print(f"{'case':<10} {'reader':<11} {'command':<8} {'exit':>4} {'want':>4} "
          f"{'stderr':>6} {'trace':>5}  ok")
    for name, reader, command, code, want, lines, trace, ok in rows:
        print(f"{name:<10} {reader:<11} {command:<8} {code:>4} {want:>4} {lines:>6} "
              f"{'yes' if trace else 'no':>5}  {'ok' if ok else 'FAIL'}")
    print(f"\n{len(rows) - bad} of {len(rows)} as the contract says; outputs in {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tools/gpu_trust_check.py OUT")
    sys.exit(main(Path(sys.argv[1])))
