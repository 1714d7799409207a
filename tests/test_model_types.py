"""Every model_type hf_config supports, against the transformers class it is counted as.

For each type in ``hf_config.SUPPORTED`` (the table ``hf_config.CLASSES``):

1. parameters: hypothesis-drawn configs (``hf_reference.STRATEGIES``; 50 a type under the
   "ci" profile, see conftest.py) built with the transformers class on the meta device;
   ``sum(p.numel())`` must equal symtrans's exact count;
2. the key audit: every key of the config class (``hf_config.CONFIG_KEYS``, itself checked
   against the installed class) is changed in turn from ``AUDIT_BASE``.  Either transformers
   and symtrans both refuse the change, or both build and their counts move by the same
   amount, or neither moves and the key is in ``hf_config.NO_PARAM_EFFECT`` with a reason.
   A change transformers builds and symtrans refuses must be a declared engine gap (GAPS);
   one transformers refuses and symtrans accepts fails (validation as strict as transformers);
3. FLOPs: torch.utils.flop_counter.FlopCounterMode on tiny CPU models with
   attn_implementation="eager" (experts_implementation="eager" for MoE: the default
   grouped_mm is invisible to the counter): forward and training (forward + backward) must
   equal symtrans's ``flops`` convention with the full-square mask, and for generative
   models one decode step after a prefill must equal symtrans's decode FLOPs.

A new model_type needs: its row in hf_config.CLASSES (and DEFAULTS, CONFIG_KEYS,
NO_PARAM_EFFECT, its reader), its class in hf_reference.HF_CLASSES, a strategy in
hf_reference.STRATEGIES, a base config in AUDIT_BASE and, where the generic mutation
cannot pick a second value, an entry in MUTATIONS.  The coverage tests below fail until
all are there.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from conftest import require  # noqa: E402

require("hypothesis")
from hf_reference import STRATEGIES, reference_active, reference_total  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symtrans.catalog import hf_config  # noqa: E402
from symtrans.catalog.hf_config import (  # noqa: E402
    CLASSES,
    CONFIG_KEYS,
    NO_PARAM_EFFECT,
    SUPPORTED,
    ConfigError,
    spec_from_config,
)
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

# --------------------------------------------------------------------------- per-type tables

# A small config per type with every size given and distinct (so a key mixed up with another
# shows), and keys chosen so each one-key change below stays buildable where transformers allows.
# --- seq2seq: the stacks of the BART family and Whisper, each size distinct
_SEQ2SEQ_BASE = dict(
    d_model=12,
    encoder_attention_heads=2,
    decoder_attention_heads=3,
    encoder_layers=2,
    decoder_layers=1,
    encoder_ffn_dim=10,
    decoder_ffn_dim=14,
    vocab_size=23,
)

AUDIT_BASE: dict[str, dict] = {
    "bert": dict(
        hidden_size=12,
        num_attention_heads=2,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
        type_vocab_size=3,
    ),
    "roberta": dict(
        hidden_size=12,
        num_attention_heads=2,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
        type_vocab_size=3,
    ),
    "albert": dict(
        hidden_size=12,
        num_attention_heads=2,
        num_hidden_layers=2,
        num_hidden_groups=1,
        inner_group_num=1,
        intermediate_size=10,
        embedding_size=6,
        vocab_size=23,
        max_position_embeddings=17,
        type_vocab_size=3,
    ),
    "gpt2": dict(n_embd=12, n_head=2, n_layer=2, n_inner=10, vocab_size=23, n_positions=17),
    "llama": dict(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
    ),
    "mistral": dict(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
        sliding_window=64,
    ),
    "mixtral": dict(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
        num_local_experts=3,
        num_experts_per_tok=2,
    ),
    "qwen2": dict(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
    ),
    "qwen3": dict(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=6,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
    ),
    "gemma": dict(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=6,
        num_hidden_layers=2,
        intermediate_size=10,
        vocab_size=23,
        max_position_embeddings=17,
    ),
    "t5": dict(d_model=12, d_kv=3, num_heads=2, num_layers=2, d_ff=10, vocab_size=23, relative_attention_num_buckets=5),
    "bart": dict(
        d_model=12,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_layers=2,
        decoder_layers=2,
        encoder_ffn_dim=10,
        decoder_ffn_dim=10,
        vocab_size=23,
        max_position_embeddings=17,
    ),
    "opt": dict(
        hidden_size=12,
        num_attention_heads=2,
        num_hidden_layers=2,
        ffn_dim=10,
        vocab_size=23,
        max_position_embeddings=17,
    ),
    # --- seq2seq
    "mbart": dict(_SEQ2SEQ_BASE, max_position_embeddings=17),
    "pegasus": dict(_SEQ2SEQ_BASE, max_position_embeddings=17),
    # separate vocabularies, so that decoder_vocab_size moves the count
    "marian": dict(
        _SEQ2SEQ_BASE,
        max_position_embeddings=17,
        pad_token_id=0,
        decoder_start_token_id=0,
        share_encoder_decoder_embeddings=False,
        decoder_vocab_size=19,
    ),
    # max_source_positions is the FLOP test's source length T (WhisperEncoder reads 2 x that many frames)
    "whisper": dict(
        _SEQ2SEQ_BASE,
        num_mel_bins=5,
        max_source_positions=8,
        max_target_positions=13,
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
        decoder_start_token_id=0,
    ),
    "vit": dict(
        hidden_size=12,
        num_attention_heads=2,
        num_hidden_layers=2,
        intermediate_size=10,
        image_size=6,
        patch_size=2,
        num_channels=3,
    ),
}

# Second values the generic rule (``_alternatives``) cannot pick: (model_type or "*", key) -> values.
# Each value is tried as the only change from AUDIT_BASE.
MUTATIONS: dict[tuple[str, str], list] = {
    ("*", "architectures"): [["SomethingElse"]],
    ("*", "id2label"): [{0: "a", 1: "b", 2: "c"}],
    ("*", "label2id"): [{"a": 0, "b": 1, "c": 2}],
    ("*", "problem_type"): ["regression"],
    ("*", "dtype"): ["float16"],
    ("*", "transformers_version"): ["0.0.1"],
    ("*", "hidden_act"): ["relu"],
    ("*", "activation_function"): ["relu"],
    ("*", "rope_parameters"): [{"rope_type": "default", "rope_theta": 500.0}],
    ("*", "classifier_dropout"): [0.25],
    ("*", "bos_token_id"): [3],
    ("*", "eos_token_id"): [3],
    ("*", "pad_token_id"): [3],
    ("*", "decoder_start_token_id"): [3],
    ("*", "forced_eos_token_id"): [3],
    ("*", "head_dim"): [6, 4],
    ("*", "num_key_value_heads"): [1, 4, None],
    ("*", "num_attention_heads"): [2, 8],
    ("*", "hidden_size"): [24],
    ("gpt2", "n_inner"): [None, 14],
    ("gpt2", "summary_type"): ["last"],
    ("gpt2", "summary_activation"): ["tanh"],
    ("gpt2", "n_embd"): [16],
    ("gpt2", "hidden_size"): [16],
    ("gpt2", "n_head"): [4, 5],
    ("gpt2", "num_attention_heads"): [4, 5],
    ("bert", "hidden_size"): [16],
    ("roberta", "hidden_size"): [16],
    ("albert", "hidden_size"): [16],
    ("albert", "num_attention_heads"): [4, 5],
    ("bert", "num_attention_heads"): [4, 5],
    ("roberta", "num_attention_heads"): [4, 5],
    ("albert", "num_hidden_groups"): [2],
    ("albert", "inner_group_num"): [2],
    ("bert", "add_cross_attention"): [True],
    ("roberta", "add_cross_attention"): [True],
    ("gpt2", "add_cross_attention"): [True],
    ("mixtral", "num_experts"): [4],
    ("mixtral", "num_local_experts"): [4],
    ("mixtral", "sliding_window"): [8],
    ("mistral", "sliding_window"): [None, 8],
    ("qwen2", "layer_types"): [["sliding_attention", "sliding_attention"]],
    ("qwen3", "layer_types"): [["sliding_attention", "sliding_attention"]],
    ("qwen2", "sliding_window"): [None, 8],
    ("qwen3", "sliding_window"): [None, 8],
    ("qwen2", "max_window_layers"): [0],
    ("qwen3", "max_window_layers"): [0],
    ("t5", "feed_forward_proj"): ["gated-gelu", "gated-silu", "gelu"],
    ("t5", "dense_act_fn"): ["gelu"],
    ("t5", "num_decoder_layers"): [None, 3],
    ("t5", "num_heads"): [3],
    ("t5", "num_attention_heads"): [3],
    ("t5", "d_model"): [14],
    ("t5", "hidden_size"): [14],
    ("bart", "d_model"): [16],
    ("bart", "hidden_size"): [16],
    ("bart", "encoder_attention_heads"): [4],
    ("bart", "decoder_attention_heads"): [4],
    ("bart", "num_attention_heads"): [4],
    ("bart", "encoder_ffn_dim"): [14],
    ("bart", "decoder_ffn_dim"): [14],
    ("opt", "word_embed_proj_dim"): [None, 8],
    ("opt", "hidden_size"): [16],
    ("opt", "num_attention_heads"): [4, 5],
    ("gemma", "use_bidirectional_attention"): [True],
    ("albert", "num_hidden_layers"): [3],
    # --- seq2seq
    **{
        (mt, key): values
        for mt in ("bart", "mbart", "pegasus", "marian", "whisper")
        for key, values in {
            "d_model": [24, 16],  # 16: not a multiple of the decoder's 3 heads
            "hidden_size": [24],
            "encoder_attention_heads": [4, 5],
            "num_attention_heads": [4, 5],
            "decoder_attention_heads": [4, 5],
        }.items()
    },
    ("whisper", "num_key_value_heads"): [4, 5],
    ("whisper", "begin_suppress_tokens"): [[3]],
    ("whisper", "suppress_tokens"): [[3]],
    ("whisper", "max_source_positions"): [9],
    ("marian", "decoder_vocab_size"): [None, 21],
    ("vit", "hidden_size"): [16, 13],
    ("vit", "num_attention_heads"): [4, 5],
    ("vit", "pooler_output_size"): [None, 7],
    ("vit", "pooler_act"): ["relu"],
    ("vit", "image_size"): [8, [6, 8]],
    ("vit", "patch_size"): [3, [2, 2], [2, 3]],
}

# Changes transformers builds but symtrans refuses (one line, naming the field): engine gaps.
GAPS: dict[tuple[str, str], str] = {
    ("bert", "add_cross_attention"): "cross-attention in an encoder stack is not modelled",
    ("roberta", "add_cross_attention"): "cross-attention in an encoder stack is not modelled",
    ("gpt2", "add_cross_attention"): "decoder-only layers cannot carry cross-attention",
    ("albert", "num_hidden_groups"): "ALBERT layer groups: share_layers is all-or-none",
    ("albert", "inner_group_num"): "ALBERT layer groups: share_layers is all-or-none",
    ("opt", "word_embed_proj_dim"): "project_in / project_out are not modelled",
    ("qwen2", "max_window_layers"): "a stack with some sliding-window layers and some full ones",
    ("qwen3", "max_window_layers"): "a stack with some sliding-window layers and some full ones",
    ("albert", "num_attention_heads"): "h not dividing hidden_size: AlbertAttention floors the head width "
    "for Q, K, V (h * (d // h) wide) but keeps a d x d output map",
    # --- seq2seq
    ("vit", "patch_size"): "non-square patches [p_h, p_w]: the front end has one patch side p",
}

# Keys with a parameter effect that the audit's base config cannot show: with AUDIT_BASE's
# values a change moves neither count, for the reason given (elsewhere it does).
NO_EFFECT_FROM_BASE: dict[tuple[str, str], str] = {
    ("albert", "num_hidden_layers"): "one layer shared by all (num_hidden_groups = 1): N layers, one copy of weights",
}

_GENERIC_NONE = {"classifier_dropout": 0.25, "bos_token_id": 3, "eos_token_id": 3, "pad_token_id": 3}


def _alternatives(mt: str, key: str, current) -> list:
    """The values ``key`` is changed to: MUTATIONS, else one by the type of the current value."""
    for where in (mt, "*"):
        if (where, key) in MUTATIONS:
            return [v for v in MUTATIONS[(where, key)] if v != current or type(v) is not type(current)]
    if isinstance(current, bool):
        return [not current]
    if isinstance(current, int):
        return [current + 1]
    if isinstance(current, float):
        return [current / 2 + 0.125 if current < 1 else current * 2]
    if current is None and key in _GENERIC_NONE:
        return [_GENERIC_NONE[key]]
    pytest.fail(f"no second value for {mt}.{key} (currently {current!r}): add one to MUTATIONS")


# --------------------------------------------------------------------------- helpers


def _transformers_field_names(hf, mt: str) -> tuple[set[str], set[str]]:
    """(the config class's own fields and attribute_map aliases, PretrainedConfig's fields)."""
    cls = hf.model_class(mt).config_class
    base = {f.name for f in dataclasses.fields(hf.transformers.PreTrainedConfig)}
    own = {f.name for f in dataclasses.fields(cls)} - base
    return own | set(cls.attribute_map), base


def _cfg(mt: str, **changes) -> dict:
    """AUDIT_BASE with ``changes``; a changed attribute_map alias replaces its canonical key
    (a file gives one name for a field; both at once is a contradiction, tested elsewhere)."""
    cfg = {"model_type": mt, **AUDIT_BASE[mt]}
    for key in changes:
        canonical = hf_config.ALIASES.get(mt, {}).get(key)
        cfg.pop(canonical, None)
    cfg.update(changes)
    return cfg


_HF_COUNTS: dict[str, object] = {}


def _hf_count(hf, cfg: dict):
    """transformers' count of ``cfg``, or the exception it raises building it (cached)."""
    frozen = json.dumps(cfg, sort_keys=True)
    if frozen not in _HF_COUNTS:
        try:
            model = hf.build(cfg["model_type"], cfg)
        except Exception as e:  # any refusal: strict config validation, torch's own asserts
            _HF_COUNTS[frozen] = e
        else:
            total = reference_total(hf, cfg["model_type"], cfg, model)
            E = getattr(model.config, "num_local_experts", None)
            active = reference_active(hf, model, E, model.config.num_experts_per_tok) if E else total
            _HF_COUNTS[frozen] = (total, active)
    return _HF_COUNTS[frozen]


def _symtrans_count(cfg: dict):
    try:
        spec, _ = spec_from_config(cfg, "audit")
    except ConfigError as e:
        return e
    cost = build(spec)
    return exact(cost.params, spec.values), exact(cost.active_params, spec.values)


def _current(hf, mt: str, key: str):
    """The value ``key`` has in AUDIT_BASE, else the config class's field default."""
    if key in AUDIT_BASE[mt]:
        return AUDIT_BASE[mt][key]
    cls = hf.model_class(mt).config_class
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if key in fields and fields[key].default is not dataclasses.MISSING:
        return fields[key].default
    return getattr(hf.config(mt, AUDIT_BASE[mt]), key, None)


def check(hf, cfg: dict) -> None:
    """spec_from_config(cfg) counts exactly what transformers builds from cfg (and, for
    mixture-of-experts models, the parameters one token uses)."""
    mt = cfg["model_type"]
    spec, notes = spec_from_config(cfg, "hypothesis")
    model = hf.build(mt, cfg)
    cost = build(spec)
    total, active = exact(cost.params, spec.values), exact(cost.active_params, spec.values)
    assert total == reference_total(hf, mt, cfg, model), (cfg, notes)
    if spec.is_moe:
        assert active == reference_active(hf, model, spec.size("E"), spec.size("k")), cfg
    else:
        assert active == total


# --------------------------------------------------------------------------- coverage of the tables


def test_one_table_of_supported_types():
    """CLASSES is the table; every per-type table and the test tables have exactly its keys."""
    from hf_reference import HF_CLASSES

    assert SUPPORTED == tuple(CLASSES)
    for name, table in [
        ("DEFAULTS", hf_config.DEFAULTS),
        ("CONFIG_KEYS", CONFIG_KEYS),
        ("readers", hf_config._FAMILIES),
        ("NO_PARAM_EFFECT", {k: v for k, v in NO_PARAM_EFFECT.items() if k != "*"}),
        ("hf_reference.STRATEGIES", STRATEGIES),
        ("AUDIT_BASE", AUDIT_BASE),
    ]:
        assert set(table) == set(SUPPORTED), name
    assert set(SUPPORTED) <= set(HF_CLASSES)


def test_unsupported_type_lists_the_table():
    with pytest.raises(ConfigError) as e:
        spec_from_config({"model_type": "no-such-model"}, "x")
    message = str(e.value)
    assert "\n" not in message
    assert all(mt in message for mt in SUPPORTED)


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_config_keys_are_the_class_fields(hf, model_type):
    """CONFIG_KEYS is the class's fields and aliases (plus attributes its __post_init__ sets that
    to_dict() writes, such as T5's is_gated_act); NO_PARAM_EFFECT names only real fields."""
    own, base = _transformers_field_names(hf, model_type)
    written = set(hf.config(model_type, AUDIT_BASE[model_type]).to_dict())
    assert own <= CONFIG_KEYS[model_type], sorted(own - CONFIG_KEYS[model_type])
    assert CONFIG_KEYS[model_type] <= own | written, sorted(CONFIG_KEYS[model_type] - own - written)
    assert set(NO_PARAM_EFFECT["*"]) == base
    assert set(NO_PARAM_EFFECT[model_type]) <= CONFIG_KEYS[model_type]


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_real_keys_are_never_typos(model_type):
    """A key that is real in some config class is at most unknown to another, never a typo."""
    for key in sorted(hf_config.REAL_KEYS):
        assert key not in _typos({"model_type": model_type, key: 0}, model_type)


def _typos(cfg: dict, mt: str) -> str:
    try:
        hf_config.unknown_keys(cfg, mt)
    except ConfigError as e:
        return str(e)
    return ""


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_typos_of_counted_keys_are_caught(model_type):
    for key in sorted(hf_config.param_keys(model_type)):
        typo = key[:-1] if len(key) > 6 else key + "x"
        if typo in hf_config.REAL_KEYS or typo in hf_config.known_keys(model_type):
            continue
        assert f"{typo} (did you mean {key}?)" in _typos({typo: 1}, model_type), key


# --------------------------------------------------------------------------- 1. parameters


def test_audit_bases_match_transformers(hf):
    for mt in SUPPORTED:
        check(hf, _cfg(mt))


@pytest.mark.parametrize("model_type", SUPPORTED)
@given(data=st.data())
def test_random_configs_match_transformers(hf, model_type, data):
    check(hf, data.draw(STRATEGIES[model_type], label="config"))


# --------------------------------------------------------------------------- 2. the key audit

AUDIT = [(mt, key) for mt in SUPPORTED for key in sorted(CONFIG_KEYS[mt] | set(NO_PARAM_EFFECT["*"]))]


@pytest.mark.parametrize(("model_type", "key"), AUDIT, ids=[f"{mt}-{k}" for mt, k in AUDIT])
def test_key_audit(hf, model_type, key):
    """(total, active) parameters move identically in transformers and symtrans, or neither moves."""
    base = _cfg(model_type)
    hf_base, sym_base = _hf_count(hf, base), _symtrans_count(base)
    assert not isinstance(hf_base, Exception) and hf_base == sym_base
    quiet = key in NO_PARAM_EFFECT["*"] or key in NO_PARAM_EFFECT[model_type]
    effect = False  # some change moved a count or was refused
    for value in _alternatives(model_type, key, _current(hf, model_type, key)):
        cfg = _cfg(model_type, **{key: value})
        ref, ours = _hf_count(hf, cfg), _symtrans_count(cfg)
        what = f"{model_type}: {key} = {value!r}"
        if isinstance(ref, Exception):
            assert isinstance(ours, ConfigError), f"{what}: transformers refuses it ({ref!r}), symtrans counts {ours}"
            assert "\n" not in str(ours)
            effect = True
            continue
        if isinstance(ours, ConfigError):
            assert (model_type, key) in GAPS, f"{what}: transformers builds {ref}, symtrans refuses: {ours}"
            assert "\n" not in str(ours)
            effect = True
            continue
        moved = tuple(a - b for a, b in zip(ref, hf_base))
        assert moved == tuple(a - b for a, b in zip(ours, sym_base)), (
            f"{what}: (total, active) move by {moved} in transformers, by {ours[0] - sym_base[0], ours[1] - sym_base[1]} in symtrans"
        )
        if quiet:
            assert moved == (0, 0), f"{what} moves the count by {moved}, but NO_PARAM_EFFECT lists it"
        effect = effect or moved != (0, 0)
    if not quiet and (model_type, key) not in NO_EFFECT_FROM_BASE:
        assert effect, f"{model_type}.{key} moves no count: list it in hf_config.NO_PARAM_EFFECT with a reason"


def test_gaps_and_mutations_name_real_keys():
    for mt, key in [*GAPS, *NO_EFFECT_FROM_BASE]:
        assert key in CONFIG_KEYS[mt], (mt, key)
    for mt, key in MUTATIONS:
        assert mt == "*" or key in CONFIG_KEYS[mt], (mt, key)


# --------------------------------------------------------------------------- 3. FLOPs

B, T, P = 2, 8, 5  # batch, tokens per sequence (source and target), prefill before one decode step


def _flop_model(hf, mt: str, cfg: dict):
    """The transformers model of ``cfg`` on the CPU with eager attention and eager experts."""
    torch = hf.torch
    torch.manual_seed(0)
    config = hf.config(mt, {**cfg, "attn_implementation": "eager", "experts_implementation": "eager"})
    return hf.model_class(mt)(config).eval()  # nn.Module.eval(): inference mode


def _counted(hf, run) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        run()
    return counter.get_total_flops()


def _inputs(hf, spec, n: int = T) -> dict:
    ids = hf.torch.ones(B, n, dtype=hf.torch.long)
    if spec.frontend == "conv1d":  # Whisper: 2 x L_src mel frames of C_in bins
        return {"input_features": hf.torch.ones(B, spec.size("C_in"), 2 * n), "decoder_input_ids": ids}
    if spec.frontend == "patch":  # ViT: images of (L_max - 1) patches of p x p pixels, C_in channels
        side = spec.size("p") * math.isqrt(spec.size("L_max") - 1)
        return {"pixel_values": hf.torch.ones(B, spec.size("C_in"), side, side)}
    if spec.family == "encoder-decoder":
        return {"input_ids": ids, "decoder_input_ids": ids}
    return {"input_ids": ids}


def _loss(out):
    if hasattr(out, "logits"):
        return out.logits.sum()
    return out.last_hidden_state.sum() + (out.pooler_output.sum() if out.pooler_output is not None else 0)


def _engine_flops(spec, expr_of, **values) -> int:
    from symtrans.accounting.flops import evaluate

    return int(evaluate(expr_of(spec), {**spec.values, **values}))


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_forward_and_training_flops(hf, model_type):
    """FlopCounterMode (eager attention: the full L x L score square) against symtrans's
    ``flops`` convention with the full-square mask, forward and forward + backward."""
    from symtrans.accounting.flops import flops_expr

    cfg = _cfg(model_type)
    spec, _ = spec_from_config(cfg, "flops")
    model = _flop_model(hf, model_type, cfg)
    inputs = _inputs(hf, spec)
    with hf.torch.no_grad():
        forward = _counted(hf, lambda: model(**inputs))
    training = _counted(hf, lambda: _loss(model(**inputs)).backward())
    values = dict(B=B, L=spec.size("L_max") if spec.frontend == "patch" else T, L_src=T, L_tgt=T)  # ViT: patches + 1
    assert forward == _engine_flops(spec, lambda s: flops_expr(s, "forward"), **values)
    assert training == _engine_flops(spec, lambda s: flops_expr(s, "training"), **values)


DECODERS = [mt for mt in SUPPORTED if CLASSES[mt][1].endswith("ForCausalLM") or mt == "gpt2"]


def _decode_step_flops(hf, model, prefill: int) -> int:
    torch = hf.torch
    ids = torch.ones(1, prefill + 1, dtype=torch.long)
    with torch.no_grad():
        past = model(input_ids=ids[:, :prefill], use_cache=True).past_key_values
        return _counted(hf, lambda: model(input_ids=ids[:, prefill:], past_key_values=past, use_cache=True))


@pytest.mark.parametrize("model_type", DECODERS)
def test_decode_step_flops(hf, model_type):
    """One token generated after a prefill of P, with transformers' KV cache, against
    symtrans's decode FLOPs (T_gen = 1)."""
    from symtrans.accounting.flops import decode_expr

    cfg = _cfg(model_type)
    spec, _ = spec_from_config(cfg, "decode")
    counted = _decode_step_flops(hf, _flop_model(hf, model_type, cfg), P)
    assert counted == _engine_flops(spec, decode_expr, B=1, L_pre=P, T_gen=1)


# The small Mistral of issue 11: window 8, prefill 20, one token generated.
MISTRAL_WINDOW = dict(
    model_type="mistral",
    vocab_size=256,
    hidden_size=64,
    intermediate_size=160,
    num_hidden_layers=2,
    num_attention_heads=8,
    num_key_value_heads=2,
    max_position_embeddings=256,
    sliding_window=8,
    tie_word_embeddings=False,
)


def test_sliding_window_decode_matches_transformers(hf):
    """transformers' sliding-window cache keeps the last w positions: the new token attends to
    8 keys, not 21.  FlopCounterMode: 200,704 FLOPs; symtrans reads sliding_window as w."""
    from symtrans.accounting.flops import decode_expr

    spec, _ = spec_from_config(MISTRAL_WINDOW, "mistral")
    assert spec.size("w") == 8
    counted = _decode_step_flops(hf, _flop_model(hf, "mistral", MISTRAL_WINDOW), 20)
    assert counted == 200_704
    assert _engine_flops(spec, decode_expr, B=1, L_pre=20, T_gen=1) == 200_704


def test_sliding_window_preset_and_config_agree(read_fixture):
    """The mistral-7b preset and Mistral-7B's config.json are the same model (window
    included); resolving the config takes the preset's documented context as L."""
    import dataclasses

    from symtrans.catalog import presets
    from symtrans.catalog.resolve import resolve

    spec, _ = spec_from_config(read_fixture("mistral-7b-v0.1"), "mistral-7b")
    preset = presets.get("mistral-7b").spec
    assert spec == dataclasses.replace(preset, sizes=tuple((n, v) for n, v in preset.sizes if n != "L"))
    from pathlib import Path

    assert resolve(str(Path(__file__).parent / "fixtures" / "configs" / "mistral-7b-v0.1.json")).spec == preset


# --------------------------------------------------------------------------- issue 11's small configs

ISSUE_11 = [
    # T5 follows is_gated_act over feed_forward_proj: two maps, not three.
    (
        dict(
            model_type="t5",
            d_model=4,
            d_kv=1,
            num_heads=1,
            num_layers=1,
            d_ff=3,
            vocab_size=2,
            feed_forward_proj="gated-gelu",
            is_gated_act=False,
        ),
        196,
    ),
    # num_hidden_layers (an alias) without num_decoder_layers: the decoder keeps the class default 6.
    (dict(model_type="t5", d_model=4, d_kv=1, num_heads=1, num_hidden_layers=1, d_ff=3, vocab_size=2), 536),
    # num_key_value_heads null -> num_attention_heads.
    (
        dict(
            model_type="qwen2",
            hidden_size=8,
            num_attention_heads=2,
            num_key_value_heads=None,
            num_hidden_layers=1,
            intermediate_size=3,
            vocab_size=5,
        ),
        456,
    ),
]


@pytest.mark.parametrize(("cfg", "total"), ISSUE_11)
def test_issue_11_small_configs(hf, cfg, total):
    """The counts quoted in issue 11, which are transformers' (checked here again)."""
    spec, _ = spec_from_config(cfg, "issue-11")
    assert exact(build(spec).params, spec.values) == total == hf.count(hf.build(cfg["model_type"], cfg))


@pytest.mark.parametrize(
    ("mt", "key", "value"),
    [
        ("bert", "classifier_dropout", 0.1),
        ("llama", "classifier_dropout", 0.1),
        ("gpt2", "layer_norm_eps", 1e-5),
        ("t5", "layer_norm_eps", 1e-5),
        ("mistral", "use_sliding_window", False),
        ("mixtral", "use_sliding_window", False),
        ("t5", "max_position_embeddings", 512),
    ],
)
def test_real_keys_of_other_classes_are_not_typos(mt, key, value):
    spec_from_config({"model_type": mt, **AUDIT_BASE[mt], key: value}, "x")  # no ConfigError


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        (dict(model_type="llama", vocab_size=5, pad_token_id=5), "pad_token_id"),
        (dict(model_type="opt", vocab_size=1), "pad_token_id"),  # OPTConfig's default pad_token_id is 1
        (dict(model_type="llama", hidden_size=10, num_attention_heads=4, head_dim=4), "hidden_size"),
    ],
)
def test_configs_transformers_refuses_are_refused(hf, cfg, field):
    with pytest.raises(Exception):  # noqa: B017 - whichever error transformers raises
        hf.build(cfg["model_type"], cfg)
    with pytest.raises(ConfigError) as e:
        spec_from_config(cfg, "x")
    assert field in str(e.value) and "\n" not in str(e.value)


def test_model_types_command_lists_the_table(capsys):
    from symtrans.cli.main import main

    assert main(["model-types", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [row["model_type"] for row in listed] == list(SUPPORTED)
    assert [row["counted_as"] for row in listed] == [CLASSES[mt][1] for mt in SUPPORTED]


# --------------------------------------------------------------------------- seq2seq: full-size figures


# Per layer of the BART family and Whisper, d = d_model, f = the stack's FFN width:
# encoder 4(d^2 + d) attention + (2 d f + f + d) FFN + 2 x 2d LayerNorms; decoder the same
# with two attentions and three LayerNorms.  Whisper's k_proj has no bias (d fewer per attention).
def _enc_layer(d: int, f: int, k_bias: bool = True) -> int:
    return 4 * d * d + (4 if k_bias else 3) * d + 2 * d * f + f + d + 2 * 2 * d


def _dec_layer(d: int, f: int, k_bias: bool = True) -> int:
    return 2 * (4 * d * d + (4 if k_bias else 3) * d) + 2 * d * f + f + d + 3 * 2 * d


# fixture -> (transformers class counted, the arithmetic from its published config.json)
SEQ2SEQ_FIGURES = {
    # openai/whisper-small: d 768, 12 + 12 layers, FFN 3072, 80 mel bins, 1500 source and 448
    # target positions, V 51,865, proj_out tied to the decoder's embedding.
    "whisper-small": (
        "WhisperForConditionalGeneration",
        (3 * 80 * 768 + 768)  # conv1
        + (3 * 768 * 768 + 768)  # conv2 (stride 2)
        + 1500 * 768  # encoder sinusoids, a frozen parameter
        + 12 * _enc_layer(768, 3072, k_bias=False)
        + 2 * 768  # encoder final LayerNorm
        + 51_865 * 768  # decoder token embedding (= proj_out)
        + 448 * 768  # decoder learned positions
        + 12 * _dec_layer(768, 3072, k_bias=False)
        + 2 * 768,  # decoder final LayerNorm
    ),
    # google/vit-base-patch16-224 as ViTModel (with its pooler): 224/16 = 14, 196 patches.
    "vit-base-patch16-224": (
        "ViTModel",
        (3 * 16 * 16 * 768 + 768)  # patch Conv2d
        + 768  # CLS token
        + (196 + 1) * 768  # positions
        + 12 * _enc_layer(768, 3072)
        + 2 * 768  # final LayerNorm
        + (768 * 768 + 768),  # pooler
    ),
    # Helsinki-NLP/opus-mt-en-de: d 512, 6 + 6 layers, FFN 2048, V 58,101 shared three ways,
    # 512 sinusoidal positions per stack (frozen parameters), no embedding or final LayerNorm.
    "opus-mt-en-de": (
        "MarianMTModel",
        58_101 * 512 + 2 * 512 * 512 + 6 * _enc_layer(512, 2048) + 6 * _dec_layer(512, 2048),
    ),
    # facebook/mbart-large-cc25: d 1024, 12 + 12 layers, FFN 4096, V 250,027 shared three ways,
    # (1024 + 2) learned positions per stack, embedding and final LayerNorm per stack.
    "mbart-large-cc25": (
        "MBartForConditionalGeneration",
        250_027 * 1024
        + 2 * (1024 + 2) * 1024
        + 12 * _enc_layer(1024, 4096)
        + 12 * _dec_layer(1024, 4096)
        + 2 * 2 * (2 * 1024),
    ),
    # google/pegasus-large: d 1024, 16 + 16 layers, FFN 4096, V 96,103 shared three ways,
    # 1024 sinusoidal positions per stack (frozen parameters), a final LayerNorm per stack.
    "pegasus-large": (
        "PegasusForConditionalGeneration",
        96_103 * 1024 + 2 * 1024 * 1024 + 16 * _enc_layer(1024, 4096) + 16 * _dec_layer(1024, 4096) + 2 * 2 * 1024,
    ),
}


@pytest.mark.parametrize("name", sorted(SEQ2SEQ_FIGURES))
def test_seq2seq_full_size_figures(hf, read_fixture, name):
    """Issue 11's must-show: the published configs of whisper-small, vit-base-patch16-224,
    opus-mt-en-de, mbart-large-cc25 and pegasus-large: the arithmetic above = transformers on
    the meta device = symtrans."""
    cls, arithmetic = SEQ2SEQ_FIGURES[name]
    cfg = read_fixture(name)
    assert hf.model_class(cfg["model_type"]).__name__ == cls
    assert hf.count(hf.build(cfg["model_type"], cfg)) == arithmetic
    spec, _ = spec_from_config(cfg, name)
    assert exact(build(spec).params, spec.values) == arithmetic


def test_seq2seq_figures_as_numbers():
    """The same figures as printed numbers (what a user compares with)."""
    assert {n: a for n, (_, a) in SEQ2SEQ_FIGURES.items()} == {
        "whisper-small": 241_734_912,
        "vit-base-patch16-224": 86_389_248,
        "opus-mt-en-de": 74_410_496,
        "mbart-large-cc25": 610_851_840,
        "pegasus-large": 570_797_056,
    }


@pytest.mark.parametrize("name", [*sorted(SEQ2SEQ_FIGURES), "whisper", "marian", "mbart", "vit"])
def test_seq2seq_walk_equals_the_engine(read_fixture, name):
    """The shape walk (its own derivation: conv windows, patches, the decoder's own h_dec,
    d_ff_dec, V_dec) sums to the cost engine's forward FLOPs."""
    from symtrans.accounting.flops import evaluate, flops_expr
    from symtrans.analysis.walk import walk

    cfg = read_fixture(name) if name in SEQ2SEQ_FIGURES else _cfg(name)
    spec, _ = spec_from_config(cfg, name)
    values = {
        **spec.values,
        "B": 2,
        "L": spec.values.get("L_max", 9),
        "L_src": spec.values.get("L_src", 11),
        "L_tgt": 7,
    }
    assert evaluate(walk(spec).flops, values) == evaluate(flops_expr(spec, "forward"), values)
