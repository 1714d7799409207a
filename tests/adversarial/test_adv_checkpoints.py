"""Adversarial checkpoints for ``symtrans inspect`` (issue 14, "Bad input").

Each hostile file is derived from a real one written by the format's own writer
(``safetensors.numpy.save``, ``gguf.GGUFWriter``, ``torch.save``) and then corrupted
where the case says: its header length, its JSON, its offsets, its dtype, its magic,
its version, a truncation.  The contract is the ``reject`` fixture's (conftest.py):
exit 2, one line on stderr naming the problem, no traceback, nothing on stdout, no file
written.  Every case is decided from the header: the readers never touch tensor data
(``tests/test_inspect.py::test_sparse_file_reads_nothing_past_the_header``).
"""

from __future__ import annotations

import io
import json
import struct

# numpy is symtrans's own dependency; safetensors and gguf are in the test extra (.ci/run installs
# them): a missing one fails collection loudly rather than skipping.
import gguf  # noqa: E402
import numpy as np  # noqa: E402
import pytest
import safetensors.numpy as st_numpy  # noqa: E402
from conftest import fifo  # noqa: E402  (tests/adversarial/conftest.py)


def real_safetensors() -> bytes:
    return st_numpy.save(
        {
            "model.embed_tokens.weight": np.zeros((8, 4), np.float32),
            "model.norm.weight": np.ones(4, np.float32),
        }
    )


def with_header(blob: bytes, edit) -> bytes:
    """``blob`` (a safetensors file) with its JSON header replaced by ``edit(header)``."""
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    raw = json.dumps(edit(header)).encode()
    return struct.pack("<Q", len(raw)) + raw + blob[8 + n :]


def _overlap(h):
    a, b = h["model.embed_tokens.weight"], h["model.norm.weight"]
    b["data_offsets"] = [a["data_offsets"][1] - 8, a["data_offsets"][1] + 8]
    return h


def _beyond(h):
    h["model.norm.weight"]["data_offsets"][1] += 4096
    h["model.norm.weight"]["shape"] = [4 + 1024]
    return h


def _dtype(h):
    h["model.norm.weight"]["dtype"] = "F17"
    return h


def _shape(h):
    h["model.norm.weight"]["shape"] = [5]
    return h


def real_gguf(tmp_path_factory=None) -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.gguf"
        w = gguf.GGUFWriter(str(p), "llama")
        w.add_block_count(1)
        w.add_token_list([f"t{i}" for i in range(8)])
        w.add_tensor("token_embd.weight", np.zeros((8, 32), np.float16))
        w.add_tensor("output_norm.weight", np.ones(32, np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        return p.read_bytes()


ST = real_safetensors()
GG = real_gguf()
_TOKENS = GG.find(b"tokenizer.ggml.tokens") + len(b"tokenizer.ggml.tokens") + 8  # after the value and element types

# (id, file name, bytes, needle)
CASES = [
    ("header-length-beyond-file", "m.safetensors", struct.pack("<Q", 10**6) + ST[8:], "only"),
    ("header-over-100MB", "m.safetensors", struct.pack("<Q", 200_000_000) + ST[8:], "limit"),
    ("header-not-json", "m.safetensors", struct.pack("<Q", 16) + b"this is not json" + b"\0" * 8, "not valid"),
    ("overlapping-offsets", "m.safetensors", with_header(ST, _overlap), "offsets"),
    ("offsets-out-of-range", "m.safetensors", with_header(ST, _beyond), "offsets"),
    ("unknown-dtype", "m.safetensors", with_header(ST, _dtype), "unknown dtype 'F17'"),
    ("shape-does-not-match-bytes", "m.safetensors", with_header(ST, _shape), "shape"),
    ("truncated-safetensors", "m.safetensors", ST[:-10], "offsets"),
    ("three-bytes", "m.safetensors", b"abc", "too short"),
    ("gguf-truncated-in-header", "m.gguf", GG[:100], "truncated"),
    ("gguf-truncated-in-data", "m.gguf", GG[:-16], "truncated"),
    ("gguf-truncated-preamble", "m.gguf", GG[:10], "truncated"),
    ("gguf-wrong-magic", "m.gguf", b"GGML" + GG[4:], "magic"),
    ("gguf-version-99", "m.gguf", GG[:4] + struct.pack("<I", 99) + GG[8:], "version 99"),
    ("gguf-version-1", "m.gguf", GG[:4] + struct.pack("<I", 1) + GG[8:], "version 1"),
    ("gguf-2**60-tensors", "m.gguf", GG[:8] + struct.pack("<Q", 2**60) + GG[16:], "tensors"),
    ("gguf-2**50-metadata", "m.gguf", GG[:16] + struct.pack("<Q", 2**50) + GG[24:], "metadata"),
    (
        "gguf-2**40-tokens",
        "m.gguf",
        GG[:_TOKENS] + struct.pack("<Q", 2**40) + GG[_TOKENS + 8 :],
        "tokenizer.ggml.tokens",
    ),
    ("gguf-2**62-byte-key", "m.gguf", GG[:24] + struct.pack("<Q", 2**62) + GG[32:], "key"),
    ("safetensors-named-gguf", "m.gguf", ST, "magic"),
]


@pytest.mark.parametrize("name,fname,content,needle", CASES, ids=[c[0] for c in CASES])
def test_hostile_checkpoint_is_rejected_cleanly(reject, name, fname, content, needle):
    reject(["inspect", fname, "-o", "out.txt"], files={fname: content}, needle=needle)


def test_directory_without_weights(reject):
    reject(["inspect", "empty"], files={"empty/": None}, needle="no weights")


def test_nonexistent_path(reject):
    reject(["inspect", "nowhere.safetensors"], needle="no such file")


def test_config_json_alone(reject):
    reject(["inspect", "config.json"], files={"config.json": '{"model_type": "llama"}'}, needle="no tensors")


def _pickle() -> bytes:
    import torch  # an oracle .ci/run installs: missing, the test fails

    buf = io.BytesIO()
    torch.save({"w": torch.zeros(2, 2)}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("fname", ["pytorch_model.bin", "model.pt", "model.pth"])
def test_pickle_is_refused_with_advice(reject, fname):
    o = reject(["inspect", fname], files={fname: _pickle()}, needle="pickle")
    assert "safetensors" in o.err


def test_pickle_only_directory(reject):
    reject(["inspect", "m"], files={"m/": None, "m/pytorch_model.bin": _pickle()}, needle="pickle")


def test_zip_archive_named_safetensors(reject):
    reject(["inspect", "m.safetensors"], files={"m.safetensors": _pickle()}, needle="zip archive")


def _index(weight_map: dict) -> str:
    return json.dumps({"metadata": {"total_size": 1}, "weight_map": weight_map})


@pytest.mark.parametrize(
    "name,files,needle",
    [
        (
            "shard-outside-the-directory",
            {
                "m/": None,
                "m/model.safetensors.index.json": _index({"model.norm.weight": "../existing_file.safetensors"}),
            },
            "plain file name",
        ),
        (
            "missing-shard",
            {"m/": None, "m/model.safetensors.index.json": _index({"model.norm.weight": "model-1.safetensors"})},
            "missing",
        ),
        (
            "tensor-not-in-its-shard",
            {
                "m/": None,
                "m/model.safetensors.index.json": _index({"lm_head.weight": "model-1.safetensors"}),
                "m/model-1.safetensors": ST,
            },
            "not in it",
        ),
        ("index-not-json", {"m/": None, "m/model.safetensors.index.json": "{nope"}, "not a safetensors index"),
        ("index-without-weight-map", {"m/": None, "m/model.safetensors.index.json": "{}"}, "weight_map"),
    ],
    ids=lambda x: x if isinstance(x, str) and "/" not in x and len(x) < 40 else "",
)
def test_hostile_index_is_rejected_cleanly(reject, name, files, needle):
    reject(["inspect", "m"], files=files, needle=needle)


def test_rejected_in_a_real_process(reject):
    """The same contract through ``python -m symtrans`` (no in-process shortcuts)."""
    reject(["inspect", "m.gguf"], files={"m.gguf": GG[:100]}, needle="truncated", inprocess=False)


def test_output_onto_a_shard_is_refused(reject):
    """-o naming a file of the checkpoint would replace the weights with the report."""
    reject(["inspect", "m", "-o", "m/model.safetensors"], files={"m/": None, "m/model.safetensors": ST}, needle="-o")


# ---------------------------------------------------------------------------------
# Bounded input (issue 27.9, 27.10): a FIFO under any checkpoint name hung past 40 s; a
# 10^6-tensor header took 20 s and 992 MiB (safetensors) or 479 MiB (GGUF); a GGUF array of
# arrays 15 s.  Every one is refused from its first bytes (limits.py: under 10 s, 1 GiB).


@pytest.mark.parametrize(
    "files,arg",
    [
        ({"model.safetensors": "fifo"}, "model.safetensors"),
        ({"m.gguf": "fifo"}, "m.gguf"),
        ({"model.safetensors.index.json": "fifo"}, "model.safetensors.index.json"),
        ({"weights": "fifo"}, "weights"),
        ({"d/": None, "d/model.safetensors": "fifo"}, "d"),
        ({"d/": None, "d/m.gguf": "fifo"}, "d"),
        ({"d/": None, "d/a.safetensors": "fifo", "d/b.safetensors": "regular"}, "d"),
    ],
    ids=["safetensors", "gguf", "index", "no-extension", "dir-model", "dir-gguf", "dir-shards"],
)
def test_fifo_checkpoint_is_refused_not_read(reject, files, arg):
    made = {k: (fifo() if v == "fifo" else (real_safetensors() if v == "regular" else v)) for k, v in files.items()}
    reject(["inspect", arg], files=made, needle="is a FIFO (named pipe), not a regular file", inprocess=False)


def test_fifo_shard_named_by_an_index(reject):
    index = json.dumps({"weight_map": {"model.norm.weight": "s-1.safetensors"}})
    reject(
        ["inspect", "model.safetensors.index.json"],
        files={"model.safetensors.index.json": index, "s-1.safetensors": fifo()},
        needle="s-1.safetensors: is a FIFO",
        inprocess=False,
    )


def _many_tensor_safetensors(n: int) -> bytes:
    parts = [f'"t{i}":{{"dtype":"F32","shape":[1],"data_offsets":[{4 * i},{4 * i + 4}]}}' for i in range(n)]
    raw = ("{" + ",".join(parts) + "}").encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(4 * n)


def _gguf_preamble(n_tensors: int, n_kv: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv)


def test_a_million_tensor_safetensors_header_is_refused(reject):
    # 1,000,000 tensors: 70 MB of header; counted as it is read, refused past 200,000
    reject(["inspect", "m.safetensors"], files={"m.safetensors": _many_tensor_safetensors(10**6)}, needle="200,000")


def test_a_million_tensor_gguf_is_refused(reject):
    one = lambda i: struct.pack("<Q", len(f"t{i}")) + f"t{i}".encode() + struct.pack("<IQIQ", 1, 32, 0, 128 * i)  # noqa: E731
    infos = b"".join(one(i) for i in range(10**6))
    blob = _gguf_preamble(10**6, 0) + infos
    blob += bytes((-len(blob)) % 32) + bytes(128 * 10**6 // 64)  # the claim is refused before data is checked
    reject(["inspect", "m.gguf"], files={"m.gguf": blob}, needle="1,000,000 tensors")


@pytest.mark.parametrize("itype,size", [(9, 12), (8, 8)], ids=["arrays", "strings"])
def test_a_gguf_array_of_millions_of_arrays_or_strings_is_refused(reject, itype, size):
    # one metadata key: an array of 5,000,000 empty arrays (or strings), 60 MB of header
    count = 5 * 10**6
    element = struct.pack("<IQ", 0, 0) if itype == 9 else struct.pack("<Q", 0)
    blob = _gguf_preamble(0, 1) + struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, itype, count) + element * count
    reject(["inspect", "m.gguf"], files={"m.gguf": blob}, needle="5,000,000")


def test_set_n_ten_million_on_a_two_layer_checkpoint_is_one_term(tmp_path, capsys):
    # inspect ... --set N=10000000 built one "layer k is not stored" term per absent layer:
    # 1.4 GiB, killed.  Absent runs are one term; the price is layer 0's elements times the run.
    from symtrans.cli.main import main

    d, f, V = 4, 8, 8  # a 2-layer Llama: d_model 4, d_ff 8, 2 heads, tied head
    t = {"model.embed_tokens.weight": np.zeros((V, d), np.float32), "model.norm.weight": np.ones(d, np.float32)}
    for i in range(2):
        p = f"model.layers.{i}."
        for m in "qkvo":
            t[p + f"self_attn.{m}_proj.weight"] = np.zeros((d, d), np.float32)
        t[p + "mlp.gate_proj.weight"] = t[p + "mlp.up_proj.weight"] = np.zeros((f, d), np.float32)
        t[p + "mlp.down_proj.weight"] = np.zeros((d, f), np.float32)
        t[p + "input_layernorm.weight"] = t[p + "post_attention_layernorm.weight"] = np.ones(d, np.float32)
    (tmp_path / "model.safetensors").write_bytes(st_numpy.save(t))
    cfg = dict(model_type="llama", hidden_size=d, intermediate_size=f, num_attention_heads=2, num_key_value_heads=2)
    cfg.update(num_hidden_layers=2, vocab_size=V, tie_word_embeddings=True)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert main(["inspect", str(tmp_path), "--set", "N=10000000", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    runs = [t for t in out["terms"] if "are not stored" in t.get("detail", "")]
    per_layer = 4 * d * d + 3 * d * f + 2 * d  # q, k, v, o; gate, up, down; two norms = 168
    assert len(runs) == 1 and runs[0]["elements"] == -per_layer * (10**7 - 2), runs


# Silent wrong explanations (issue 27.4): on checkpoints transformers 5.x itself saved,
# inspect called GPT-NeoX "llama (matched by tensor names)", listed every tensor as
# "unexpected (names not in the table)", named a component None, counted DeepSeek-V3's
# router buffer as parameters, lost Marian's unsaved sinusoids and ended ViT in a traceback.
# Each case runs the CLI (``--format json``) on a tiny model saved by ``save_pretrained``;
# the figures come from the saved transformers model.  tests/test_inspect_every_type.py
# checks every supported type the same way through the API.
TINY = {  # (class, config): small configs of tests/test_model_types.AUDIT_BASE
    "gpt_neox": (
        "GPTNeoXForCausalLM",
        dict(
            hidden_size=16,
            num_attention_heads=4,
            num_hidden_layers=2,
            intermediate_size=10,
            vocab_size=23,
            max_position_embeddings=17,
        ),
    ),
    "vit": (
        "ViTModel",
        dict(
            hidden_size=12,
            num_attention_heads=2,
            num_hidden_layers=2,
            intermediate_size=10,
            image_size=6,
            patch_size=2,
            num_channels=3,
        ),
    ),
    "marian": (
        "MarianMTModel",
        dict(
            d_model=12,
            encoder_attention_heads=2,
            decoder_attention_heads=3,
            encoder_layers=2,
            decoder_layers=1,
            encoder_ffn_dim=10,
            decoder_ffn_dim=14,
            vocab_size=23,
            max_position_embeddings=17,
            pad_token_id=0,
            decoder_start_token_id=0,
            share_encoder_decoder_embeddings=False,
            decoder_vocab_size=19,
        ),
    ),
    "deepseek_v3": (
        "DeepseekV3ForCausalLM",
        dict(
            hidden_size=16,
            num_attention_heads=4,
            num_key_value_heads=4,
            num_hidden_layers=3,
            intermediate_size=10,
            moe_intermediate_size=6,
            n_routed_experts=3,
            n_shared_experts=2,
            num_experts_per_tok=2,
            first_k_dense_replace=1,
            n_group=1,
            topk_group=1,
            q_lora_rank=7,
            kv_lora_rank=5,
            qk_rope_head_dim=4,
            qk_nope_head_dim=3,
            v_head_dim=9,
            vocab_size=23,
            max_position_embeddings=17,
        ),
    ),
    "gpt_oss": (
        "GptOssForCausalLM",
        dict(
            hidden_size=16,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=6,
            num_hidden_layers=2,
            intermediate_size=10,
            num_local_experts=3,
            num_experts_per_tok=2,
            vocab_size=23,
            max_position_embeddings=17,
        ),
    ),
    "albert": (
        "AlbertModel",
        dict(
            hidden_size=12,
            num_attention_heads=2,
            num_hidden_layers=2,
            intermediate_size=10,
            embedding_size=6,
            vocab_size=23,
            max_position_embeddings=17,
            type_vocab_size=3,
        ),
    ),
    "mamba": (
        "MambaForCausalLM",
        dict(
            hidden_size=12,
            expand=2,
            state_size=3,
            conv_kernel=2,
            time_step_rank=5,
            num_hidden_layers=2,
            vocab_size=23,
            pad_token_id=0,
        ),
    ),
    "llama": (
        "LlamaForCausalLM",
        dict(
            hidden_size=16,
            num_attention_heads=4,
            num_key_value_heads=2,
            num_hidden_layers=2,
            intermediate_size=10,
            vocab_size=23,
            max_position_embeddings=17,
        ),
    ),
}


def _save_and_inspect(tmp_path, capsys, model_type: str, model_class: str | None = None):
    import torch
    import transformers

    from symtrans.cli.main import main

    transformers.logging.set_verbosity_error()
    name, cfg = TINY[model_type]
    cls = getattr(transformers, model_class or name)
    torch.manual_seed(0)
    model = cls(cls.config_class(**cfg))
    model.save_pretrained(tmp_path)
    capsys.readouterr()
    assert main(["inspect", str(tmp_path), "--format", "json"]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return model, json.loads(out.out)


@pytest.mark.parametrize("model_type", [t for t in TINY if t != "llama"])
def test_save_pretrained_checkpoint_of_a_type_the_issue_names_is_explained(tmp_path, capsys, model_type):
    model, out = _save_and_inspect(tmp_path, capsys, model_type)
    assert "matched by tensor names" not in out["naming"]
    assert all(t["role"] is not None for t in out["tensor_list"] if t["kind"] == "parameter")
    assert all(c["role"] is not None for c in out["components"])
    assert not [t for t in out["terms"] if t["term"] in ("unexpected", "other", "padded_vocab")], out["terms"]
    params = dict(model.named_parameters())
    ignored = getattr(model, "_keys_to_ignore_on_save", None) or ()
    unsaved = sum(p.numel() for n, p in params.items() if n in ignored)  # Marian's two sinusoid tables
    assert out["logical_parameters"] == sum(p.numel() for p in params.values()) - unsaved
    assert out["formula"]["parameters"] == sum(p.numel() for p in params.values())


def test_a_base_model_without_its_head_is_explained_as_the_head_missing(tmp_path, capsys):
    # GPTNeoXModel saved alone (no embed_out): config.json still says gpt_neox, whose counted
    # class has an untied LM head of V x d_model = 23 x 16; no tensor is "unexpected".
    _, out = _save_and_inspect(tmp_path, capsys, "gpt_neox", "GPTNeoXModel")
    assert out["naming"] == "gpt_neox"
    assert [(t["term"], t["elements"]) for t in out["terms"]] == [("missing", -23 * 16)]
    assert "LM head" in out["terms"][0]["detail"]


def test_names_of_another_type_under_a_config_are_listed_not_guessed(tmp_path, capsys):
    # Llama's tensors under a config.json that says gpt_neox: the names are read with the
    # type's own table, so each is listed under "names not in the table" (never a silent match).
    _, out = _save_and_inspect(tmp_path, capsys, "llama")
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg.update(model_type="gpt_neox", architectures=["GPTNeoXForCausalLM"])
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    from symtrans.cli.main import main

    assert main(["inspect", str(tmp_path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["naming"] == "gpt_neox"
    unknown = [t for t in out["terms"] if t["detail"] == "names not in the table"]
    # GPT-NeoX shares only lm_head and the two per-layer norm names with Llama
    shared = ("lm_head.", "input_layernorm.", "post_attention_layernorm.")
    names = [t["name"] for t in out["tensor_list"]]
    assert len(unknown) == 1 and sorted(unknown[0]["tensors"]) == sorted(
        n for n in names if not any(s in n for s in shared)
    )
    assert len(unknown[0]["tensors"]) == 21 - 5
