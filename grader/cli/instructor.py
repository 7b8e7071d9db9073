"""The instructors' and hiring teams' commands (grader/instructor/): a handout (release, classroom, gradescope),
grading a class (batch, merge), and alike submissions (similarity)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from grader.catalog import load_catalog
from grader.cli.options import INTERNAL, check_sandbox, fail, pack_option


@click.command("release")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@pack_option
@click.option("--audience", type=click.Choice(["learners", "candidates"]), default="learners", show_default=True,
              help="learners: a workspace and how to grade themselves; candidates: a take-home without the grader.")
@click.option("--kit-spec", help="What learners pip-install instead of the wheel put into the handout: a wheel URL, "
                                 "git+https URL or 'attention-kit @ URL' (checked: PyPI has no attention-kit).")
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Put this attention-kit wheel into the handout (default: one built from the running kit).")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--force", is_flag=True, help="Write into a folder that is not empty.")
@click.option("--time-limit", metavar="DURATION", help="Printed at the top of the README, e.g. 3h, 90m, 2h30m, 2 days.")
@click.option("--notes", type=click.Path(dir_okay=False, path_type=Path),
              help="A Markdown file (a tools or AI policy, how to hand in...) put into the README as written.")
def release_command(directory, audience, kit_spec, wheel, exercises, force, time_limit, notes):
    """Write the handout into DIRECTORY: the skeletons, a README and exercises/info.toml.

    Learners also get the kit as a wheel in wheels/ (or install --kit-spec) and a CPU-only torch
    line. Candidates get no grader, no hints, no test configuration, but a setup section with the Python
    and torch versions they are graded with and each exercise's points. No reference solutions and no
    hidden suites in the handout's files. Exit codes: 0 written · 2 usage error.
    """
    from grader.instructor import UsageError
    from grader.instructor.release import release

    try:
        written = release(directory=directory, audience=audience, kit_spec=kit_spec, wheel=wheel,
                          exercises=exercises, force=force, time_limit=time_limit, notes=notes)
    except UsageError as exc:
        fail(str(exc))
    click.echo(f"Wrote the {audience}' handout to {directory} ({len(written)} files). Submissions keep the file names "
               f"of exercises/; grade them with `grade batch`.")


def rubric_options(command):
    """--weights, --rubric and --overrides, shared by `grade batch` and `grade merge`."""
    for option in reversed([
        click.option("--weights", metavar="N=POINTS,...",
                     help="Points each exercise is worth, e.g. 1=10,3=20 (every graded exercise): points = weight x "
                          "passed/total checks, rounded to 2 decimals."),
        click.option("--rubric", type=click.Path(dir_okay=False, path_type=Path),
                     help="A TOML file with a [weights] table (exercise = points); --weights entries win."),
        click.option("--overrides", type=click.Path(dir_okay=False, path_type=Path),
                     help="Manual points, applied on every run: TOML [[override]] tables or CSV with the columns "
                          "submission, exercise, points or delta, comment."),
    ]):
        command = option(command)
    return command


def lms_options(command):
    """--canvas and --canvas-assignment, shared by `grade batch` and `grade merge`."""
    command = click.option("--canvas-assignment", default="attention-kit", show_default=True,
                           help="The Canvas assignment (column) the totals go to.")(command)
    return click.option("--canvas", type=click.Path(dir_okay=False, path_type=Path),
                        help="Also write Canvas's grade-import CSV here (needs a roster with Canvas or SIS IDs).")(command)


@click.command("batch")
@click.argument("submissions", type=click.Path(file_okay=False, path_type=Path))
@pack_option
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Submissions graded at once, each in its own process.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the gradebook here: .csv (UTF-8 with a BOM, for Excel) or .json "
                   "(the cache goes beside it as NAME.cache.json).")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write one self-contained HTML report per submission here, and the cohort page index.html.")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="CPU seconds each exercise file may use in all, however busy the machine (wall-clock "
                   "backstop: 3x this + 10 s).")
@click.option("--shard", metavar="I/N", help="Grade only the I-th of N slices (stable by name); -o part_I.json, "
                                             "then `grade merge`.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@rubric_options
@click.option("--roster", type=click.Path(dir_okay=False, path_type=Path),
              help="CSV mapping submission names to people: submission, id, email, name (and canvas_id, "
                   "sis_user_id, sis_login_id, section for --canvas).")
@lms_options
@click.option("--anonymize", is_flag=True, help="Name every submission by a stable pseudonym (blind review).")
@click.option("--anonymize-key", type=click.Path(dir_okay=False, path_type=Path),
              help="The pseudonyms' secret key, created (0600) if absent; keep it away from the outputs "
                   "[default: anonymize.key in your data folder].")
def batch_command(submissions, jobs, output, report_dir, exercises, timeout, shard, quiet, weights, rubric, overrides,
                  roster, canvas, canvas_assignment, anonymize, anonymize_key):
    """Grade every submission in SUBMISSIONS: one folder or .zip each, files named as in the handout.

    Exercise files (01_self_attention.py, or a notebook 01_self_attention.ipynb) may sit at the top
    of a submission or one folder down (the handout's exercises/); a nearly right name gets a "did
    you mean". A flat LMS download (Canvas's lastfirst_userid_submissionid_file.py) is grouped by
    student; a .py or .ipynb named otherwise is a rejected row of its own. Submissions already graded and unchanged are skipped; what is ambiguous, refused or empty
    is in the gradebook's note column.
    Exit codes: 0 the batch ran and its gradebook was written (whatever the scores; a report or the cohort
    page that could not be written is a warning on stderr) · 2 usage error · 3 internal error, or the gradebook
    could not be written · 4 refused: the sandbox here cannot keep submissions from the reference and from each
    other (nothing graded).
    """
    from grader.instructor import UsageError
    from grader.instructor.batch import batch_rubric, run_batch
    from grader.instructor.gradebook import parse_shard
    from grader.instructor.anonymize import load_key
    from grader.instructor.roster import read_roster
    from grader.instructor.markup import clean
    from grader.instructor.summary import LEGEND, closing_lines, notes_line, summary_table
    from grader.render import console

    try:  # a mistake in the options is a usage error before the sandbox is probed
        course = batch_rubric(exercises=exercises, weights=weights, rubric=rubric, overrides=overrides)
        people = read_roster(roster) if roster is not None else None
        key = load_key(anonymize_key) if anonymize or anonymize_key else None
    except UsageError as exc:
        fail(str(exc))
    if key is not None and key[2]:
        click.echo(f"grade: created the pseudonym key {key[1]}; keep it apart from the gradebook and reports", err=True)
    check_sandbox()
    try:
        result = run_batch(submissions_dir=submissions, jobs=jobs, output=output, report_dir=report_dir,
                           exercises=exercises, timeout=timeout, progress=not quiet, shard=parse_shard(shard),
                           course=course, roster=people, canvas=canvas, assignment=canvas_assignment,
                           key=key[0] if key else None)
    except UsageError as exc:
        fail(str(exc))
    out = console()
    if result.rows:
        out.print(summary_table(result.rows, [e.number for e in result.rows[0].exercises]))
        out.print(LEGEND, style="dim")
    noted = notes_line(result.rows)
    if noted:
        out.print(noted, markup=False, highlight=False)
    for problem in result.problems:
        click.echo(f"grade: warning: {clean(problem, 500)}", err=True)
    for line in closing_lines(result, shard=shard, report_dir=report_dir):
        out.print(line, markup=False, highlight=False)
    if output is not None and result.gradebook is None:
        fail(f"the gradebook {output} could not be written (the warning above says why); grade again once it can",
             INTERNAL)


@click.command("merge")
@click.argument("parts", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The merged gradebook: .json (exactly what an unsharded run writes) or .csv.")
@rubric_options
@lms_options
def merge_command(parts, output, weights, rubric, overrides, canvas, canvas_assignment):
    """Merge the partial gradebooks of `grade batch --shard I/N` (every shard 1..N, once each).

    The parts' weights and overrides are applied again; --weights, --rubric or --overrides replace them.
    Batch caches among PARTS (part_I.cache.json, which part_*.json also matches) are skipped and named.

    Exit codes: 0 merged · 2 usage error (a missing, repeated or mismatched shard, a file that is not a part).
    """
    from grader.instructor import UsageError
    from grader.instructor.merge import merge_gradebooks

    try:
        merged = merge_gradebooks(parts=list(parts), output=output, weights=weights, rubric=rubric,
                                  overrides=overrides, canvas=canvas, assignment=canvas_assignment)
    except UsageError as exc:
        fail(str(exc))
    if merged.skipped:
        from grader.instructor.markup import clean

        names = ", ".join(clean(str(p), 200) for p in merged.skipped)
        click.echo(f"grade: skipped {len(merged.skipped)} batch cache{'s' if len(merged.skipped) != 1 else ''} "
                   f"(not partial gradebooks): {names}", err=True)
    for problem in merged.unapplied:
        click.echo(f"grade: {problem}", err=True)
    click.echo(f"Merged {merged.shards} shard{'s' if merged.shards != 1 else ''} "
               f"({len(merged.rows)} submissions) into {output}.")


@click.command("similarity")
@click.argument("submissions", type=click.Path(file_okay=False, path_type=Path))
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              help="Report files at least this similar to each other, to the reference or to public code "
                   "(mean Jaccard similarity of token and statement fingerprints of the normalised code).")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--top", type=click.IntRange(1, 10000), default=20, show_default=True,
              help="Pairs the text summary lists (and five clusters per exercise); --json lists all.")
@click.option("--html", "html_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write index.html and a side-by-side page per flagged pair to this folder.")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Processes that fingerprint the files (used from 200 distinct files on).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@pack_option
def similarity_command(submissions, threshold, exercises, top, html_dir, jobs, as_json):
    """Submissions whose code is alike, exercise by exercise: copies of the reference and of well-known
    public implementations, clusters of look-alikes, and the pairs that link them.

    Renaming, comments, reformatting, reordering independent lines, inlining a helper and equivalent
    spellings (@ or matmul, x.softmax or F.softmax) do not hide a copy; the skeleton's code never counts.
    A high score is a reason to read the files, not a verdict.
    Exit codes: 0 the comparison ran (whatever it found) · 2 usage error.
    """
    from grader.instructor import UsageError
    from grader.instructor.outputs import OutputError
    from grader.instructor.similarity import similarity_report
    from grader.instructor.similarity_view import json_document, summary_text, write_html

    try:
        report = similarity_report(submissions_dir=submissions, threshold=threshold, exercises=exercises, jobs=jobs)
        pages = write_html(report, html_dir) if html_dir is not None else None
    except (UsageError, OutputError) as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps(json_document(report)))
        return
    click.echo(summary_text(report, top=top))
    if pages is not None:
        click.echo(f"{len(pages)} side-by-side page(s) and index.html in {html_dir}")


@click.group("gradescope")
def gradescope_group():
    """Gradescope autograder: `build` the bundle to upload; `run` is what the bundle runs."""


@gradescope_group.command("build")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@pack_option
@click.option("--exercises", help="Which exercises the assignment has, e.g. 1,3-5 (default: all).")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="CPU seconds each exercise file may use in all, however busy the machine (wall-clock "
                   "backstop: 3x this + 10 s).")
@click.option("--visibility", type=click.Choice(["visible", "after_due_date", "after_published", "hidden"]),
              default="visible", show_default=True, help="When students see the per-exercise tests and score.")
@click.option("--stdout-visibility", type=click.Choice(["visible", "after_due_date", "after_published", "hidden"]),
              default="hidden", show_default=True, help="When students see the autograder's own log.")
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The attention-kit wheel to bundle (default: built from the running kit, installed or a checkout).")
@click.option("--source", type=click.Path(file_okay=False, path_type=Path),
              help="Build the wheel from this attention-kit checkout instead.")
@click.option("--torch", "torch_spec", help="The torch requirement setup.sh installs (CPU build; default: "
                                           "torch==VERSION, the torch this kit runs with).")
def gradescope_build(out, exercises, timeout, visibility, stdout_visibility, wheel, source, torch_spec):
    """Write OUT.zip: setup.sh, run_autograder, the kit as a wheel and its settings.

    Exit codes: 0 written · 2 usage error · 3 the wheel could not be built.
    """
    from grader.instructor import UsageError
    from grader.instructor.gradescope import BundleError, build_bundle

    try:
        path = build_bundle(out=out, source=source, wheel=wheel, exercises=exercises, timeout=timeout,
                            visibility=visibility, stdout_visibility=stdout_visibility, torch_spec=torch_spec)
    except UsageError as exc:
        fail(str(exc))
    except BundleError as exc:
        fail(str(exc), INTERNAL)
    click.echo(f"Wrote {path}: upload it as the assignment's autograder (Configure Autograder > Zip file upload).")


@gradescope_group.command("run")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("/autograder"),
              show_default=True, help="The autograder tree: submission/ is graded, results/results.json written.")
@click.option("--config", type=click.Path(dir_okay=False, path_type=Path), help="The bundle's attention-kit.json.")
def gradescope_run(root, config):
    """Grade ROOT/submission and write ROOT/results/results.json (run_autograder calls this).

    Exit codes: 0 results.json written (whatever the scores, and even when grading failed:
    the document says so) · 3 it could not be written.
    """
    from grader.instructor.gradescope import run
    from grader.instructor.outputs import OutputError

    try:
        path = run(root=root, config=config)
    except (OutputError, OSError) as exc:
        fail(f"could not write {root}/results/results.json: {exc}", INTERNAL)
    click.echo(f"Wrote {path}")


@click.command("classroom")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--kit-spec", help="What the workflow pip-installs instead of the wheel put into the repository: "
                                 "a wheel URL, git+https URL or 'attention-kit @ URL' (checked).")
@click.option("--wheel", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Put this attention-kit wheel into the repository (default: one built from the running kit).")
@click.option("--exercises", help="Which exercises, e.g. 1,3-5 (default: all).")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="CPU seconds each exercise file may use in all, however busy the machine (wall-clock "
                   "backstop: 3x this + 10 s).")
@pack_option
def classroom_command(directory, kit_spec, wheel, exercises, timeout):
    """Make DIRECTORY a GitHub Classroom template: the handout plus .github/workflows/classroom.yml.

    Every push grades each exercise once and reports its points to Classroom; pip's cache keeps
    torch and the kit between pushes. Students can read what their workflow installs: for
    learning, not for exams. Exit codes: 0 written · 2 usage error.
    """
    from grader.instructor import UsageError
    from grader.instructor.classroom import write_classroom

    try:
        written = write_classroom(directory=directory, exercises=exercises, kit_spec=kit_spec, wheel=wheel,
                                  timeout=timeout)
    except UsageError as exc:
        fail(str(exc))
    click.echo(f"Wrote {written[-1]}" + (f" and the handout ({len(written) - 1} files)" if len(written) > 1 else "")
               + f". Push {directory} as the assignment's template repository.")


COMMANDS = [release_command, batch_command, merge_command, similarity_command, gradescope_group, classroom_command]
