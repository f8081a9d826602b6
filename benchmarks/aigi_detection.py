"""Benchmark of AI-generated-image detection (paper 7): feature caching and head training.

1. Feature caching throughput (images/s) of the frozen encoders used here — the random
   multi-scale CNN, a tiny ViT and a tiny CLIP vision tower built from configs — and the cache
   size per image (float32 and float16).
2. Head training with the per-layer cues cached once (what the experiment does) against the
   baseline without caching — the same training with the frozen encoder recomputed every epoch
   (``train_detector(recompute_cues=...)``) — for the baseline and SA-AFL losses, in the same run:
   times, their ratio, and a check that both give bit-identical trained weights (same result).
3. SA-AFL's training overhead relative to the baseline head on the same cached cues.

Section 1 in wall time (medians of repeated calls); sections 2 and 3 in CPU time (the smallest of
3 calls: not inflated by other processes on a shared machine), recorded through ``record()``;
one torch thread.
Run: ``.venv/bin/python benchmarks/aigi_detection.py`` (about a minute).
"""

from __future__ import annotations

import numpy as np
import torch
from _timing import best_cpu, median_wall, record

from neurips26.aigi_detection import world as W
from neurips26.aigi_detection.encoder import RandomConvEncoder, build_tiny_encoder
from neurips26.aigi_detection.heads import LossSwitches, train_detector


def main() -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    data = W.ImageSet.concat([W.make_reals(512, rng), W.make_fakes("upconv_gan", 256, rng, content_probs=W.biased_probs(0.8)),
                              W.make_fakes("bilinear_gan", 256, rng, content_probs=W.biased_probs(0.8))])
    n = len(data)
    encoders = {
        "random-cnn (4 layers, D=32)": RandomConvEncoder(32, 4, 32, seed=0),
        "tiny ViT (6 blocks, D=64)": build_tiny_encoder("vit", 32, 4, 64, 6, 4),
        "tiny CLIP (6 blocks, D=64)": build_tiny_encoder("clip", 32, 4, 64, 6, 4),
    }
    print(f"== 1. feature caching ({n} images, 32x32) ==")
    print(f"{'encoder':<28} {'images/s':>9} {'cache KB/img f32':>17} {'f16':>6}")
    for name, enc in encoders.items():
        t = median_wall(lambda: enc.layer_cls(data.images), repeat=3)
        per = enc.num_layers * enc.hidden_size
        print(f"{name:<28} {n / t:>9.0f} {per * 4 / 1024:>17.2f} {per * 2 / 1024:>6.2f}")
    print("   (CLIP ViT-L/14 at full scale: 24 x 1024 cues = 96 KB/img f32, 48 KB f16; 'layers=' keeps the last k)")

    print("\n== 2. head training: cues cached once vs frozen encoder recomputed every epoch (same result) ==")
    print(f"{'encoder':<28} {'head':<9} {'cached s':>9} {'recomputed s':>13} {'ratio':>7} {'same head':>10}")
    epochs = 3
    for name, enc in list(encoders.items())[:2]:
        for hname, sw in (("baseline", LossSwitches.baseline()), ("SA-AFL", LossSwitches())):
            out = {}

            def cached():  # what the experiment does: encode once, train on the cached cues
                cues = enc.layer_cls(data.images)
                out["cached"] = train_detector(cues, data.label, sw, content=data.content, epochs=epochs, seed=0)

            def recomputed():  # baseline: the same training, the frozen encoder run again every epoch
                cues = enc.layer_cls(data.images)
                out["recomputed"] = train_detector(cues, data.label, sw, content=data.content, epochs=epochs, seed=0,
                                                   recompute_cues=lambda: enc.layer_cls(data.images))

            tc, te = best_cpu(cached, 3)[0], best_cpu(recomputed, 3)[0]
            a, b = out["cached"].head.state_dict(), out["recomputed"].head.state_dict()
            same = all(torch.equal(a[k], b[k]) for k in a)
            print(f"{name:<28} {hname:<9} {tc:>9.3f} {te:>13.3f} {te / tc:>6.1f}x {str(same):>10}")
            record(f"{hname} head, {name}: cues cached once vs encoder recomputed every epoch", tc, te,
                   note=f"{n} images, {epochs} epochs, encoding included in both; bit-identical heads: {same}")
    print(f"   ({epochs} epochs, encoding included in both; 'same head': bit-identical trained weights)")

    print("\n== 3. SA-AFL overhead vs baseline head (cached cues, 20 epochs) ==")
    cues = encoders["random-cnn (4 layers, D=32)"].layer_cls(data.images)
    tb = best_cpu(lambda: train_detector(cues, data.label, LossSwitches.baseline(), epochs=20, seed=0), 3)[0]
    ts = best_cpu(lambda: train_detector(cues, data.label, LossSwitches(), content=data.content, epochs=20, seed=0),
                  3)[0]
    print(f"CPU: baseline {tb:.3f} s, SA-AFL {ts:.3f} s: SA-AFL / baseline = {ts / tb:.2f}x "
          f"({n * 20 / tb:.0f} vs {n * 20 / ts:.0f} samples/s)")
    record("head training, 20 epochs on cached cues: SA-AFL vs baseline (BCE) head", ts, tb,
           note=f"{n} images, random-cnn cues; ratio < 1: SA-AFL's extra cost")


if __name__ == "__main__":
    main()
