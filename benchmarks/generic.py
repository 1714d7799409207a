"""Cold and warm timings of the generic path (issue 22), printed, never asserted.

    python benchmarks/generic.py

For five configs (four types with no record of their own, among them LongCat-Flash, a
741,053,585,408-parameter MoE at its config class's defaults, and DeepSeek-V3): a fresh process runs ``symtrans params DIR --format json`` with an empty
disk cache (cold: torch and transformers imported, the meta builds of the inference) and
again (warm: answered from the disk cache, no torch, no SymPy).  Peak RSS of each child is
printed (``ru_maxrss``).  DeepSeek-V3 (671B, MoE) has a curated record, so the CLI never
sends it down the generic path: its cold figure is the generic count called directly
(``catalog.generic.model.count``) in a fresh process, and it has no warm figure.
Goals (issue 22): cold <= 5 s, warm <= 0.5 s, peak memory < 1 GiB.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# DeepSeek-V3's published config.json (deepseek-ai/DeepSeek-V3, the keys that size it).
DEEPSEEK_V3 = {
    "model_type": "deepseek_v3",
    "vocab_size": 129280,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "moe_layer_freq": 1,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "n_group": 8,
    "topk_group": 4,
    "max_position_embeddings": 163840,
    "tie_word_embeddings": False,
}
# Four model types with no record of their own (the CLI sends them down the generic path; a
# test in tests/test_benchmarks_smoke.py keeps them so), at their config classes' defaults.
CONFIGS = {
    "longcat_flash (default, MoE)": {"model_type": "longcat_flash"},
    "minimax (default, lightning-attention MoE hybrid)": {"model_type": "minimax"},
    "kimi_linear (default, linear-attention MoE hybrid)": {"model_type": "kimi_linear"},
    "xlstm (default)": {"model_type": "xlstm"},
}


def child(cmd: list[str], env: dict) -> tuple[float, int, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return dt, max(peak, before), r.stdout


def main() -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print(f"python {sys.version.split()[0]}, cores {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        env["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        for label, cfg in CONFIGS.items():
            d = Path(tmp) / cfg["model_type"]
            d.mkdir()
            (d / "config.json").write_text(json.dumps(cfg))
            cmd = [sys.executable, "-m", "symtrans", "params", str(d), "--format", "json"]
            cold, peak, out = child(cmd, env)
            warm, _, out2 = child(cmd, env)
            total = json.loads(out)["total"]
            same = "same output" if out == out2 else "OUTPUT DIFFERS"
            print(
                f"{label:40s} total {total:>16,}  cold {cold:6.2f} s  warm {warm:5.2f} s  "
                f"(ratio {warm / cold:.3f}, {same})  peak RSS so far {peak / 1024:.0f} MiB"
            )
        code = (
            "import json,sys; from symtrans.catalog.generic.model import count; "
            f"m = count(json.loads({json.dumps(json.dumps(DEEPSEEK_V3))})); print(m.total, len(m.numeric), m.probes)"
        )
        cold, peak, out = child([sys.executable, "-c", code], env)
        total, numeric, probes = out.split()
        print(
            f"{'deepseek_v3 (DeepSeek-V3 published, 671B)':40s} total {int(total):>16,}  cold {cold:6.2f} s  "
            f"warm   n/a (curated record)  numeric terms {numeric}, probes {probes}  peak RSS so far {peak / 1024:.0f} MiB"
        )
    print("goals: cold <= 5 s, warm <= 0.5 s, peak < 1 GiB (not asserted)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
