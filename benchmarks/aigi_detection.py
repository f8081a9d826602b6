"""Benchmark of AI-generated-image detection (paper 7): feature caching and head training.

1. Feature caching throughput (images/s) of the frozen encoders used here — the random
   multi-scale CNN, a tiny ViT and a tiny CLIP vision tower built from configs — and the cache
   size per image (float32 and float16).
2. Head training on cached per-layer cues vs end-to-end training of the same head (the frozen
   encoder runs in every epoch): ratio of epoch times, for the baseline and SA-AFL losses.
   The cached cues are bit-identical to the ones the end-to-end loop recomputes, so the ratio is
   the pure cost of recomputing features.
3. SA-AFL's training overhead relative to the baseline head on the same cached cues.

Medians of repeated calls (robust to preemption on a shared machine); one torch thread.
Run: ``.venv/bin/python benchmarks/aigi_detection.py`` (about a minute).
"""

from __future__ import annotations

import numpy as np
import torch
from _timing import median_wall

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

    print("\n== 2. head epoch: cached cues vs end-to-end (frozen encoder recomputed every epoch) ==")
    print(f"{'encoder':<28} {'head':<9} {'cached s/ep':>11} {'end-to-end s/ep':>15} {'ratio':>7}")
    epochs = 3
    for name, enc in list(encoders.items())[:2]:
        cues = enc.layer_cls(data.images)
        for hname, sw in (("baseline", LossSwitches.baseline()), ("SA-AFL", LossSwitches())):
            def cached():
                train_detector(cues, data.label, sw, content=data.content, epochs=epochs, seed=0)

            def end_to_end():
                for _ in range(epochs):  # same head budget, features recomputed each epoch
                    c = enc.layer_cls(data.images)
                    train_detector(c, data.label, sw, content=data.content, epochs=1, seed=0)

            tc, te = median_wall(cached, 3) / epochs, median_wall(end_to_end, 3) / epochs
            print(f"{name:<28} {hname:<9} {tc:>11.4f} {te:>15.4f} {te / tc:>6.1f}x")

    print("\n== 3. SA-AFL overhead vs baseline head (cached cues, 20 epochs) ==")
    cues = encoders["random-cnn (4 layers, D=32)"].layer_cls(data.images)
    tb = median_wall(lambda: train_detector(cues, data.label, LossSwitches.baseline(), epochs=20, seed=0), 3)
    ts = median_wall(lambda: train_detector(cues, data.label, LossSwitches(), content=data.content, epochs=20, seed=0), 3)
    print(f"baseline {tb:.3f} s, SA-AFL {ts:.3f} s: SA-AFL / baseline = {ts / tb:.2f}x "
          f"({n * 20 / tb:.0f} vs {n * 20 / ts:.0f} samples/s)")


if __name__ == "__main__":
    main()
