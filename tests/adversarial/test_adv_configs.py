"""Adversarial config files (issue 6, item 3, "Config files").

Each case writes a hostile ``c.json`` into a fresh directory beside an earlier output
(``out.json`` / ``out.md`` holding sentinel bytes) and runs the real command line on it.
The expected behaviour is the contract of DESIGN.md §6 and issue 6 (checked by the
``reject`` fixture in conftest.py): exit status 2, exactly one line on stderr naming the
problem, no traceback, nothing on stdout, no file written, the earlier output intact.
The needle is the part of the message that names the problem: the offending key, or
what is wrong with the file.

The small valid configs the hostile ones are derived from use the key names of the
transformers 5.x config classes (GPT2Config: n_embd, n_head, n_layer, n_positions;
LlamaConfig: hidden_size, num_attention_heads, num_key_value_heads, head_dim).
"""

from __future__ import annotations

import json

import pytest

GPT2 = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 100, "n_positions": 32}
LLAMA = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "intermediate_size": 172,
    "num_hidden_layers": 2,
    "vocab_size": 100,
    "max_position_embeddings": 32,
}


def _with(base: dict, **changes) -> str:
    return json.dumps({**base, **changes})


def _raw(base: dict, key: str, literal: str) -> str:
    """``base`` as JSON with ``key``'s value replaced by a raw JSON ``literal`` (e.g. NaN)."""
    cfg = {**base, key: "@@"}
    return json.dumps(cfg).replace('"@@"', literal)


HUGE = "1" + "0" * 400  # 10^400 written out as a JSON integer

# (id, file content, needle in the one-line error)
CASES = [
    # --- malformed
    ("trailing-comma", '{"model_type": "gpt2",}', "not valid JSON"),
    ("yaml-not-json", "model_type: gpt2\nn_embd: 64\n", "not valid JSON"),
    ("single-quotes", "{'model_type': 'gpt2'}", "not valid JSON"),
    ("js-comment", '{"model_type": "gpt2" // a comment\n}', "not valid JSON"),
    ("trailing-garbage", _with(GPT2) + " garbage", "not valid JSON"),
    ("two-objects", _with(GPT2) + _with(GPT2), "not valid JSON"),
    ("unquoted-key", '{model_type: "gpt2"}', "not valid JSON"),
    # --- truncated
    ("truncated-number", _with(GPT2)[:-5], "not valid JSON"),
    ("truncated-string", '{"model_type": "lla', "not valid JSON"),
    ("truncated-after-key", '{"model_type": "gpt2", "n_embd":', "not valid JSON"),
    # --- empty
    ("empty", "", "not valid JSON"),
    ("whitespace-only", "  \n\t\n", "not valid JSON"),
    ("bom-only", "\ufeff", "not valid JSON"),
    ("nul-bytes", "\x00\x00\x00", "c.json: is not UTF-8 or UTF-16 text"),  # NUL: no text (issue 15)
    # --- top level not an object
    ("top-level-list", "[" + _with(GPT2) + "]", "top level must be a JSON object"),
    ("top-level-string", '"gpt2"', "top level must be a JSON object"),
    ("top-level-number", "42", "top level must be a JSON object"),
    ("top-level-null", "null", "top level must be a JSON object"),
    ("top-level-true", "true", "top level must be a JSON object"),
    ("nested-too-deep", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    # --- nested nulls
    ("null-size", _with(LLAMA, hidden_size=None), "hidden_size"),
    ("null-inside-object", _with(GPT2, n_embd={"value": None}), "n_embd"),
    ("null-vocab", _with(LLAMA, vocab_size=None), "vocab_size"),
    ("null-model-type", _with(GPT2, model_type=None), "model_type"),
    ("null-list-size", _with(GPT2, n_layer=[None]), "n_layer"),
    # --- wrong types and values where sizes belong
    ("string-size", _with(GPT2, n_embd="64"), "n_embd"),
    ("float-size-integral", _with(GPT2, n_embd=64.0), "n_embd"),
    ("float-size-fraction", _with(GPT2, n_embd=64.5), "n_embd"),
    ("exponent-size", _raw(LLAMA, "hidden_size", "6.4e1"), "hidden_size"),
    ("nan-size", _raw(GPT2, "n_embd", "NaN"), "n_embd is NaN"),
    ("infinity-size", _raw(GPT2, "n_layer", "Infinity"), "n_layer is Infinity"),
    ("minus-infinity-size", _raw(GPT2, "n_head", "-Infinity"), "n_head is -Infinity"),
    ("boolean-size", _with(GPT2, n_embd=True), "n_embd"),
    ("boolean-false-size", _with(GPT2, n_inner=False), "n_inner"),
    ("negative-size", _with(GPT2, n_layer=-12), "n_layer"),
    ("zero-size", _with(GPT2, n_layer=0), "n_layer"),
    ("ten-to-the-400", _raw(GPT2, "n_layer", HUGE), "n_layer"),
    ("minus-ten-to-the-400", _raw(GPT2, "vocab_size", "-" + HUGE), "vocab_size"),
    ("float-1e400", _raw(GPT2, "n_positions", "1e400"), "n_positions"),
    ("above-2-to-the-53", _with(GPT2, vocab_size=2**53 + 1), "vocab_size"),
    ("list-size", _with(GPT2, n_layer=[2]), "n_layer"),
    ("string-flag", _with(GPT2, tie_word_embeddings="yes"), "tie_word_embeddings"),
    # --- duplicate keys
    ("duplicate-model-type", '{"model_type": "gpt2", "model_type": "llama"}', "appears twice"),
    ("duplicate-size-same-value", _with(LLAMA)[:-1] + ', "hidden_size": 64}', "appears twice"),
    ("duplicate-nested", _with(GPT2, extra="@@").replace('"@@"', '{"a": 1, "a": 2}'), "appears twice"),
    # --- model_type
    ("missing-model-type", json.dumps({k: v for k, v in GPT2.items() if k != "model_type"}), "model_type is missing"),
    ("empty-object", "{}", "model_type is missing"),
    ("unknown-model-type", _with(GPT2, model_type="gpt5"), "not supported"),
    ("model-type-wrong-case", _with(GPT2, model_type="GPT2"), "not supported"),
    ("model-type-number", _with(GPT2, model_type=7), "model_type must be a string"),
    ("model-type-list", _with(GPT2, model_type=["gpt2"]), "model_type must be a string"),
    ("model-type-injection", _with(GPT2, model_type="__import__('os').system('touch canary')"), "not supported"),
    # --- contradictory fields
    ("h_kv-above-h", _with(LLAMA, num_key_value_heads=16), "exceeds num_attention_heads"),
    ("h-not-multiple-of-h_kv", _with(LLAMA, num_key_value_heads=3), "not a multiple of num_key_value_heads"),
    ("gpt2-head_dim-conflicts", _with(GPT2, head_dim=32), "head_dim (32) contradicts"),
    ("bert-head_dim-conflicts", json.dumps({"model_type": "bert", "head_dim": 32}), "head_dim (32) contradicts"),
    ("opt-head_dim-conflicts", json.dumps({"model_type": "opt", "head_dim": 100}), "head_dim (100) contradicts"),
    ("alias-disagrees", _with(GPT2, hidden_size=128), "disagree"),
    (
        "mixtral-alias-disagrees",
        json.dumps({"model_type": "mixtral", "num_local_experts": 8, "num_experts": 4}),
        "disagree",
    ),
    (
        "k-above-E",
        json.dumps({"model_type": "mixtral", "num_local_experts": 2, "num_experts_per_tok": 4}),
        "exceeds num_local_experts",
    ),
    ("heads-do-not-divide-width", _with(GPT2, n_embd=66), "does not divide"),
    ("llama-heads-do-not-divide", _with(LLAMA, hidden_size=60, num_key_value_heads=8), "does not divide"),
    (
        # different head counts per stack are counted (h_dec); heads that do not divide d_model are not
        "bart-decoder-heads-do-not-divide",
        json.dumps({"model_type": "bart", "encoder_attention_heads": 16, "decoder_attention_heads": 7}),
        "decoder_attention_heads (7) does not divide d_model (1024)",
    ),
    (
        "t5-bad-feed-forward-proj",
        json.dumps({"model_type": "t5", "feed_forward_proj": "gated-gelu-x"}),
        "feed_forward_proj",
    ),
    (
        "albert-layer-groups",
        json.dumps({"model_type": "albert", "num_hidden_groups": 3, "inner_group_num": 2}),
        "num_hidden_groups",
    ),
    ("cross-attention", _with(GPT2, add_cross_attention=True), "add_cross_attention"),
    # --- depth: per-layer keys are lists of one entry per layer, read in linear time, so the
    # depth a config.json may give is bounded (found by fuzzing: 10^8 layers took 800 MB,
    # 2^31 a MemoryError); --set N counts any depth in closed form
    ("hundred-million-layers", _with(LLAMA, num_hidden_layers=10**8), "num_hidden_layers is 100,000,000"),
    ("two-to-the-31-layers", _with(GPT2, n_layer=2**31), "n_layer is 2,147,483,648"),
    ("t5-deep-decoder", json.dumps({"model_type": "t5", "num_decoder_layers": 10**6}), "num_decoder_layers"),
    # --- an odd rotary head above 4: LlamaConfig's validate_rope raises "RoPE requires an even
    # rotary dimension" (transformers 5.x); found by fuzzing, counted before
    ("odd-rotary-head-dim", _with(LLAMA, head_dim=5), "head_dim (5) is odd"),
    ("odd-implied-rotary-head", _with(LLAMA, hidden_size=20, num_attention_heads=4), "(5) is odd"),
]

# The command each case runs: mostly ``params --format json`` over an earlier out.json; a few
# go through the report, flops and memory commands, which read the config the same way.
_COMMANDS = {
    "yaml-not-json": ["report", "c.json", "--no-charts", "-o", "out.md"],
    "nan-size": ["report", "c.json", "--format", "latex", "--no-charts", "-o", "out.md"],
    "ten-to-the-400": ["flops", "c.json", "--format", "json", "-o", "out.json"],
    "h_kv-above-h": ["memory", "c.json", "-o", "out.md"],
    "duplicate-model-type": ["time", "c.json", "--accelerator", "h100-sxm", "-o", "out.md"],
    "gpt2-head_dim-conflicts": ["walk", "c.json", "-o", "out.md"],
    "top-level-list": ["diff", "c.json", "gpt2", "-o", "out.md"],
    "null-size": ["solve", "c.json", "--for", "d_model", "--params", "7e9", "-o", "out.md"],
}
# A representative subset also runs as a real process (python -m symtrans).
_SUBPROCESS = {"trailing-comma", "ten-to-the-400", "duplicate-model-type", "nan-size", "h_kv-above-h"}


@pytest.mark.parametrize("name,content,needle", CASES, ids=[c[0] for c in CASES])
def test_hostile_config_is_rejected_cleanly(reject, name, content, needle):
    argv = _COMMANDS.get(name, ["params", "c.json", "--format", "json", "-o", "out.json"])
    reject(argv, files={"c.json": content}, needle=needle, inprocess=name not in _SUBPROCESS)


def test_config_that_is_not_utf8(reject):
    # Latin-1 bytes: neither UTF-8 nor UTF-16 (which needs a byte-order mark, FF FE or FE FF).
    reject(
        ["params", "c.json", "-o", "out.md"],
        files={"c.json": b'{"model_type": "gpt2\xe9"}'},
        needle="c.json: is not UTF-8 or UTF-16 text",
    )


def test_missing_config_file(reject):
    reject(["params", "absent/config.json", "-o", "out.md"], needle="no such file")


def test_directory_without_config_json(reject):
    reject(["params", "model_dir/", "-o", "out.md"], files={"model_dir/": None}, needle="no such file")


def test_config_larger_than_any_real_one(reject, tmp_path):
    # A sparse 11 MiB file: well past the 10 MiB cap (real config.json files are a few kB).
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(11 * 2**20)
    reject(["params", str(big), "-o", "out.md"], needle="too large")


def test_endless_device_is_not_read_to_the_end(reject):
    # /dev/zero reports size 0 and never ends: it is refused before a byte is read (issue 15).
    reject(["params", "/dev/zero", "-o", "out.md"], needle="/dev/zero: is a character device, not a regular file")


def test_a_deep_interleaved_moe_config_is_read_in_linear_time(tmp_path, capsys):
    # Llama-4 text: 30,000 layers, every 2nd a MoE layer.  The MoE layers were counted with a
    # set built once per layer (quadratic: 8.7 s); they are counted in closed form now.
    # Written out (Llama4TextConfig, no biases, untied head, attention_chunk_size null):
    # per layer attention 16*24 (q: 4 heads of 6) + 2*16*12 (k, v: 2 heads of 6) + 24*16 (o)
    # = 1,152, two RMSNorms 32; 15,000 dense layers of SwiGLU 3*16*8 = 384; 15,000 MoE layers
    # of 3 experts 3*(3*16*10), a shared expert 3*16*10 and a router 16*3 = 1,968; embedding
    # and head 2*23*16; final norm 16.  (transformers on the meta device: 5,472 for 2 layers,
    # the same sum with 1 layer of each kind.)
    from symtrans.cli.main import main

    cfg = {
        "model_type": "llama4_text",
        "hidden_size": 16,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 6,
        "num_hidden_layers": 30000,
        "intermediate_size": 10,
        "intermediate_size_mlp": 8,
        "interleave_moe_layer_step": 2,
        "num_local_experts": 3,
        "num_experts_per_tok": 2,
        "attention_chunk_size": None,
        "vocab_size": 23,
        "max_position_embeddings": 17,
        "tie_word_embeddings": False,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert main(["params", str(path), "--format", "json"]) == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert (
        total == 30000 * (1152 + 32) + 15000 * 384 + 15000 * (3 * 3 * 16 * 10 + 3 * 16 * 10 + 16 * 3) + 2 * 23 * 16 + 16
    )
