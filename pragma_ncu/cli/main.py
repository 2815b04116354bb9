"""Entry point of the `pragma-ncu` command."""

from __future__ import annotations

import click

from pragma_ncu import __version__
from pragma_ncu.cli.autotune_cmd import autotune
from pragma_ncu.cli.bench_cmd import bench
from pragma_ncu.cli.ceilings_cmd import ceilings
from pragma_ncu.cli.common import ContractGroup
from pragma_ncu.cli.config_cmd import config_group
from pragma_ncu.cli.doctor_cmd import doctor
from pragma_ncu.cli.explain_cmd import explain
from pragma_ncu.cli.init_cmd import init
from pragma_ncu.cli.knowledge_build_cmd import build as knowledge_build
from pragma_ncu.cli.knowledge_cmd import knowledge
from pragma_ncu.cli.log_options import commands, log_options
from pragma_ncu.cli.moves_cmd import moves
from pragma_ncu.cli.profile_cmd import profile
from pragma_ncu.cli.trace_cmd import trace_command
from pragma_ncu.cli.triage_cmd import triage_command
from pragma_ncu.cli.tune_cmd import tune


@click.group(cls=ContractGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pragma-ncu")
@click.option("--traceback", is_flag=True,
              help="Show the Python traceback of an internal error (for a bug report).")
def cli(traceback: bool) -> None:
    """Make CUDA kernels faster under the guidance of Nsight Compute.

    Start with `pragma-ncu doctor` to see what this machine can do, then
    `pragma-ncu bench --kernel examples/silu_and_mul.cu`; for a kernel of your own,
    `pragma-ncu init foo.cu` drafts its spec.

    Exit status of every command: 0 ok; 1 its negative verdict (triage: a regression; bench,
    profile, autotune, tune: the kernel fails to build or verify); 2 bad input or usage; 3
    the environment (no GPU, nvcc, ncu, counter permission); 130 interrupted.
    """


cli.add_command(init)
cli.add_command(bench)
cli.add_command(autotune)
cli.add_command(ceilings)
cli.add_command(doctor)
knowledge.add_command(knowledge_build)
cli.add_command(knowledge)
cli.add_command(profile)
cli.add_command(explain)
cli.add_command(triage_command)
cli.add_command(moves)
cli.add_command(tune)
cli.add_command(trace_command)
cli.add_command(config_group)
for _command in commands(cli):  # every command takes --verbose and --log-file
    log_options(_command)


def main() -> None:
    cli(prog_name="pragma-ncu")
