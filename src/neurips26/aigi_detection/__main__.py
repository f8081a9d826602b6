"""Command line: train a head on a folder, or score a folder of images.

    python -m neurips26.aigi_detection train ROOT --encoder DIR --head-out head.pt [--baseline]
    python -m neurips26.aigi_detection score FOLDER --encoder DIR --head head.pt [--out scores.csv]

``ROOT`` has the ``real/`` + ``fake/<generator>/`` layout; ``FOLDER`` is any folder of images
(searched recursively). ``DIR`` is a local encoder folder written by ``save_pretrained`` (CLIP or
ViT); nothing is downloaded. ``score`` prints ``path,score,is_generated`` CSV lines (score =
P(generated); unreadable files get an empty score and are reported on stderr).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 2 bad input with a one-line message)."""
    ap = argparse.ArgumentParser(prog="python -m neurips26.aigi_detection", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train", help="train a head on ROOT/real and ROOT/fake/<generator>")
    tr.add_argument("root")
    tr.add_argument("--encoder", required=True, help="local encoder folder (save_pretrained)")
    tr.add_argument("--head-out", required=True, help="where to save the head (.pt)")
    tr.add_argument("--baseline", action="store_true", help="plain linear/BCE head instead of SA-AFL")
    tr.add_argument("--epochs", type=int, default=60)
    sc = sub.add_parser("score", help="score every image under FOLDER")
    sc.add_argument("folder")
    sc.add_argument("--encoder", required=True, help="local encoder folder (save_pretrained)")
    sc.add_argument("--head", required=True, help="head file written by train / AIGIDetector.save")
    sc.add_argument("--out", help="write the CSV here instead of stdout")
    args = ap.parse_args(argv)

    from .data import IMAGE_EXTENSIONS
    from .detector import AIGIDetector
    from .encoder import load_encoder
    from .heads import LossSwitches

    try:
        dest = args.head_out if args.cmd == "train" else args.out
        if dest and not Path(dest).expanduser().parent.is_dir():  # fail before encoding, not after
            raise FileNotFoundError(f"output folder {str(Path(dest).expanduser().parent)!r} does not exist")
        if args.cmd == "train" and args.epochs < 1:
            raise ValueError(f"--epochs {args.epochs}; allowed: >= 1")
        enc = load_encoder(args.encoder)
        if args.cmd == "train":
            sw = LossSwitches.baseline() if args.baseline else LossSwitches()
            det = AIGIDetector.fit(args.root, enc, sw, epochs=args.epochs)
            det.save(args.head_out)
            print(f"saved head to {args.head_out}")
            return 0
        folder = Path(args.folder).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(f"image folder {str(folder)!r} not found")
        paths = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
        if not paths:
            raise ValueError(f"no images under {str(folder)!r} (extensions {IMAGE_EXTENSIONS})")
        det = AIGIDetector.load(args.head, enc)
        pred = det.predict(paths)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")  # quotes paths that contain commas or quotes
    w.writerow(["path", "score", "is_generated"])
    for p, s, g in zip(pred.paths, pred.scores, pred.is_generated):
        w.writerow([p, "" if s != s else f"{s:.6f}", "" if s != s else int(g)])
    text = buf.getvalue()
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    for p, r in pred.skipped.items():
        print(f"skipped {p}: {r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
