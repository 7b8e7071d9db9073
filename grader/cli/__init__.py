"""The `grade` command line: the click group and its entry points. The commands, by audience, are in
learner.py (practising), instructor.py (handouts and grading a class) and dev.py (pack authors); each
is a thin function: parse, call a library function, render.

Exit codes: 0 all passed · 1 something failed · 2 usage error · 3 internal grader error ·
4 refused: the sandbox here cannot keep a submission from the reference or from other submissions.
"""
from __future__ import annotations

import os
import sys

import click

from grader import __version__
from grader.cli import dev, instructor, learner
from grader.cli.options import INTERNAL, USAGE, environment_error
from grader.pack import PackError


def main() -> None:
    """Entry point: run the CLI, then leave without tearing down torch (which takes ~0.5 s)."""
    os._exit(run())


def run(args: list[str] | None = None) -> int:
    """Run the CLI on args (default: the command line) and return its exit code; every error is one line."""
    code = 0
    try:
        returned = cli.main(args, prog_name="grade", standalone_mode=False)
        code = returned if isinstance(returned, int) else 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            click.echo(exc.code, err=True)
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as exc:  # a bare `grade`: its help (click >= 8.2)
        click.echo(exc.format_message(), err=True)
        code = exc.exit_code
    except click.ClickException as exc:  # usage (2) and internal (3) errors: one line
        hint = f" (see `{exc.ctx.command_path} --help`)" if isinstance(exc, click.UsageError) and exc.ctx else ""
        click.echo(f"grade: {exc.format_message()}{hint}", err=True)
        code = exc.exit_code
    except click.exceptions.Abort:
        click.echo("grade: aborted", err=True)
        code = 1
    except OSError as exc:  # the machine, not the grader: permissions, a read-only or full disk
        click.echo(f"grade: {environment_error(exc)}", err=True)
        code = USAGE
    except PackError as exc:  # a pack's metadata or its own check code: its author's to fix (file and line), exit 2
        click.echo(f"grade: {exc}", err=True)
        code = USAGE
    except Exception as exc:  # a bug in the grader: one line, exit 3, never a traceback
        click.echo(f"grade: internal grader error, please report it: {type(exc).__name__}: {exc}", err=True)
        code = INTERNAL
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return code


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attention-kit")
def cli():
    """attention-kit: learn, drill and grade the attention mechanism of Transformers.

    Start with `grade init my-attention && cd my-attention`, edit exercises/01_self_attention.py,
    then run `grade exercise 1`.
    """


for module in (learner, instructor, dev):
    for command in module.COMMANDS:
        cli.add_command(command)
