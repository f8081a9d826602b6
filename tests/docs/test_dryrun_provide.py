"""The full-scale dry run says what a user must bring (``neurips26.harness.dryrun.must_provide``).

Catches: an endpoint system whose model and call estimate are missing from the plan; a model
server at a local address (a VLM on its own GPU) left out of the GPU totals; a paper-data part
(``data_root``/``data_dir``/``model_path`` unset) dropped without a WARNING; an optional folder
(a local model instead of an endpoint) reported as missing.
"""

from __future__ import annotations

import io

from rich.console import Console

from neurips26.harness.dryrun import PAPER_DATA, SystemPlan, must_provide, print_plan, totals


def _plans():
    endpoint = SystemPlan("weight_interp", "full", tasks=10, confirmation_tasks=1, num_cpus=4, num_gpus=1, hours=6,
                          credentials=("OPENAI_API_KEY",),
                          inputs={"backend": "openai", "model": "gpt-4.1", "base_url": "", "model_path": "",
                                  "model_path.description": "local model", "max_tokens": 120,
                                  "calls": (32400, "calls")})
    server = SystemPlan("belief_search", "full", tasks=10, confirmation_tasks=1, num_cpus=1, num_gpus=0, hours=4,
                        inputs={"backend": "openai", "model": "Qwen/Qwen2.5-VL-7B-Instruct",
                                "base_url": "http://localhost:8000/v1", "calls": (400, "looks")})
    data = SystemPlan("aigi_detection", "full", tasks=10, num_cpus=1, hours=1,
                      inputs={"data_root": "", "data_root.description": "", "encoder_path": "",
                              "encoder_path.description": ""})
    return [endpoint, server, data]


def test_must_provide_lists_endpoint_server_and_folders():
    """Each kind appears with what it needs; the optional model_path of an endpoint system does not."""
    items = {(x.system, x.kind, x.what): x for x in must_provide(_plans())}
    ep = items[("weight_interp", "endpoint", "gpt-4.1")]
    assert "32,400" in ep.detail and "OPENAI_API_KEY" in ep.detail and "356,400" in ep.detail  # 32,400 x 11 tasks
    sv = items[("belief_search", "server", "Qwen/Qwen2.5-VL-7B-Instruct")]
    assert sv.gpus == 1 and sv.hours == 44  # 11 tasks x 4 h
    assert items[("aigi_detection", "folder", "data_root")].dropped
    assert ("weight_interp", "folder", "model_path") not in items  # optional: endpoint used instead
    assert ("aigi_detection", "folder", "encoder_path") not in items or not items[
        ("aigi_detection", "folder", "encoder_path")].dropped


def test_server_gpu_counts_in_totals_and_dropped_part_is_warned():
    """GPU-hours include the server's GPU for its system's task-hours; the plan prints a WARNING."""
    plans = _plans()
    tot = totals(plans)
    assert tot["server_gpus"] == 1 and tot["server_gpu_hours"] == 44
    assert tot["gpu_hours"] == 11 * 1 * 6 + 44
    out = io.StringIO()
    print_plan(plans, Console(file=out, width=200), seeds=list(range(10)))
    text = out.getvalue()
    assert "you must provide:" in text and "gpt-4.1" in text and "Qwen/Qwen2.5-VL-7B-Instruct" in text
    assert "WARNING: aigi-detection: data_root is not set" in text
    assert set(PAPER_DATA) == {"aigi_detection", "feature_learning", "counting_readout", "bit_mask_tuning"}
