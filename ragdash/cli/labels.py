"""`ragdash label`: export the sample to label as a CSV, import labels (or stand-in labels from
a reference metric), and show what they say; `print_trust` is also the CLI summary's part."""

from __future__ import annotations

import argparse

from ragdash.constants import REFERENCE_METRICS
from ragdash.labels import headline
from ragdash.labels.exchange import MAX_IMPORT_BYTES, MAX_IMPORT_LABELLERS, MAX_IMPORT_ROWS
from ragdash.labels.store import LABELS, MAX_LABELLERS, MAX_LABELS, MAX_SEED, RULES
from ragdash.labels.tables import footnotes, labels_line, ppi_frame
from ragdash.rundir import Run

METRICS = tuple(REFERENCE_METRICS)


def _size(text: str) -> int:
    """--n: a sample size, a whole number of 1 or more."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"the sample size must be a whole number of 1 or more, "
                                         f"not {text[:40]!r}")
    return n


def _seed(text: str) -> int:
    """--seed: a whole number from 0 to MAX_SEED (what label_sample.parquet stores)."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number from 0 to "
                                         f"{MAX_SEED:,}, not {text[:40]!r}")
    return seed


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `label` sub-command and its `export`, `import` and `status`."""
    p = sub.add_parser("label", help="human labels of answers: export a sample to label, "
                                     "import labels, show agreement and PPI estimates",
                       description="Label a random sample of a run's answers (correct, partly "
                                   "correct, wrong, cannot tell) to check the judge and to get "
                                   "prediction-powered intervals on the share correct.")
    cmd = p.add_subparsers(dest="label_command", required=True)
    ex = cmd.add_parser("export", help="write the sample to label as a CSV (no judge score)")
    ex.add_argument("--run-dir", required=True, help="run with answers.parquet")
    ex.add_argument("--n", type=_size, help="sample size (drawn once; a larger n extends it)")
    ex.add_argument("--seed", type=_seed, help="seed of the draw (default: the sample's, else "
                                               "0)")
    ex.add_argument("--rule", choices=RULES, help="judge: by system × the judge's verdict "
                                                  "(default); neyman: the same strata, "
                                                  "more labels where the reference metric "
                                                  "varies; uniform at random; stratified: "
                                                  "equal per system")
    ex.add_argument("-o", "--output", required=True, help="CSV to write")
    im = cmd.add_parser("import", help="read labels from a CSV (qid, system, label; optional "
                                       "labeller, comment), or make stand-in labels",
                        description="Labels: " + ", ".join(LABELS) + ". Every problem is "
                                    "reported by row and field; nothing is imported then. "
                                    f"Limits per file: {MAX_IMPORT_BYTES // 1_000_000} MB; "
                                    f"{MAX_IMPORT_ROWS:,} rows, and {MAX_IMPORT_LABELLERS} rows "
                                    f"per answer of the run; {MAX_IMPORT_LABELLERS} labellers. "
                                    "A run "
                                    f"keeps {MAX_LABELS:,} labels from {MAX_LABELLERS} "
                                    "labellers.")
    im.add_argument("--run-dir", required=True, help="run with answers.parquet")
    im.add_argument("file", nargs="?", help="labels CSV (an exported sample, filled in)")
    im.add_argument("--labeller", help="labeller of rows without a labeller column")
    im.add_argument("--from-reference", choices=METRICS, metavar="METRIC",
                    help="instead of a file: stand-in labels for the sample from a reference "
                         "metric (contains, em, f1), named as such, never as human labels")
    im.add_argument("--n", type=_size, help="with --from-reference: sample size (default 60 "
                                          "when none is drawn)")
    im.add_argument("--seed", type=_seed, help="with --from-reference: seed of the draw")
    im.add_argument("--rule", choices=RULES, help="with --from-reference: rule of the draw")
    st = cmd.add_parser("status", help="labelling progress, judge agreement, PPI estimates")
    st.add_argument("--run-dir", required=True, help="run with labels")
    st.add_argument("--json", action="store_true",
                    help="print what the Overview shows as JSON (shares as fractions)")
    return p


def _run(path: str) -> Run:
    run = Run(path)
    if not run.exists():
        raise FileNotFoundError(f"{run.path} is not a run directory (no run manifest): give "
                                "--run-dir a run made by `ragdash run`")
    return run


def run(args: argparse.Namespace) -> int:
    from ragdash import labels

    run_ = _run(args.run_dir)
    if args.label_command == "status" and args.json:
        import json

        sections = labels.current(run_)
        if sections is None:
            raise FileNotFoundError(f"run {run_.path} has no answers to label")
        print(json.dumps(headline.status_json(sections["share"], sections["labels"]),
                         indent=1))
        return 0
    if args.label_command == "export":
        n = labels.export_csv(run_, args.output, args.n, args.rule, args.seed)
        sample = labels.read_sample(run_)
        print(f"Wrote {n} answers to label to {args.output} (sample rule "
              f"{sample['rule'].iloc[0]}, seed {int(sample['seed'].iloc[0])}). Fill the label "
              f"column with one of: {', '.join(LABELS)}; then `ragdash label import --run-dir "
              f"{args.run_dir} {args.output}`.")
        return 0
    if args.label_command == "import":
        if args.from_reference and args.file:
            raise ValueError("give a labels file or --from-reference, not both")
        if args.from_reference:
            done = labels.from_reference(run_, args.from_reference, args.n, args.rule,
                                         args.seed)
            print(f"{done.added + done.replaced} stand-in labels "
                  f"({labels.stand_in_name(args.from_reference)!r}; not human labels) for the "
                  f"sample; {done.replaced} replaced earlier ones.")
        elif args.file:
            done = labels.import_csv(run_, args.file, args.labeller)
            print(f"Imported {done.added} new labels, {done.replaced} replacing earlier ones "
                  f"by the same labeller; {done.unlabelled} rows without a label skipped.")
        else:
            raise ValueError("give the labels CSV to import, or --from-reference METRIC")
        labels.refresh(run_)
    print_trust(run_, always=True)
    return 0


def print_trust(run: Run, always: bool = False) -> None:
    """Labels, the judge's agreement verdict and the share-correct table (a run without labels
    or calibration.json prints nothing unless `always`)."""
    from ragdash import labels

    if not always and not (run.has("labels") or run.has("calibration")):
        return
    sections = labels.current(run)
    if sections is None:
        return
    lab = sections["labels"]
    print()
    for line in labels_line(lab):
        print(line)
    print(f"Is the judge right? {sections['agreement']['verdict']}")
    for pair in sections["agreement"].get("annotators", []):
        k = "n/a" if pair["kappa"] is None else f"{pair['kappa']:.2f}"
        print(f"Labellers {pair['labellers'][0]} and {pair['labellers'][1]}: same label on "
              f"{pair['agreement']:.0%} of {pair['n']} answers (Cohen's κ = {k})")
    share = sections["share"]
    for line in headline.sentences(share, lab, (lab.get("sample") or {}).get("rule")):
        print(line.replace("**", ""))
    width = max(len(s) for s in share["systems"])
    for system, e in share["systems"].items():
        value, caption = headline.tile(e)
        print(f"  {system:<{width}}  {value:>5}  {caption}")
    print(f"Intervals on {share['estimand_text']} (calibration.estimand: "
          f"{share['estimand']!r}).")
    print("Other estimators, answers as if drawn from an endless supply (share correct in %, "
          "95 % intervals; correct = label 'correct' / judge 5):")
    print(ppi_frame(sections["ppi"]).to_string())
    for line in footnotes(sections["ppi"]):
        print(f"  {line}")
