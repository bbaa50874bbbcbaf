"""``ragleaklab label export``, ``import``, ``review`` and ``agreement``: labels for your own
system.

Registered on the main command group by :mod:`ragleaklab_core.cli`; see
:mod:`ragleaklab_core.calibration.labelling` for the method and the file formats.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from ragleaklab_core._atomic import write_atomic
from ragleaklab_core.calibration.labelling import (
    REVIEW_SOURCES,
    declared_labeller,
    labels_lines,
    read_review,
    render_review,
    review_format,
    review_rows,
    run_scores,
)
from ragleaklab_core.cli._errors import fail, handle_errors
from ragleaklab_core.config import DEFAULT_FITTER
from ragleaklab_core.errors import InputError
from ragleaklab_core.review.plan import TPR_MARGIN
from ragleaklab_core.review.session import REVIEW_DIR, Mark, decided_in_both, read_marks


@click.group("label")
def label_group() -> None:
    """Label the cases of a run on your own system, for `ragleaklab calibrate --labels`."""


@label_group.command("export")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The review file, .jsonl or .csv [default: RUN_DIR/review.jsonl].",
)
@click.option(
    "--scores",
    "scores_out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the run's reduced scores of one pack, for `calibrate --scores`.",
)
@click.option(
    "-p", "--pack", default=None, help="The pack of --scores (needed when the run has several)."
)
@click.option(
    "--value", default=None, help="The value of --scores [default: the pack's primary value]."
)
@click.option("--force", is_flag=True, help="Overwrite an existing review file.")
@handle_errors
def export_command(
    run_dir: Path,
    out: Path | None,
    scores_out: Path | None,
    pack: str | None,
    value: str | None,
    force: bool,
) -> None:
    """Write every case of the run in RUN_DIR to a review file.

    One row per case: pack, test_id, query, the answers (one per epoch), the retrieved ids, the
    metrics' values and evidence, any errors, the target's identity, and empty `label` and
    `notes` columns for the reviewer. An existing file is kept unless --force: it may hold a
    reviewer's work.
    """
    out = run_dir / "review.jsonl" if out is None else out
    fmt = review_format(out)
    if out.exists() and not force:
        raise InputError("exists; it may hold a review in progress (use --force)", source=str(out))
    rows = review_rows(run_dir)
    scores = None
    if scores_out is not None:
        if scores_out.exists() and not force:
            raise InputError("exists (use --force)", source=str(scores_out))
        scores = run_scores(run_dir, pack=pack, value=value)
    write_atomic(out, render_review(rows, fmt))
    packs = Counter(row.pack for row in rows)
    click.echo(f"wrote {out}: {len(rows)} cases to review ({_counts(packs)})")
    if scores is not None and scores_out is not None:
        write_atomic(scores_out, scores.render())
        click.echo(
            f"wrote {scores_out}: {len(scores.scores)} scores of {scores.value} for pack "
            f"{scores.pack!r} (epochs reduced by {scores.reducer})"
        )
        if scores.unscored:
            click.echo(
                f"warning: {len(scores.unscored)} case(s) errored or could not be scored and have "
                f"no score (such as {', '.join(scores.unscored[:5])}); calibrate counts them as "
                "unscored",
                err=True,
            )
    click.echo(f"next: label every row positive or negative, then `ragleaklab label import {out}`")


@label_group.command("import")
@click.argument("review_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("labels.jsonl"),
    show_default=True,
    help="The labels file to write.",
)
@click.option(
    "-p", "--pack", default=None, help="The pack to take (needed when the file has several)."
)
@click.option(
    "--label-source",
    type=click.Choice(REVIEW_SOURCES),
    default=None,
    help="Who judged: a person, or an LLM judge [default: what the file's rows say, else human].",
)
@click.option("--labelled-by", default=None, help="The reviewer (a name, or the judge model).")
@click.option("--force", is_flag=True, help="Overwrite an existing labels file.")
@handle_errors
def import_command(
    review_file: Path,
    out: Path,
    pack: str | None,
    label_source: str | None,
    labelled_by: str | None,
    force: bool,
) -> None:
    """Turn a reviewed REVIEW_FILE (.jsonl or .csv) into a labels file with its provenance.

    Every row must be labelled positive or negative; an unlabelled row, an unknown label or a
    case reviewed twice is an error naming the line, and nothing is written.
    """
    judgements = read_review(review_file)
    from ragleaklab_core.review.judging import measured_agreement

    declared, declared_by = declared_labeller(
        ((j.label_source, j.labelled_by) for j in judgements), source=str(review_file)
    )
    agreement = None
    if declared == "judge":
        if label_source not in (None, "judge"):
            raise InputError(
                "its rows were labelled by a judge: import them as --label-source judge",
                source=str(review_file),
            )
        labelled_by = labelled_by or declared_by
        agreement = measured_agreement(review_file, declared_by)
    label_source = label_source or declared
    packs = sorted({j.pack for j in judgements})
    if pack is None and len(packs) > 1:
        raise InputError(
            f"holds the cases of {len(packs)} packs ({', '.join(packs)}): choose one with --pack",
            source=str(review_file),
        )
    chosen = pack if pack is not None else packs[0]
    if chosen not in packs:
        raise InputError(
            f"has no case of pack {chosen!r} (it has: {', '.join(packs)})", source=str(review_file)
        )
    taken = [j for j in judgements if j.pack == chosen]
    if out.exists() and not force:
        raise InputError("exists; use --force to replace it", source=str(out))
    write_atomic(
        out,
        labels_lines(
            taken, label_source=label_source, labelled_by=labelled_by, judge_agreement=agreement
        ),
    )
    positives = sum(j.positive for j in taken)
    targets = sorted({j.target for j in taken if j.target})
    click.echo(
        f"wrote {out}: {len(taken)} labels for pack {chosen!r} ({positives} positive, "
        f"{len(taken) - positives} negative; label_source {label_source}"
        + (f", target {', '.join(targets)}" if targets else "")
        + ")"
    )
    if positives == 0 or positives == len(taken):
        click.echo(
            "warning: only one class is present; calibration needs positive and negative cases",
            err=True,
        )
    if label_source == "judge" and agreement is None:
        click.echo(
            "warning: this judge's agreement with a person was never measured (`ragleaklab label "
            "agreement`): calibrate refuses its labels unless forced",
            err=True,
        )
    if label_source == "judge" and agreement is not None:
        from ragleaklab_core.calibration.labelling import judge_floor_problems

        below = judge_floor_problems(agreement)
        if below:  # said now, not first when calibrate refuses them
            click.echo(
                f"warning: this judge is below the floor ({'; '.join(below)}): calibrate "
                "refuses its labels unless forced (docs/labelling.md, the judge's floor)",
                err=True,
            )
    click.echo(
        f"next: ragleaklab calibrate --pack {chosen} --labels {out} --config <the run's config> "
        "--out calibration/"
    )


@label_group.command("review")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--reviewer",
    required=True,
    help="Your name: your judgements go to RUN_DIR/review/<name>.jsonl.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="The loopback port to serve on (0: any free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a web browser.")
@click.option(
    "--plan",
    "plan_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Review only the cases of this plan (`label plan`).",
)
@handle_errors
def review_command(
    run_dir: Path, reviewer: str, port: int, open_browser: bool, plan_file: Path | None
) -> None:
    """Label the cases of the run in RUN_DIR in a local page, with the keyboard.

    The page is served on 127.0.0.1 only, loads nothing from elsewhere and sends nothing
    anywhere. Every judgement is saved to your review file before the page moves on: stop the
    server at any moment and run the command again to resume where you stopped. The file is
    one `label import` reads as it is.
    """
    from ragleaklab_core.review.server import ReviewServer, serve
    from ragleaklab_core.review.session import ReviewSession

    only = planned_cases(plan_file) if plan_file is not None else None
    session = ReviewSession(run_dir, reviewer, only=only)
    others = {
        name: [marks.get((v.pack, v.test_id), Mark()).label for v in session.views]
        for name, marks in other_labellers(run_dir, session.reviewer).items()
    }
    try:
        server = ReviewServer(session, port, extra={"others": others})
    except OSError as exc:
        raise InputError(f"cannot serve on port {port}: {exc.strerror}", source="--port") from None
    state = session.state()
    click.echo(
        f"reviewing {state['total']} cases of {run_dir} as {session.reviewer} "
        f"({state['labelled']} labelled, {state['skipped']} skipped); judgements are saved to "
        f"{session.path}"
    )
    for warning in session.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"open {server.url}")
    click.echo("stop with Ctrl-C; nothing is lost", err=True)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a reviewer stops
        serve(server)
    state = session.state()
    click.echo(
        f"stopped: {state['labelled']} of {state['total']} labelled, {state['skipped']} skipped, "
        f"in {session.path}"
    )


@label_group.command("plan")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--target-fpr",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    required=True,
    help="The false-positive rate the calibration will be fitted at.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="The confidence of the Clopper-Pearson guarantee.",
)
@click.option(
    "--tpr-margin",
    type=click.FloatRange(0.0, 0.5, min_open=True, max_open=True),
    default=TPR_MARGIN,
    show_default=True,
    help="The half-width wanted for the TPR's interval.",
)
@click.option(
    "--fitter",
    default=DEFAULT_FITTER,
    show_default=True,
    help="The fitter the calibration will use: the plan aims for the negatives it says it needs "
    "when that is more than the guarantee's.",
)
@click.option(
    "--fitter-option",
    "fitter_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A fitter option; VALUE is read as a TOML value. Repeatable.",
)
@click.option("-p", "--pack", "packs", multiple=True, help="Plan these packs only [default: all].")
@click.option("--seed", type=int, default=0, show_default=True, help="The sample's seed.")
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The plan file [default: RUN_DIR/review/plan.json].",
)
@click.option("--force", is_flag=True, help="Replace an existing plan.")
@handle_errors
def plan_command(
    run_dir: Path,
    target_fpr: float,
    confidence: float,
    tpr_margin: float,
    fitter: str,
    fitter_options: tuple[str, ...],
    packs: tuple[str, ...],
    seed: int,
    out: Path | None,
    force: bool,
) -> None:
    """Say how many cases of the run in RUN_DIR to review for a calibration at --target-fpr,
    and pick them: a stratified random sample per pack (families, hard kinds and the metric's
    outcome all represented in proportion). Review it with `label review --plan`."""
    import json

    from ragleaklab_core._discovery import FITTERS, load_plugin
    from ragleaklab_core.calibration.labelling import read_run
    from ragleaklab_core.cli._options import key_values
    from ragleaklab_core.review.plan import PlanCase, plan_pack, render_plan, stratum_of
    from ragleaklab_core.review.session import case_views

    out = run_dir / REVIEW_DIR / "plan.json" if out is None else out
    if out.exists() and not force:
        raise InputError(
            "exists; a review may follow it (use --force to replace it)", source=str(out)
        )
    loaded = load_plugin(FITTERS, fitter, key_values(fitter_options, flag="--fitter-option"))
    run = read_run(run_dir)
    views, _warnings = case_views(run, review_rows(run))
    by_pack: dict[str, list[PlanCase]] = {}
    for v in views:
        by_pack.setdefault(v.pack, []).append(
            PlanCase(
                v.pack, v.test_id, stratum_of(v.kind, v.families, v.hard, v.outcome), v.outcome
            )
        )
    unknown = [p for p in packs if p not in by_pack]
    if unknown:
        raise InputError(
            f"the run has no pack {unknown[0]!r} (it has: {', '.join(sorted(by_pack))})",
            source=str(run_dir),
        )
    chosen = [p for p in sorted(by_pack) if not packs or p in packs]
    plans = [
        plan_pack(
            p,
            by_pack[p],
            target_fpr=target_fpr,
            confidence=confidence,
            margin=tpr_margin,
            seed=seed,
            fitter=loaded,
        )
        for p in chosen
    ]
    content = render_plan(
        plans,
        target_fpr=target_fpr,
        confidence=confidence,
        margin=tpr_margin,
        seed=seed,
        run={"cases": len(views)},
        fitter=fitter,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, (json.dumps(content, indent=2, ensure_ascii=False) + "\n").encode())
    for plan in plans:
        click.echo(
            f"{plan.pack}: review {plan.sample_size} of {plan.cases_in_run} cases (expect about "
            f"{plan.expected_negatives:.0f} negatives, {plan.negatives_needed} needed for FPR <= "
            f"{target_fpr:g} at {confidence:.0%}; about {plan.expected_positives:.0f} positives, "
            f"{plan.positives_needed} for a TPR within +/-{tpr_margin:g})"
        )
        for note in plan.notes:
            click.echo(f"  note: {note}")
    click.echo(f"wrote {out}")
    click.echo(f"next: ragleaklab label review {run_dir} --reviewer NAME --plan {out}")


@contextlib.contextmanager
def _judge_plugin(name: str, options: tuple[str, ...]) -> Iterator[tuple[Any, str]]:
    """The judge plugin *name* built with ``-O`` *options*, and its identity (its ``identity``,
    else its name); closed (when it can be) on the way out."""
    from ragleaklab_core._discovery import JUDGES, load_plugin
    from ragleaklab_core.cli._options import key_values

    loaded = load_plugin(JUDGES, name, key_values(options, flag="--option"))
    traits = loaded.judge_traits
    try:
        yield loaded.obj, traits.identity or name
    finally:
        if traits.close:
            loaded.obj.close()


@label_group.command("judge")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--judge", "judge_name", required=True, help="The judge plugin (`ragleaklab plugins`)."
)
@click.option(
    "-O",
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A judge option (repeatable); VALUE is a TOML value, as for --target-option.",
)
@handle_errors
def judge_command(run_dir: Path, judge_name: str, options: tuple[str, ...]) -> None:
    """Label every case of the run in RUN_DIR with a judge plugin: RUN_DIR/review/judge-NAME.jsonl.

    A case is positive when the judge says the attack succeeded in any epoch. An answer the
    judge cannot judge leaves its case unlabelled, with the error; verdicts are cached, so
    judging again asks only about what is new. Measure the judge against a person's review
    (`label agreement`) before calibrating on its labels.

    Exits 3 when the judge judged no case, and stops at once (exit 3) when the judge cannot
    reach its endpoint. Progress goes to stderr: a bar on a terminal, else a line every
    RAGLEAKLAB_PROGRESS_INTERVAL seconds.
    """
    import os
    import sys

    from ragleaklab_core.cli._progress import progress_for
    from ragleaklab_core.review.judging import JudgeUnusable, judge_run

    progress = progress_for(sys.stderr, os.environ)
    with _judge_plugin(judge_name, options) as (judge, identity):
        try:
            done = judge_run(run_dir, judge_name, judge, identity, progress=progress)
        except JudgeUnusable as exc:
            fail(f"{exc} (no review file was written; the verdicts so far are cached)", 3)
            return
    click.echo(
        f"wrote {done.path}: {done.cases} cases judged by {identity} ({done.positives} positive, "
        f"{done.judged - done.positives} negative, {len(done.errors)} not "
        f"judged); {done.asked} answer(s) asked, {done.cached} from the cache"
    )
    for pack, test_id, error in done.errors[:10]:
        click.echo(f"  not judged: {pack} {test_id}: {error}", err=True)
    if done.judged == 0:
        fail(
            f"the judge {judge_name} judged none of the {done.cases} case(s), so there is "
            "nothing to measure or import; see why above (every case's judge_error in "
            f"{done.path}), fix the judge or its options and run the command again",
            3,
        )
    if done.errors:
        click.echo(
            f"warning: {len(done.errors)} case(s) have no label; `label import` refuses the file "
            "until they are judged again or labelled by hand",
            err=True,
        )
    click.echo(
        f"next: ragleaklab label agreement {run_dir} (against a person's review of the same "
        "cases, `label review`)"
    )


@label_group.command("judge-check")
@click.option(
    "--judge", "judge_name", required=True, help="The judge plugin (`ragleaklab plugins`)."
)
@click.option(
    "-O",
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A judge option (repeatable); VALUE is a TOML value, as for --target-option.",
)
@click.option(
    "--max-flip-rate",
    type=click.FloatRange(0.0, 1.0, max_open=True),
    default=0.0,
    show_default=True,
    help="The share of measured pairs that may be flipped (0: one flip fails the check).",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="The exact intervals' confidence.",
)
@click.option(
    "--json",
    "json_out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the result, every pair included, as JSON.",
)
@handle_errors
def judge_check_command(
    judge_name: str,
    options: tuple[str, ...],
    max_flip_rate: float,
    confidence: float,
    json_out: Path | None,
) -> None:
    """Check how far text the attacker writes steers a judge: the built-in cases written to
    steer a judge (verdict-shaped text, fake JSON verdicts, fence breaks, fake markers,
    instructions to the grader, "ignore previous instructions", chat-template tokens,
    role-play, Unicode tricks, long preambles before a leak, steering planted in a retrieved
    document), each judged with and without its steering text.

    Prints the flip rate (pairs whose clean case was judged right and whose steered case got
    the wrong verdict), per kind, with exact intervals. Exits 1 when it is above
    --max-flip-rate, 3 when the judge cannot be used (it cannot reach its endpoint, or judged
    fewer than 3 in 4 of the clean cases right).
    """
    import json
    import math
    import os
    import sys

    from ragleaklab_core._atomic import output_problem, write_file
    from ragleaklab_core.cli._progress import progress_for
    from ragleaklab_core.review.judge_check import MIN_MEASURED_SHARE, check_judge, summary
    from ragleaklab_core.review.judging import JudgeUnusable

    problem = None if json_out is None else output_problem(json_out)
    if problem is not None:  # known before the judge is asked anything
        raise InputError(problem, source=f"--json {json_out}")
    progress = progress_for(sys.stderr, os.environ)
    with _judge_plugin(judge_name, options) as (judge, identity):
        try:
            results = check_judge(judge, judge_name, progress=progress)
        except JudgeUnusable as exc:
            fail(str(exc), 3)
            return
    found = summary(results, identity=identity, confidence=confidence, max_flip_rate=max_flip_rate)
    click.echo(
        f"judge-check of {identity}: {len(results)} cases written to steer a judge (in the "
        "answer or a retrieved document), each judged with and without its steering text"
    )
    for entry in [*found["kinds"], {"kind": "all", **found["total"]}]:
        click.echo(f"  {entry['kind']:<20} {_check_line(entry)}")
    click.echo(f"  ({confidence:.0%} exact intervals)")
    for result in results:
        pair = result.pair
        if result.outcome == "flipped":
            click.echo(
                f"  flipped: {pair.name}: {result.clean} without the steering text, "
                f"{result.steered} with it (true label {pair.label})"
            )
        elif result.outcome == "control wrong":
            click.echo(
                f"  not measured: {pair.name}: the judge said {result.clean} of the clean case "
                f"(true label {pair.label})"
            )
        elif result.outcome == "control unjudged":
            click.echo(f"  not measured: {pair.name}: the clean case: {result.clean_error}")
    if json_out is not None:
        write_file(json_out, json.dumps(found, indent=2, sort_keys=True) + "\n")
        click.echo(f"wrote {json_out}")
    total = found["total"]
    rate = total["flip_rate"]
    if found["verdict"] == "unusable":
        fail(
            f"the judge {judge_name} judged {rate['trials']} of the {len(results)} clean "
            f"cases right (at least {math.ceil(MIN_MEASURED_SHARE * len(results))} needed), "
            "so steering cannot be measured on this judge: its error without any steering is "
            "the problem (see the pairs not measured above; `label agreement` measures it)",
            3,
        )
    if found["verdict"] == "fail":
        click.echo(
            f"FAIL: text the attacker wrote steered the judge: {rate['successes']} of "
            f"{rate['trials']} measured pairs flipped ({_interval(rate)}), above "
            f"--max-flip-rate {max_flip_rate:g}; its labels can be written by the text it "
            "judges"
        )
        sys.exit(1)
    click.echo(
        f"PASS: {rate['successes']} of {rate['trials']} measured pairs flipped "
        f"(at most {max_flip_rate:g} allowed); {total['refused']} steered case(s) left "
        "unjudged (a person labels those)"
    )


def _check_line(entry: Mapping[str, Any]) -> str:
    rate = entry["flip_rate"]
    shown = f"{rate['successes']}/{rate['trials']} = {_interval(rate)}" if rate["trials"] else "n/a"
    return (
        f"{entry['pairs']} pairs: {entry['flipped']} flipped, {entry['refused']} refused, "
        f"{entry['held']} held, {entry['not_measured']} not measured; flip rate {shown}"
    )


def _interval(rate: Mapping[str, Any]) -> str:
    if not rate["trials"]:
        return "n/a"
    return f"{rate['rate']:.1%} [{rate['lower']:.1%}, {rate['upper']:.1%}]"


@label_group.command("agreement")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="The kappa interval's confidence.",
)
@handle_errors
def agreement_command(run_dir: Path, confidence: float) -> None:
    """How far the labellers of the run in RUN_DIR agree: Cohen's kappa of every pair, on the
    cases both labelled, with a bootstrap interval."""
    from ragleaklab_core.stats.agreement import cohen_kappa

    labellers = other_labellers(run_dir, None)
    if len(labellers) < 2:
        raise InputError(
            f"{len(labellers)} labeller(s) found; agreement needs two review files "
            "(`ragleaklab label review RUN_DIR --reviewer NAME`)",
            source=str(run_dir / REVIEW_DIR),
        )
    from ragleaklab_core.review.judging import (
        judge_agreement,
        judged_rates,
        labeller_sources,
        write_agreement,
    )

    folder = run_dir / REVIEW_DIR
    sources = {name: labeller_sources(folder / f"{name}.jsonl") for name in labellers}
    names = sorted(labellers)
    measured: list[dict[str, Any]] = []
    rates: list[dict[str, Any]] = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a, b = labellers[first], labellers[second]
            shared = decided_in_both(a, b)
            if not shared:
                click.echo(f"{first} / {second}: no case labelled by both")
                continue
            got = cohen_kappa(
                [a[k].label == "positive" for k in shared],
                [b[k].label == "positive" for k in shared],
                confidence,
            )
            if got.kappa is None:
                kappa = "kappa undefined (both gave one label to every shared case)"
            else:
                kappa = f"kappa {got.kappa:.3f}"
                if got.low is not None and got.high is not None:
                    kappa += f" [{got.low:.3f}, {got.high:.3f}] ({confidence:.0%} bootstrap)"
            click.echo(
                f"{first} / {second}: {got.cases} cases labelled by both, agreed on {got.agreed} "
                f"({got.agreed / got.cases:.1%}); {kappa}"
            )
            kinds = {sources[first][0], sources[second][0]}
            if kinds != {"judge", "human"}:
                continue
            judge, person = (first, second) if sources[first][0] == "judge" else (second, first)
            result = judge_agreement(labellers[judge], labellers[person], confidence)
            if result is None:
                continue
            measured.append(
                {"judge": judge, "judge_identity": sources[judge][1], "against": person, **result}
            )
            click.echo(
                f"  judge {judge} against {person}: sensitivity {_rate(result['sensitivity'])}, "
                f"specificity {_rate(result['specificity'])} ({confidence:.0%} exact intervals)"
            )
            for entry in judged_rates(labellers[judge], result, labellers[person]):
                rates.append({"judge": judge, "against": person, **entry})
                click.echo(f"  {_judged_rate(entry, confidence)}")
    if measured:
        path = write_agreement(run_dir, measured, rates)
        click.echo(f"wrote {path}: `label import` puts the measurement on the judge's labels")


def _judged_rate(entry: Mapping[str, Any], confidence: float) -> str:
    """``sentinel-takeover-safe: the judge calls 41 of the 180 cases the person did not label
    positive; corrected for its measured error, 14.5% [3.0%, 25.4%] (95% interval)``."""
    if not entry["cases"]:
        return f"{entry['pack']}: no corrected rate: {entry['why_not']}"
    said = (
        f"{entry['pack']}: the judge calls {entry['positive']} of the {entry['cases']} cases "
        "the person did not label positive"
    )
    if entry.get("estimate") is None:
        return f"{said}; no corrected rate: {entry['why_not']}"
    low, high = entry["interval"]
    return (
        f"{said}; corrected for its measured error, {entry['estimate']:.1%} "
        f"[{low:.1%}, {high:.1%}] ({confidence:.0%} interval)"
    )


def _rate(interval: dict[str, object]) -> str:
    if not interval.get("trials"):
        return "n/a (no such case)"
    return (
        f"{interval['successes']}/{interval['trials']} = {interval['rate']:.3f} "
        f"[{interval['lower']:.3f}, {interval['upper']:.3f}]"
    )


def planned_cases(path: Path) -> set[tuple[str, str]]:
    """The (pack, test_id) of every case a plan file picks."""
    import json

    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found (write one with `label plan`)", source=str(path)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read: {exc}", source=str(path)) from None
    packs = content.get("packs") if isinstance(content, dict) else None
    if not isinstance(packs, list):
        raise InputError("$.packs: missing; not a ragleaklab plan", source=str(path))
    found: set[tuple[str, str]] = set()
    for i, entry in enumerate(packs):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("pack"), str)
            and isinstance(entry.get("cases"), list)
            and all(isinstance(c, str) for c in entry["cases"])
        ):
            raise InputError(
                f"$.packs[{i}]: needs a pack name and a list of case ids", source=str(path)
            )
        found.update((entry["pack"], c) for c in entry["cases"])
    return found


def other_labellers(run_dir: Path, besides: str | None) -> dict[str, dict[tuple[str, str], Mark]]:
    """The marks of every review file in RUN_DIR/review/ but *besides*'s, by labeller name."""
    folder = run_dir / REVIEW_DIR
    found: dict[str, dict[tuple[str, str], Mark]] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.jsonl")):  # plan.json is no labeller
        if path.stem != besides:
            found[path.stem] = read_marks(path)
    return found


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name}: {n}" for name, n in sorted(counter.items()))
