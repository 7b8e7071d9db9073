"""`grade dev`: the commands of exercise and pack authors."""
from __future__ import annotations

import sys

import click

from grader.catalog import load_catalog
from grader.cli.options import pack_option


@click.group("dev")
def dev_group():
    """Tools for exercise authors: lint a pack, regenerate the README's exercise table."""


@dev_group.command("check")
@pack_option
@click.option("--no-grading", is_flag=True, help="Only the metadata, the files and the modules; grade nothing.")
@click.option("--no-corpus", is_flag=True, help="Grade skeletons and solutions, not the labelled corpus.")
def dev_check(no_grading, no_corpus):
    """Lint the kit (or --pack DIR): metadata, files, modules, skeletons, solutions, corpus labels."""
    from grader.devcheck import check
    from grader.pack import default_pack

    problems = check(default_pack(), grading=not no_grading, corpus=not no_corpus)
    for line in problems:
        click.echo(line)
    click.echo(f"grade dev check: {len(problems)} problem(s)" if problems else "grade dev check: ok", err=True)
    sys.exit(1 if problems else 0)


@dev_group.command("readme-table")
@pack_option
def dev_readme_table():
    """Print the exercise table (markdown) generated from info.toml, as the README shows it."""
    from grader.devcheck import readme_table

    click.echo(readme_table(load_catalog()), nl=False)


COMMANDS = [dev_group]
