"""One home for each fact (issue 10): the position table is not the workload length, a
changed model is named so, fp32 weights are their own master copy.

Expected values: the parameter counts are transformers' (LlamaForCausalLM on the meta
device, cross-checked in test_crosscheck_hf); byte figures are that count times the bytes
per parameter written out below; documented contexts are cited where they are used.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symtrans.cli.main import main

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
LLAMA_2_7B = 6_738_415_616  # LlamaForCausalLM(Llama-2-7b-hf config) on meta


def run_json(capsys, *argv) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_qwen2_inference_memory_uses_the_documented_context_not_the_position_limit(capsys):
    r = run_json(capsys, "memory", "qwen2-0.5b", "--inference")
    # Qwen2 technical report, Table 1: Qwen2-0.5B has a 32,768-token context;
    # max_position_embeddings (131,072) is not a workload.
    assert r["seq_len"] == 32_768 and "Qwen2 technical report" in r["seq_len_source"]
    assert r["total_bytes"] < 10 * 10**9
    # KV cache: 24 layers x (K and V) x 2 KV heads x 64 wide x 2 bytes = 12,288 bytes per token.
    assert r["kv_cache_bytes"] == 24 * 2 * 2 * 64 * 2 * 32_768
    # Fused attention (the default) stores no B x h x L x L scores; eager attention does:
    # 14 heads x 32,768^2 scores x 2 bytes (bf16) and their softmax output x 2 bytes more.
    eager = run_json(capsys, "memory", "qwen2-0.5b", "--inference", "--eager-attention")
    assert eager["activations_bytes"] - r["activations_bytes"] >= 14 * 32_768**2 * 2


def test_the_text_header_names_the_length_and_its_source(capsys):
    assert main(["memory", "qwen2-0.5b", "--inference"]) == 0
    out = capsys.readouterr().out
    assert "L=32768" in out.splitlines()[0] and "L = 32,768: Qwen2 technical report" in out
    assert main(["flops", "gpt2"]) == 0
    assert "L = 1,024: the documented training context of gpt2" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["gpt2", "bert-base", "llama-2-7b", "t5-small", "mixtral-8x7b", "opt-125m"])
def test_parameter_counts_never_depend_on_the_workload_length(capsys, name):
    totals = {run_json(capsys, "params", name, "--set", f"L={n}")["total"] for n in (1, 77, 1024, 100_000)}
    assert len(totals) == 1


def test_a_length_past_the_learned_position_table_warns(capsys):
    assert main(["flops", "gpt2", "--seq-len", "4096"]) == 0
    err = capsys.readouterr().err
    assert "exceeds the learned position table's L_max = 1,024 rows" in err
    assert main(["flops", "llama-2-7b", "--seq-len", "8192"]) == 0  # rotary: no table, no warning
    assert "warning" not in capsys.readouterr().err


def test_a_config_of_a_preset_model_gets_the_preset_context(capsys):
    a = run_json(capsys, "flops", "llama-2-7b")
    b = run_json(capsys, "flops", str(CONFIGS / "llama-2-7b.json"))
    assert a["seq_len"] == b["seq_len"] == 4096 and a["total"] == b["total"]


def test_fp32_weights_have_no_master_copy(capsys):
    r = run_json(capsys, "memory", "llama-2-7b", "--dtype", "fp32")
    # fp32 weights 4 + fp32 gradients 4 + Adam's m and v 8 = 16 bytes per parameter.
    assert r["weights_bytes"] + r["gradients_bytes"] + r["optimizer_bytes"] == 16 * LLAMA_2_7B == 107_814_649_856
    assert r["optimizer_bytes_per_parameter"] == 8
    # bf16 weights keep an fp32 master copy: 2 + 2 + (4 + 8) = 16 as well, split differently (ZeRO §3.1, K = 12).
    r = run_json(capsys, "memory", "llama-2-7b")
    assert r["optimizer_bytes"] == 12 * LLAMA_2_7B and r["optimizer_bytes_per_parameter"] == 12


def test_a_modified_preset_drops_its_published_figure(capsys):
    r = run_json(capsys, "params", "mixtral-8x7b", "--set", "E=4", "--set", "k=1")
    assert r["published"] is None and r["source"] is None
    assert r["modified_from"] == "mixtral-8x7b" and r["changes"] == ["E=4", "k=1"]
    assert r["model"] == "mixtral-8x7b, modified (E=4, k=1)"
    assert not any("47B" in n or "2 of 8" in n for n in r["notes"])
    # Written out: 32 layers x (4 experts x 3 x 4096 x 14336 + router 4096 x 4 + attention
    # 2 x 4096^2 + 2 x 4096 x 1024 + 2 norms x 4096) + embeddings and head 2 x 32000 x 4096 + 4096.
    layer = 4 * 3 * 4096 * 14336 + 4096 * 4 + 2 * 4096**2 + 2 * 4096 * 1024 + 2 * 4096
    assert r["total"] == 32 * layer + 2 * 32000 * 4096 + 4096 == 24_153_690_112
    assert main(["params", "gpt2", "--set", "bias=false"]) == 0
    out = capsys.readouterr().out
    assert "gpt2, modified (bias=false)" in out and "published" not in out
    # A workload setting changes no model: the published figure stays.
    assert run_json(capsys, "params", "gpt2", "--set", "L=2048")["published"] == "117M"


# -- issue 20: the Cost tree is the one source of layer structure -------------------------------------

# Modules that must read layer structure from the Cost tree (its steps' Roles and Blocks, their
# matrices) and never rebuild it from Spec options or pick a matrix by its shape.
TREE_READERS = ("symtrans/accounting/quantization.py", "symtrans/accounting/lora.py")
ROOT = Path(__file__).parent.parent
# Spec members a tree reader may touch: the numbers substituted into the tree's closed forms.
SPEC_NUMBERS = {"values"}


def _spec_members() -> set[str]:
    import dataclasses
    import inspect

    from symtrans.engine.spec import Spec

    members = {f.name for f in dataclasses.fields(Spec)}
    return members | {n for n, _ in inspect.getmembers(Spec) if not n.startswith("__")}


def structure_reads(source: str) -> list[str]:
    """Places where ``source`` rebuilds layer structure instead of reading the Cost tree:
    a Spec option read (``spec.ffn``, ``spec.has("N")``, ``getattr(spec, ...)``), a private
    engine helper imported (``_layer_counts``) or ``dims``, and any comparison that involves a
    matrix's shape (``m.rows == S.V``) or a size symbol (``S.E``)."""
    import ast

    members = _spec_members() - SPEC_NUMBERS
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr in members:
            base = node.value
            if (isinstance(base, ast.Name) and "spec" in base.id.lower()) or (
                isinstance(base, ast.Attribute) and base.attr == "spec"
            ):
                found.append(f"line {line}: Spec option {node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Name) and "spec" in arg.id.lower():
                found.append(f"line {line}: getattr on a Spec")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("symtrans.engine"):
            for a in node.names:
                if a.name.startswith("_") or a.name == "dims":
                    found.append(f"line {line}: imports {node.module}.{a.name}")
        elif isinstance(node, ast.Compare):
            # membership of a symbol (S.r in expr.free_symbols) is no shape test
            symbols = not all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Attribute) and (
                    side.attr in ("rows", "cols")
                    or (symbols and isinstance(side.value, ast.Name) and side.value.id == "S")
                ):
                    found.append(f"line {line}: compares a shape ({ast.unparse(side)})")
    return found


@pytest.mark.parametrize("path", TREE_READERS)
def test_tree_readers_rebuild_no_layer_structure(path):
    assert structure_reads((ROOT / path).read_text()) == []


def test_no_module_selects_a_matrix_by_its_shape():
    # issue 20's must-show, over the whole package: no comparison reads a Matrix's rows or cols
    # (which matrix is the head, a router or an embedding is its step's Role).
    import ast

    found = []
    for path in sorted((ROOT / "symtrans").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and any(
                isinstance(side, ast.Attribute) and side.attr in ("rows", "cols")
                for side in (node.left, *node.comparators)
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_the_structure_check_finds_what_it_forbids():
    # the rules of symtrans before issue 20, written out, each caught
    before = """
from symtrans.engine.architectures import _layer_counts
def replaces(self, m, role=None):
    head, router = m.rows == S.V and not m.lookup, m.rows == S.E and not m.lookup
def blocks(spec):
    if spec.family == "encoder-decoder" and spec.has("N") and spec.is_moe:
        return getattr(spec, "ffn")
"""
    found = structure_reads(before)
    assert len(found) == 9, found  # the import, four shape operands, three options, the getattr
    assert structure_reads("def f(spec, cost):\n    return exact(cost.params, spec.values)\n") == []


# --- The Cost tree is the one source of the cache (issue 20) ---------------------------------
# The KV cache, its windows, cross-attention's K/V, the constant state and the KV heads come
# from the tree's steps (Step.cache, cache_window, source_cache, state, cache_heads), never from
# Spec options read again to rebuild which layers cache what.  The scan below reads the code
# (ast), so a new read fails here before it can drift from the tree.
import ast  # noqa: E402
import dataclasses  # noqa: E402

from symtrans.engine import symbols as S  # noqa: E402
from symtrans.engine.spec import Spec  # noqa: E402

SOURCE = Path(__file__).parent.parent / "symtrans"
SPEC_READS = {f.name for f in dataclasses.fields(Spec)} | {
    n for n, v in vars(Spec).items() if not n.startswith("_") and (isinstance(v, property) or callable(v))
}
# Spec reads that rebuild no layer structure, and why each is allowed:
ALLOWED_READS = {
    "family",  # where the prompt goes (an encoder-decoder's is the encoder's) and who generates
    "lm_head",  # whether the model generates at all
    "values",  # the numbers substituted into the tree's expressions (names read are checked below)
    "check_workload",  # validation
    "check_sizes",  # validation
}
# Sizes read by name: the workload and context, and the query heads tensor parallelism must divide
# (vLLM's rule); a layer's KV heads, window, latent or counts come from the tree.
# V: the vocabulary, the width of the sampler's fp32 logits in vLLM's activation peak (deploy).
ALLOWED_SIZES = {"L", "L_max", "L_src", "L_tgt", "B", "L_pre", "T_gen", "h", "h_dec", "V"}
SIZE_NAMES = set(S.SYMBOLS)
CACHE_SIZES = {"h_kv", "w", "N_w", "r_kv", "d_rope"}  # what the cache of a layer is made of
STRUCTURE_HELPERS = {"dims", "decoder_symbols", "kind_counts", "_layer_counts", "hybrid_layers", "mixer_kinds"}
# code that states cache bytes: whole modules, or the named functions of one
CACHE_CODE = {
    "accounting/roofline.py": None,
    "accounting/deploy.py": None,
    "accounting/memory.py": ("kv_cache_per_token", "state_bytes_per_sequence", "kv_cache_bytes", "kv_bytes_moved"),
}
RENDER = ("render/plots.py", "render/notebook.py", "render/report/context.py")


def _rebuilds(tree: ast.AST, strict: bool) -> list[str]:
    """Reads in ``tree`` that rebuild layer structure from a Spec: ``strict`` flags every Spec
    option or property but ALLOWED_READS and every size name but ALLOWED_SIZES; otherwise only
    the cache's own (multi-head latent attention, the KV heads, windows, latents)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "spec":
            if (strict and node.attr in SPEC_READS - ALLOWED_READS) or node.attr == "mla":
                found.append(f"line {node.lineno}: spec.{node.attr}")
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in STRUCTURE_HELPERS:
                found.append(f"line {node.lineno}: {name}()")
            if name in ("has", "get", "size") and node.args and isinstance(node.args[0], ast.Constant):
                if _layer_size(node.args[0].value, strict):
                    found.append(f"line {node.lineno}: {name}({node.args[0].value!r})")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            if _layer_size(node.slice.value, strict):
                found.append(f"line {node.lineno}: [{node.slice.value!r}]")
    return found


def _layer_size(key, strict: bool) -> bool:
    if not isinstance(key, str):
        return False
    return key in CACHE_SIZES or (strict and key in SIZE_NAMES - ALLOWED_SIZES)


def _code(path: str, functions: tuple[str, ...] | None) -> list[ast.AST]:
    module = ast.parse((SOURCE / path).read_text(encoding="utf-8"))
    if functions is None:
        return [module]
    defs = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
    assert set(functions) <= set(defs), set(functions) - set(defs)  # a renamed function must be renamed here
    return [defs[f] for f in functions]


@pytest.mark.parametrize("path", sorted(CACHE_CODE))
def test_cache_bytes_sum_the_tree_and_read_no_spec_option(path):
    found = [hit for code in _code(path, CACHE_CODE[path]) for hit in _rebuilds(code, strict=True)]
    assert not found, f"{path} rebuilds layer structure from the Spec: {found}"


@pytest.mark.parametrize("path", RENDER)
def test_the_report_and_charts_rebuild_no_cache_structure(path):
    found = _rebuilds(_code(path, None)[0], strict=False)
    assert not found, f"{path} rebuilds which layers cache K/V from the Spec: {found}"


def test_the_scan_finds_the_reads_it_forbids():
    # the shape of the code before issue 20 (memory.kv_cache_per_token and deploy's KV heads)
    old = ast.parse(
        "def kv(spec, b):\n"
        "    if spec.mla:\n"
        "        return n * (S.r_kv + S.d_rope) * b\n"
        "    D = dims(spec)\n"
        "    kv = spec.values.get('h_kv', spec.values['h'])\n"
        "    return spec.has('w') and spec.values['N_w']\n"
    )
    assert len(_rebuilds(old, strict=False)) == 5  # spec.mla, dims(), get('h_kv'), has('w'), ['N_w']
    assert len(_rebuilds(old, strict=True)) == 6  # and spec.has itself


# --- FLOPs and the model diff sum the tree (issue 20) -----------------------------------------
# The decode sums find the windowed layers by their steps' Step.cache_window (not has("w") and
# N_w), the embedding lookups read each token table's Matrix (V or V_dec rows, E_emb or d_model
# columns) instead of has("E_emb") / has("V_dec") / frontend.  Besides ALLOWED_READS a FLOPs
# closed form is cached on ``spec.structure()`` (the Spec with its sizes dropped: a cache key).
TREE_SUMS = ("accounting/flops.py", "analysis/diff.py")
CACHE_KEY = {"structure"}


def _sum_reads(source: str) -> list[str]:
    return [hit for hit in _rebuilds(ast.parse(source), strict=True) if hit.split("spec.")[-1] not in CACHE_KEY]


@pytest.mark.parametrize("path", TREE_SUMS)
def test_flops_and_diff_read_no_spec_option(path):
    found = _sum_reads((SOURCE / path).read_text(encoding="utf-8"))
    assert not found, f"{path} rebuilds layer structure from the Spec: {found}"


def test_the_flops_scan_finds_the_reads_of_the_old_decode_sums():
    # _windowed_decode and _embedding_lookups as they were before issue 20
    old = (
        "def decode(spec):\n"
        "    if spec.has('w'):\n"
        "        plain = replace(spec, sizes=tuple((n, v) for n, v in spec.sizes if n not in ('w', 'N_w')))\n"
        "    if spec.has('N_w'):\n"
        "        K_w = K * S.N_w / S.N\n"
        "    width = S.E_emb if spec.has('E_emb') else S.d_model\n"
        "    if spec.frontend == 'patch':\n"
        "        return spec.structure()\n"
    )
    # has('w') twice (the call, its name), spec.sizes, has('N_w') twice, has('E_emb') twice,
    # spec.frontend; the cache key passes
    assert len(_sum_reads(old)) == 8, _sum_reads(old)


# Training activations count the layers of each stack off the tree (engine/saved.py's
# _stack_layers: the multiplicities of its LAYER / FFN_SUBLAYER children, MoE or not) instead of
# has("N") and _layer_counts(spec).  Left: decoder_symbols(), the decoder's own size names
# substituted into the per-layer formula (layer_saved_bytes states the saved tensors in engine/).
LAYER_COUNTS = ("training_saved_bytes", "_stack_layers")


def test_training_activations_take_their_layer_counts_from_the_tree():
    found = [h for code in _code("engine/saved.py", LAYER_COUNTS) for h in _rebuilds(code, strict=True)]
    assert [h for h in found if "decoder_symbols()" not in h] == []


def test_memory_sums_the_saved_activations_the_engine_states():
    # issue 20: memory.py reads no Spec option to rebuild a layer's saved tensors (norm, qk_norm,
    # mla, ffn, is_moe, mixers, ...); engine/saved.py states them.  The strict scan leaves only
    # ALLOWED_READS: family (where the prompt goes), lm_head, and the workload checks.
    assert _rebuilds(_code("accounting/memory.py", None)[0], strict=True) == []


def test_the_layer_count_scan_finds_the_old_reads():
    # _activations_total before issue 20, its layer counts
    old = (
        "def total(spec):\n"
        "    n_enc, n_dec = (S.N, S.N) if spec.has('N') else (S.N_enc, S.N_dec)\n"
        "    if spec.is_moe:\n"
        "        dense_n, moe_n = _layer_counts(spec, S.N)\n"
    )
    assert len(_rebuilds(ast.parse(old), strict=True)) == 4  # has('N') twice, is_moe, _layer_counts()


# --- No consumer rebuilds a stack's layer structure (issue 20, Must show) -------------------------
# Which layers a stack has, how many of each kind, which are MoE and which windowed are the Cost
# tree's (its Block.LAYER / FFN_SUBLAYER nodes, their multiplicities and Cost.kind, a Block.MOE
# child, Step.cache_window).  Outside engine/ and catalog/ no module reads the Spec options that
# state that structure, nor the helpers that expand them.  The scan is by name over the AST of
# every module of analysis/, accounting/, render/ and cli/ (any receiver: spec.mixers,
# res.spec.mixers, s.moe_every), so a new read fails here.
CONSUMERS = ("analysis", "accounting", "render", "cli")
STACK_OPTIONS = {"mixers", "mixer_only", "moe_first_dense", "moe_every"}
STACK_HELPERS = {"kind_counts", "mixer_kinds", "_layer_counts", "hybrid_layers", "MIXER_COUNTS"}


def _stack_sizes() -> set[str]:
    from symtrans.engine.mixer_rules import MIXER_COUNTS

    return {"N_w", "N_moe", *MIXER_COUNTS.values()}


# None left: the checkpoint audit takes its stack's layer kinds from the tree (walk.layer_kinds) and
# vLLM's profile peak its MoE layers (deploy.moe_layers).  A read that comes back fails the test.
STACK_READS_LEFT: dict[str, set[str]] = {}


def _stack_reads(tree: ast.AST, sizes: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in STACK_OPTIONS | STACK_HELPERS:
            found.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in STACK_HELPERS:
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in sizes:
            found.add(repr(node.value))
    return found


def _consumer_modules() -> list[str]:
    return sorted(str(p.relative_to(SOURCE)) for d in CONSUMERS for p in (SOURCE / d).rglob("*.py"))


def test_no_consumer_reads_spec_options_to_rebuild_layer_structure():
    sizes = _stack_sizes()
    found = {}
    for path in _consumer_modules():
        reads = _stack_reads(ast.parse((SOURCE / path).read_text(encoding="utf-8")), sizes)
        if reads != STACK_READS_LEFT.get(path, set()):
            found[path] = sorted(reads)
    assert not found, f"layer structure read from the Spec (or an entry of STACK_READS_LEFT gone): {found}"


def test_the_stack_scan_finds_the_walks_old_reads():
    # analysis/walk.py's _groups / moe_layers and walk_hybrid's kind_counts before issue 20
    old = (
        "def groups(spec, n):\n"
        "    if spec.has('N_w'):\n"
        "        return [(S.N_w, spec.is_moe, True)]\n"
        "    if spec.moe_first_dense == 0 and spec.moe_every == 1:\n"
        "        return n\n"
        "    names = mixer_kinds(spec)\n"
        "    rest = [S.SYMBOLS[MIXER_COUNTS[n]] for n in names[1:]]\n"
        "    return spec.mixer_only or res.spec.mixers != 'attention' or spec.has('N_moe')\n"
    )
    found = _stack_reads(ast.parse(old), _stack_sizes())
    assert found == {
        "'N_w'",
        "moe_first_dense",
        "moe_every",
        "mixer_kinds",
        "MIXER_COUNTS",
        "mixer_only",
        "mixers",
        "'N_moe'",
    }, found
