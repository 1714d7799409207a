"""Faults a new user found in ``deploy``, ``flops``, ``memory`` and ``report`` (issues 20 and 23),
each reproduced and checked against an independent source named beside it: vLLM's source (the
rule written out here as arithmetic), transformers' models on the meta device, FlopCounterMode.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from conftest import require

from symtrans.cli.main import main

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
GiB = 2**30
# CUDA-visible memory of an H100 80GB as vLLM logged it: 'total_gpu_memory 79.22GiB'
# (github.com/vllm-project/vllm/pull/10511)
H100_CUDA = int(Fraction(7922, 100) * GiB)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def meta_params(config_json: Path, auto_class: str = "AutoModelForCausalLM") -> int:
    """Parameters of the transformers class for ``config_json``, built on the meta device."""
    torch = require("torch")
    transformers = require("transformers")
    cfg = transformers.AutoConfig.for_model(**json.loads(config_json.read_text()))
    with torch.device("meta"):
        m = getattr(transformers, auto_class).from_config(cfg)
    return sum(p.numel() for p in m.parameters())


# ------------------------------------------- 1. vLLM's 'Maximum concurrency' with sliding windows


# no activation reserve and no memory outside PyTorch: the KV budget is u·M − weights alone
BARE = ("--accelerator", "h100-sxm", "--dtype", "bf16", "--activation-reserve", "0", "--non-torch", "0")


def _vllm_window_plan(capsys, config: str, *extra):
    code, out, err = run(capsys, "deploy", CONFIGS / config, *BARE, *extra, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_mistral_all_windowed_concurrency_follows_vllm_groups(capsys):
    # vLLM (vllm/v1/core/kv_cache_utils.py at main, get_kv_cache_groups / get_kv_cache_config_from_groups /
    # get_max_concurrency_for_kv_cache_config; vllm/v1/kv_cache_interface.py SlidingWindowSpec):
    # every layer windowed alike -> one group of all 32 layers; blocks = available // page // 32;
    # 'Maximum concurrency' = blocks / (cdiv(min(w - 1 + max_num_batched_tokens, max_model_len), 16) + 1).
    weights = 2 * meta_params(CONFIGS / "mistral-7b-v0.1.json")  # bf16
    page = 2 * 16 * 8 * 128 * 2  # K and V x block 16 x 8 KV heads x head 128 x 2 bytes
    available = int(Fraction(92, 100) * H100_CUDA) - weights  # vLLM's 0.92 default (vllm/config/cache.py)
    blocks = available // page // 32
    per_request = cdiv(min(4096 - 1 + 8192, 32768), 16) + 1  # 8,192 max_num_batched_tokens on an H100
    assert per_request == 769
    r = _vllm_window_plan(capsys, "mistral-7b-v0.1.json")
    assert r["token_budget"] == blocks * 16
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, per_request)
    assert r["max_concurrency"] == blocks // per_request
    # the text quotes vLLM's line with max_model_len and two decimals; the old figure was budget / 32,768
    code, out, _ = run(capsys, "deploy", CONFIGS / "mistral-7b-v0.1.json", *BARE)
    assert f"Maximum concurrency for 32,768 tokens per request: {blocks / per_request:.2f}x" in out
    assert f"{blocks * 16 / 32768:.2f}x" not in out


def test_gemma2_alternating_windows_two_groups(capsys):
    # Gemma-2-9B: 21 full and 21 window-4,096 layers -> two groups of 21 (kv_cache_utils.py,
    # _get_kv_cache_groups_uniform_page_size: 21 < 1.5 x 21 so the group size is 21); blocks =
    # available // page // 21; 'GPU KV cache size' = blocks // 2 x 16; a request of 8,192 tokens takes
    # cdiv(8192, 16) = 512 full blocks + cdiv(min(4095 + 8192, 8192), 16) + 1 = 513 windowed ones.
    weights = 2 * meta_params(CONFIGS / "gemma-2-9b.json")
    page = 2 * 16 * 8 * 256 * 2
    available = int(Fraction(92, 100) * H100_CUDA) - weights
    blocks = available // page // 21
    r = _vllm_window_plan(capsys, "gemma-2-9b.json")
    assert r["token_budget"] == blocks // 2 * 16
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, 512 + 513)
    assert r["max_concurrency"] == blocks // 1025


def test_gemma3_five_to_one_pads_groups(capsys):
    # Gemma-3-12B: 8 full and 40 window-1,024 layers -> group size 8 (40 >= 1.5 x 8): 1 full group and
    # 5 windowed ones; blocks = available // page // 8, 'GPU KV cache size' = blocks // 6 x 16, and a
    # request of 131,072 tokens takes 8,192 + 5 x (cdiv(1023 + 8192, 16) + 1 = 577) blocks.
    weights = 2 * meta_params(CONFIGS / "gemma-3-12b-it.json", "AutoModelForImageTextToText")  # with its vision tower
    page = 2 * 16 * 8 * 256 * 2  # 8 KV heads of 256 (config.json)
    available = int(Fraction(92, 100) * H100_CUDA) - weights
    r = _vllm_window_plan(capsys, "gemma-3-12b-it.json")
    blocks = available // page // 8
    assert r["token_budget"] == blocks // 6 * 16
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, 8192 + 5 * 577)


def test_v0_prints_tokens_over_max_model_len(capsys):
    # vLLM 0.6 (vllm/executor/executor_base.py, initialize_cache): max_concurrency = num_gpu_blocks x
    # block_size / max_model_len, windows or not
    r = _vllm_window_plan(capsys, "mistral-7b-v0.1.json", "--engine-version", "0.6.4", "--max-model-len", "8192")
    assert Fraction(r["vllm_concurrency"]) == Fraction(r["token_budget"], 8192)


# ------------------------------------------------ 2. prefix sharing needs prefix caching; the pool


def test_shared_prefix_needs_prefix_caching_on(capsys):
    # vLLM V0 (0.4 to 0.7) leaves automatic prefix caching off unless --enable-prefix-caching is given
    # (EngineArgs.enable_prefix_caching: bool = False, vllm/engine/arg_utils.py); V1 turns it on by default
    # and --no-enable-prefix-caching turns it off. Without it no block is shared, so a --shared-prefix
    # cannot raise the concurrency: one line, exit 2.
    base = ("deploy", "llama-2-7b", "--accelerator", "a100-80gb", "--shared-prefix", "4000")
    for extra in (("--engine-version", "0.4"), ("--no-enable-prefix-caching",), ("--engine", "none")):
        code, out, err = run(capsys, *base, *extra)
        assert code == 2 and out == "" and err.count("\n") == 1 and "prefix-caching" in err, (extra, err)
    code, _, err = run(capsys, *base, "--engine-version", "0.4", "--enable-prefix-caching")
    assert code == 0, err


def test_memory_table_shows_the_allocated_pool_not_requests_times_full_length(capsys):
    # Llama-2-7B on an A100-80GB, vLLM 0.4 with --enable-prefix-caching and a 4,000-token shared prefix:
    # vLLM allocates its pool once (floor(available / (16 x 524,288)) blocks: 'GPU blocks' in V0's log),
    # and the running batch (max_num_seqs 256, vLLM 0.4's default) holds the prefix's floor(min(4000,
    # 4094) / 16) = 250 blocks once and cdiv(4096, 16) − 250 = 6 blocks each: (250 + 256 x 6) x 16 x
    # 524,288 bytes, not 256 x 2 GiB = 512 GiB on an 80 GiB card.
    code, out, err = run(
        capsys,
        "deploy",
        "llama-2-7b",
        "--accelerator",
        "a100-80gb",
        "--engine-version",
        "0.4",
        "--enable-prefix-caching",
        "--shared-prefix",
        "4000",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    m = r["memory_per_device"]
    kv_tok = 2 * 32 * 4096 * 2  # K and V x 32 layers x d_model 4,096 x 2 bytes
    assert m["kv_cache_allocated"] == m["kv_blocks"] * 16 * kv_tok == r["token_budget"] * kv_tok
    assert r["batch_per_replica"] == 256
    assert m["kv_cache_at_batch"] == (250 + 256 * 6) * 16 * kv_tok == 14_982_053_888
    assert m["kv_cache_at_batch"] <= m["kv_cache_allocated"] < 80 * GiB
    code, out, _ = run(
        capsys,
        "deploy",
        "llama-2-7b",
        "--accelerator",
        "a100-80gb",
        "--enable-prefix-caching",
        "--shared-prefix",
        "4000",
    )
    assert "512.00 GiB" not in out  # 256 x 2 GiB
    assert "KV cache allocated" in out and "of which 256 requests hold" in out


# ------------------------------------------------ 3. ModernBERT's global and sliding layers


MODERNBERT_TINY = dict(
    model_type="modernbert",
    hidden_size=12,
    num_attention_heads=2,
    num_hidden_layers=4,
    intermediate_size=10,
    vocab_size=23,
    max_position_embeddings=32,
    pad_token_id=0,
    bos_token_id=0,
    eos_token_id=0,
    cls_token_id=0,
    sep_token_id=0,
    local_attention=6,  # |i − j| <= 3
    global_attn_every_n_layers=2,  # layers 0 and 2 global, 1 and 3 sliding (ModernBertConfig)
)


def _eager_modernbert_flops(cfg: dict, batch: int, length: int) -> int:
    """FlopCounterMode on transformers' eager ModernBertModel forward (the oracle)."""
    torch = require("torch")
    transformers = require("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    config = transformers.ModernBertConfig(**{k: v for k, v in cfg.items() if k != "model_type"})
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.ModernBertModel(config).eval()
    ids = torch.ones(batch, length, dtype=torch.long)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(input_ids=ids)
    return counter.get_total_flops()


def _symtrans_flops(capsys, tmp_path, cfg: dict, *extra) -> int:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, err = run(capsys, "flops", path, "--batch", "2", "--seq-len", "10", *extra, "--format", "json")
    assert code == 0, err
    return json.loads(out)["total"]


def test_modernbert_with_sliding_layers_flops_equal_eager_forward(capsys, tmp_path):
    # the eager forward computes the full L x L square on every layer and masks it (transformers'
    # create_bidirectional_sliding_window_mask), so --mask full equals FlopCounterMode
    for cfg in (MODERNBERT_TINY, {**MODERNBERT_TINY, "layer_types": ["sliding_attention"] * 4}):
        assert _symtrans_flops(capsys, tmp_path, cfg) == _eager_modernbert_flops(cfg, 2, 10)


def test_modernbert_mask_window_counts_the_band(capsys, tmp_path):
    # --mask window: each sliding layer's QK^T and scores·V only over pairs |i − j| <= local_attention // 2
    # (sliding_window_bidirectional_overlay); pairs counted by brute force here, the rest from the oracle
    eager = _eager_modernbert_flops(MODERNBERT_TINY, 2, 10)
    band = sum(1 for i in range(10) for j in range(10) if abs(i - j) <= 6 // 2)
    assert band == 10 * 10 - 2 * (1 + 2 + 3 + 4 + 5 + 6)  # 58: the 42 pairs beyond distance 3 dropped
    per_pair = 2 * 2 * 2 * 6 * 2  # (QK^T + scores V) x 2 FLOPs x B 2 x d_k 6 x h 2
    dropped = 2 * per_pair * (10 * 10 - band)  # two sliding layers
    assert _symtrans_flops(capsys, tmp_path, MODERNBERT_TINY, "--mask", "window") == eager - dropped


def test_modernbert_memory_and_report_no_longer_refused(capsys, tmp_path):
    path = CONFIGS / "modernbert-large-zeroshot-v2.0.json"
    code, out, err = run(capsys, "memory", path, "--format", "json")
    assert code == 0, err
    code, out, err = run(capsys, "report", path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert code == 0, err
    assert (tmp_path / "r.md").read_text().count("sliding window") >= 1
    # parameters are those of ModernBertModel on the meta device (windows change none)
    code, out, err = run(capsys, "params", path, "--format", "json")
    assert json.loads(out)["total"] == meta_params(path, "AutoModel")


# ------------------------------------------------ 4. a VLM's activation reserve says what it leaves out


def test_vlm_reserve_names_the_vision_encoder_profiling_it_leaves_out(capsys):
    # vLLM's profiling run also encodes dummy images of the processor's largest feature size
    # (vllm/v1/worker/gpu_model_runner.py, profile_run, which logs 'Encoder cache will be initialized with a
    # budget of N tokens, and profiled with M image items of the maximum feature size'): the peak depends on
    # the image processor, not config.json, so deploy says in one line that it is not in the reserve
    vlm = (CONFIGS / "qwen2-vl-7b.json", "--accelerator", "h100-sxm")
    for engine in ("vllm", "none"):
        code, out, err = run(capsys, "deploy", *vlm, "--engine", engine)
        assert code == 0, err
        said = [line for line in out.splitlines() if "vision encoder" in line]
        assert len(said) == 1 and "not included" in said[0] and "--activation-reserve" in said[0]
    code, out, _ = run(capsys, "deploy", *vlm, "--activation-reserve", "1000000000")
    assert "vision encoder" not in out  # the user's reserve is taken as given
    code, out, _ = run(capsys, "deploy", "llama-2-7b", "--accelerator", "h100-sxm")
    assert "vision encoder" not in out


# ------------------------------------------------ 5. every default deploy picks is stated with its source


def test_jamba_context_is_its_configs_max_position_embeddings_and_said(capsys):
    # vLLM's default max_model_len is the config's max_position_embeddings (vllm/config/model.py,
    # _get_and_verify_max_len); ai21-jamba-1.5-mini's config.json says 262,144 (tests/fixtures/configs),
    # where the plan used symtrans's 2,048-token workload default without saying so
    path = CONFIGS / "ai21-jamba-1.5-mini.json"
    assert json.loads(path.read_text())["max_position_embeddings"] == 262_144
    argv = ("deploy", path, "--accelerator", "h100-sxm", "--devices", "2", "--tensor-parallel", "2")
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert r["workload"]["prompt"] + r["workload"]["generate"] == 262_144
    assert any("max_model_len 262,144" in d and "max_position_embeddings" in d for d in r["defaults"])
    code, out, _ = run(capsys, *argv)
    assert "  default: max_model_len 262,144 tokens" in out


def test_each_default_is_stated_and_a_given_option_is_not(capsys):
    code, out, err = run(capsys, "deploy", "llama-2-7b", "--accelerator", "h100-sxm", "--format", "json")
    assert code == 0, err
    said = json.loads(out)["defaults"]
    for what in (
        "max_model_len",
        "vLLM release",
        "gpu_memory_utilization",
        "block size",
        "KV cache",
        "max_num_batched_tokens",
        "max_num_seqs",
    ):
        assert sum(d.startswith(what) for d in said) == 1, (what, said)
        assert all("(set --" in d or "; set --" in d for d in said)
    given = (
        "--max-model-len 2048 --engine-version 0.8 --gpu-memory-utilization 0.8 --block-size 32 "
        "--kv-cache-dtype auto --max-num-batched-tokens 4096 --max-num-seqs 64"
    ).split()
    code, out, err = run(capsys, "deploy", "llama-2-7b", "--accelerator", "h100-sxm", *given, "--format", "json")
    assert code == 0, err
    # auto is vLLM's own default spelled out: still the weights' dtype, so still said
    assert [d.split(" ")[0] for d in json.loads(out)["defaults"]] == ["KV"]


# ------------------------------------------------ 6. pipeline-parallel refusals in the user's terms


DEEPSEEK_TINY = {  # DeepSeek-V3's layout (first_k_dense_replace dense layers, then MoE ones), tiny sizes
    "model_type": "deepseek_v3",
    "hidden_size": 64,
    "intermediate_size": 128,
    "moe_intermediate_size": 32,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "n_routed_experts": 8,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "first_k_dense_replace": 1,
    "kv_lora_rank": 16,
    "q_lora_rank": 24,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "n_group": 1,
    "topk_group": 1,
    "torch_dtype": "bfloat16",
}


def test_pipeline_refusals_name_the_part_and_what_to_do(capsys, tmp_path):
    # DeepSeek-V3's first_k_dense_replace layers are dense and the rest MoE (DeepseekV3Config): 1 of 4 here
    ds = tmp_path / "deepseek.json"
    ds.write_text(json.dumps(DEEPSEEK_TINY))
    cases = {
        ds: "the model's 4 layers are not all alike (1 is a dense layer)",
        "gpt2": "the learned position embeddings",  # GPT2Model.wpe beside wte
        CONFIGS / "qwen2-vl-7b.json": "the vision encoder and its projector",
        CONFIGS / "ai21-jamba-1.5-mini.json": "state-space (Mamba, linear-attention) layers",
    }
    for model, part in cases.items():
        code, out, err = run(
            capsys, "deploy", model, "--accelerator", "h100-sxm", "--devices", "2", "--pipeline-parallel-size", "2"
        )
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert part in err and "plan it with --tensor-parallel-size instead" in err, err
        # no internal step labels or symbols (W_Q, 'class token', N_vis ...)
        assert "outside the layers" not in err and "W_" not in err and "token'" not in err


# ------------------------------------------------ 7. the deploy sections in Chinese


def _section(md: str, title: str) -> str:
    start = md.index(title)
    nxt = md.find("\n## ", start + len(title))
    return md[start : nxt if nxt >= 0 else len(md)]


def _report(capsys, tmp_path, lang: str, *argv) -> str:
    path = tmp_path / f"r-{lang}.md"
    code, _, err = run(capsys, "report", *argv, "--no-charts", "--lang", lang, "-o", path)
    assert code == 0, err
    return path.read_text(encoding="utf-8")


def test_zh_deploy_section_is_translated_with_the_same_numbers(capsys, tmp_path):
    from report_outputs import markdown_numbers

    argv = ("llama-3-8b", "--deploy", "h100-sxm", "--max-model-len", "4096", "--enable-prefix-caching")
    en = _section(_report(capsys, tmp_path, "en", *argv), "## Deployment plan")
    zh = _section(_report(capsys, tmp_path, "zh", *argv), "## 部署方案")
    # K and V x 32 layers x 8 KV heads x head 128 x 2 bytes = 131,072 (LlamaConfig of Llama-3-8B)
    assert 2 * 32 * 8 * 128 * 2 == 131_072
    assert "| KV cache per token | 131,072 B = 128.00 KiB |" in en
    assert "| 每个 token 的 KV 缓存 | 131,072 B = 128.00 KiB |" in zh
    for english in ("memory per device", "derivation: formula = substitution = value", "- assumption: ", "| term |"):
        assert english in en and english not in zh, english
    # field terms and vLLM's own log lines stay as they are; every number is the English one
    assert "TTFT" in zh and "TPOT" in zh and "KV" in zh and "'GPU KV cache size: " in zh
    assert markdown_numbers(en) == markdown_numbers(zh)


def test_zh_article_deployment_section_is_translated(capsys, tmp_path):
    from report_outputs import markdown_numbers

    en = _section(_report(capsys, tmp_path, "en", "handcount-001-deployment"), "## Article 001's deployment section")
    zh = _section(_report(capsys, tmp_path, "zh", "handcount-001-deployment"), "## 文章 001 的部署一节")
    assert "the article's inputs" in en and "the article's inputs" not in zh and "文章的输入" in zh
    assert markdown_numbers(en) == markdown_numbers(zh)


def test_every_message_of_the_deploy_sections_has_a_translation(capsys, tmp_path):
    from test_report_i18n import _messages as messages  # every Msg id of a section, recursively

    from symtrans.render.deploy_handcount_section import report_section as article_section
    from symtrans.render.deploy_section import report_section
    from symtrans.render.report import i18n

    ds = tmp_path / "deepseek.json"
    ds.write_text(json.dumps(DEEPSEEK_TINY))
    used: set = set()
    for argv in (
        (
            "llama-3-8b",
            "--accelerator",
            "h100-sxm",
            "--engine",
            "none",
            "--enable-prefix-caching",
            "--shared-prefix",
            "64",
        ),
        (ds, "--accelerator", "h100-sxm"),  # multi-head latent attention
        (CONFIGS / "ai21-jamba-1.5-mini.json", "--accelerator", "h100-sxm", "--devices", "2", "--tensor-parallel", "2"),
        (CONFIGS / "gemma-2-9b.json", "--accelerator", "h100-sxm", "--max-model-len", "8192"),
        ("llama-2-7b", "--accelerator", "a100-80gb", "--devices", "2", "--pipeline-parallel-size", "2"),
    ):
        code, out, err = run(capsys, "deploy", *argv, "--format", "json")
        assert code == 0, err
        s = report_section(json.loads(out))["section"]
        messages([s.title, s.blocks], used)
    s = article_section()["section"]
    messages([s.title, s.blocks], used)
    zh = i18n.translations("zh")
    assert len(used) > 50
    assert sorted(m for m in used if zh.gettext(m) == m and m != "CUDA graphs") == []


# --- a new user's trial (2026-12-02): Gemma 4's layers cache different KV head counts


def _gemma4_31b_text(tmp_path) -> str:
    cfg = json.loads((Path(__file__).parent / "fixtures" / "gemma4" / "gemma-4-31b-it.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(cfg["text_config"]))
    return str(tmp_path)


def test_gemma4_layers_of_different_kv_heads_split_by_tensor_parallelism(tmp_path, capsys):
    # deploy refused every tensor-parallel size, TP 1 included, with "layers caching 4, 16 KV
    # heads under tensor parallelism".  Gemma-4-31B-it's text_config: 60 layers, 5 sliding to 1
    # full (layer_types): 50 sliding layers of 16 KV heads x head_dim 256 and 10 full layers of
    # num_global_key_value_heads 4 x global_head_dim 512 (attention_k_eq_v: transformers' cache
    # still keeps K and V, tests/test_kv_cache_real.py).  At bf16, K and V:
    per_token = 50 * 2 * 16 * 256 * 2 + 10 * 2 * 4 * 512 * 2
    assert per_token == 901_120
    path = _gemma4_31b_text(tmp_path)
    for tp in (1, 2, 4):  # each layer keeps heads / tp of its heads: one share, 1/tp, for all
        code, out, err = run(
            capsys, "deploy", path, "--accelerator", "h100-sxm", "--devices", str(tp), "--tensor-parallel-size",
            str(tp), "--engine", "none", "--max-model-len", "8192", "--format", "json",
        )  # fmt: skip
        assert code == 0, err
        assert json.loads(out)["memory_per_device"]["kv_cache_per_token"] == per_token // tp
    # TP 8: the 16-head layers keep 2 heads per device, the 4-head layers are replicated (1 of 4
    # on every device): two different shares, refused in one line that says what to give instead
    code, out, err = run(
        capsys, "deploy", path, "--accelerator", "h100-sxm", "--devices", "8", "--tensor-parallel-size", "8",
        "--engine", "none", "--max-model-len", "8192",
    )  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "4, 16 KV heads" in err and "divides every KV head count" in err


def test_engine_none_quotes_no_vllm_line(capsys):
    # A new user saw "maximum concurrency: 106 whole requests ...; vLLM prints: ... 13.35x" under
    # --engine none, where no serving engine is modelled; --engine vllm keeps vLLM's two lines.
    argv = ["deploy", CONFIGS / "mistral-7b-v0.1.json", "--accelerator", "a100-80gb", "--max-model-len", "32768"]
    code, out, err = run(capsys, *argv, "--engine", "none")
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("  maximum concurrency:")]
    assert "vLLM" not in line
    code, out, err = run(capsys, *argv, "--engine", "vllm")
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("  maximum concurrency:")]
    assert "vLLM prints: 'GPU KV cache size:" in line and "'Maximum concurrency for 32,768 tokens per request:" in line
    assert json.loads(run(capsys, *argv, "--engine", "vllm", "--format", "json")[1])["vllm_concurrency"] is not None
    assert json.loads(run(capsys, *argv, "--engine", "none", "--format", "json")[1])["vllm_concurrency"] is None
