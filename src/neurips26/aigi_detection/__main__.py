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


def _check_output(path: Path, flag: str) -> None:
    """Refuse an output path that is a folder, or whose folder is missing or not writable (``OSError``)."""
    import os

    if path.is_dir():
        raise IsADirectoryError(f"{flag} {str(path)!r} is a folder; allowed: a file path in an existing, writable folder")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"output folder {str(path.parent)!r} does not exist")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise PermissionError(f"{flag} {str(path)!r} is not writable")


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
        if dest:  # fail before encoding, not after (a directory or unwritable --out was a traceback at the end)
            _check_output(Path(dest).expanduser(), "--head-out" if args.cmd == "train" else "--out")
        if args.cmd == "train" and args.epochs < 1:
            raise ValueError(f"--epochs {args.epochs}; allowed: >= 1")
        if args.cmd == "score" and not Path(args.head).expanduser().is_file():
            raise FileNotFoundError(f"detector head file {args.head!r} not found")
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
    except (OSError, ValueError, RuntimeError) as exc:  # one line, never a traceback (BackendError is a RuntimeError)
        print(f"error: {' '.join(str(exc).split()) or type(exc).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")  # quotes paths that contain commas or quotes
    w.writerow(["path", "score", "is_generated"])
    for p, s, g in zip(pred.paths, pred.scores, pred.is_generated):
        w.writerow([p, "" if s != s else f"{s:.6f}", "" if s != s else int(g)])
    text = buf.getvalue()
    if args.out:
        try:
            Path(args.out).expanduser().write_text(text)
        except OSError as exc:
            print(f"error: cannot write --out {args.out!r}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    for p, r in pred.skipped.items():
        print(f"skipped {p}: {r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
