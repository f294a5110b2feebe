"""manage.py agreement --human CSV --llm CSV [--pairing mlrbench|strict] [--format table|json]
[--threshold T] [--epsilon E] [--report out.html]

Judge-vs-human agreement from MLR-Bench-layout files. The output starts with the verdict per
criterion and judge view; `--format json` carries it (`verdict`) with every statistic per
criterion and judge view (`alt_test`, `kappa_*`, `percent_agreement`, `decision_at_threshold`,
`auroc`, ...). `--report out.html` also writes out.csv and out.json next to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.data.loaders import LoadError, load_mlrbench
from agreement.data.pairing import POLICIES, pair
from agreement.report.exports import to_csv, to_html, to_json, to_table
from agreement.stats.alt_test import ALT_MIN_ITEMS
from agreement.stats.suite import DEFAULT_EPSILON, DEFAULT_MARGIN, DEFAULT_THRESHOLD, analyse


class Command(BaseCommand):
    help = "Agreement between an LLM judge and human reviewers, from MLR-Bench-layout CSV files."
    requires_system_checks: ClassVar[list[str]] = []  # reads files only

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--human", required=True, help="human_review.csv")
        parser.add_argument("--llm", required=True, help="llm_judge.csv (judges' mean per item)")
        parser.add_argument("--pairing", choices=POLICIES, default="strict")
        parser.add_argument("--format", choices=("table", "json"), default="table")
        parser.add_argument("--report", help="write an HTML report here, plus .csv and .json")
        parser.add_argument(
            "--judge-reviews",
            help="MLR-Bench agent_reviews/ folder: per-judge scores for per-judge views",
        )
        parser.add_argument("--bootstrap", type=int, default=1000, help="resamples (0: none)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN, help="TOST margin")
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument(
            "--epsilon", type=float, default=DEFAULT_EPSILON, help="alt-test cost margin (default %(default)s)"
        )
        parser.add_argument(
            "--min-items",
            type=int,
            default=ALT_MIN_ITEMS,
            help="alt-test: items a reviewer needs to be tested (the authors' %(default)s)",
        )
        parser.add_argument(
            "--threshold",
            type=float,
            default=DEFAULT_THRESHOLD,
            help="decision view: accept when the score is >= this (default %(default)s)",
        )
        parser.add_argument("--rubric-version", default="")
        parser.add_argument("--judge-model", action="append", default=[])
        parser.add_argument("--prompt-hash", action="append", default=[])

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["bootstrap"] < 0:
            raise CommandError("--bootstrap must be 0 or more")
        if opts["margin"] <= 0:
            raise CommandError("--margin must be positive")
        if not 0 < opts["alpha"] < 0.5:
            raise CommandError("--alpha must be between 0 and 0.5")
        if not 0 <= opts["epsilon"] <= 0.5:
            raise CommandError("--epsilon must be between 0 and 0.5 (a difference of two proportions)")
        if opts["min_items"] < 2:
            raise CommandError("--min-items must be 2 or more")
        try:
            data = load_mlrbench(
                opts["human"],
                opts["llm"],
                judge_reviews_dir=opts["judge_reviews"],
                rubric_version=opts["rubric_version"],
                judge_models=tuple(opts["judge_model"]),
                prompt_hashes=tuple(opts["prompt_hash"]),
            )
        except LoadError as exc:
            raise CommandError(str(exc)) from exc
        paired = pair(data, opts["pairing"])
        result = analyse(
            paired,
            n_boot=opts["bootstrap"],
            seed=opts["seed"],
            margin=opts["margin"],
            alpha=opts["alpha"],
            epsilon=opts["epsilon"],
            threshold=opts["threshold"],
            min_items=opts["min_items"],
        )
        self.stdout.write(to_json(result) if opts["format"] == "json" else to_table(result))
        if opts["report"]:
            out = Path(opts["report"])
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(to_html(result, paired), encoding="utf-8")
                out.with_suffix(".csv").write_text(to_csv(result), encoding="utf-8")
                out.with_suffix(".json").write_text(to_json(result), encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"{out}: cannot write the report: {exc}") from exc
            self.stderr.write(f"report: {out}, {out.with_suffix('.csv')}, {out.with_suffix('.json')}")
