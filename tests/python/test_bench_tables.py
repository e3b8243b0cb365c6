"""bench/tables.py prints docs/performance.md's tables from result files: run_bench's cases and dynamic_shapes'
model runs and microbenchmarks; an unreadable file exits 2 naming it."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "bench", "tables.py")


def _run(*paths):
    # tables.py writes UTF-8 (its empty cells are em dashes) whatever the locale, which may be ASCII under make test.
    return subprocess.run([sys.executable, TOOL, *map(str, paths)], capture_output=True, encoding="utf-8",
                          timeout=60)


def _tables_of(tmp_path, name, doc):
    """tables.py's output for `doc` written as `name`; it must exit 0."""
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    p = _run(path)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_dynamic_shapes_results_print_the_model_and_micro_tables(tmp_path):
    doc = {"gpu": "NVIDIA H200", "date": "2026-12-03", "commit": "abc1234", "torch": "2.11", "model": "gpt2_4l",
           "eager_cold_size": [5, 337], "eager_cold_size_first_call_s": 0.0831,
           "model_runs": {"hipinductor": {"first_calls_total_s": 15.27, "unseen_first_call_s": 0.0051,
                                          "cold_size": [5, 333], "cold_size_first_call_s": 0.8515,
                                          "dynamic_steady_ms": 1.2836, "static_steady_ms": 1.0559}},
           "micro": {"softmax_bf16_32kx1k": {"dynamic_ms": 0.0536, "static_ms": 0.0386, "dynamic_vs_static": 1.389}}}
    out = _tables_of(tmp_path, "dynamic-shapes-h200.json", doc)
    assert "commit abc1234" in out
    assert "| hipinductor | 15.3 | 5.1 | 0.85 (5 x 333) | 1.28 | 1.06 |" in out, out
    assert "eager's first call at its cold size (5 x 337): 0.08 s" in out
    assert "| softmax_bf16_32kx1k | 0.054 | 0.039 | 1.39 |" in out, out


def test_run_bench_results_print_a_row_per_case(tmp_path):
    doc = {"gpu": "NVIDIA H200", "date": "2026-12-03", "commit": None, "torch": "2.11", "copy_GBps": 4247.0,
           "rounds": 3, "cases": {"add_relu_f32_64M": {"eager_ms": 0.19, "inductor_ms": 0.2, "hipinductor_ms": 0.19,
                                                       "speedup_vs_inductor": 1.05}}}
    out = _tables_of(tmp_path, "microbench-h200.json", doc)
    assert "commit not recorded" in out
    assert "| add_relu_f32_64M | 0.190 | 0.200 | 0.190 | 1.05x |" in out, out


def test_a_missing_or_malformed_file_exits_2_naming_it(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for path in (tmp_path / "missing.json", bad):
        p = _run(path)
        assert p.returncode == 2 and str(path) in p.stderr, p.stderr
