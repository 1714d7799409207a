"""hf_config + engine against transformers models on the meta device, exactly.

For every supported model_type the model transformers builds from a config (fixture,
class defaults, or a random small config from hypothesis) is instantiated on the meta
device (no weights) and ``sum(p.numel() for p in model.parameters())`` must equal the
engine's count of ``spec_from_config(config)``; for Mixtral also the active count,
``total - (E - k)/E x expert weights``, with the expert weights read from the torch
model's expert tensor shapes.

One documented difference from a fresh transformers 5.x model, proved below on a tiny
real (CPU) model: T5 with ``tie_word_embeddings: false`` (the v1.1 checkpoints): 5.x's
T5Config ties a fresh model anyway, but ``from_pretrained`` keeps the checkpoint's
separate lm_head; symtrans counts the separate head.

One convention for the BART family (BART, mBART, Pegasus, Marian) with
``tie_word_embeddings: false``: 5.x unties encoder and decoder inputs and the head from
``model.shared`` and keeps ``model.shared``, which no forward pass reads; symtrans counts
it, as ``model.parameters()`` does (four V x d_model matrices), and says so in a note.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import require
from hf_reference import UNLOADABLE, experts_of, reference_active, reference_total, top_k_of

from symtrans.catalog.hf_config import DEFAULTS, SUPPORTED, ConfigError, load_config, spec_from_config
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact

require("torch")  # the references; missing ones fail under SYMTRANS_REQUIRE_ORACLES=1 (conftest.py)
require("transformers")

CONFIG_DIR = Path(__file__).parent / "fixtures" / "configs"
FIXTURES = sorted(p.stem for p in CONFIG_DIR.glob("*.json"))


def engine_counts(spec) -> tuple[int, int]:
    cost = build(spec)
    return exact(cost.params, spec.values), exact(cost.active_params, spec.values)


def check(hf, cfg: dict) -> None:
    """spec_from_config(cfg) counts exactly what transformers builds from cfg."""
    mt = cfg["model_type"]
    spec, notes = spec_from_config(cfg, "hypothesis")
    model = hf.build(mt, cfg)
    total, active = engine_counts(spec)
    assert total == reference_total(hf, mt, cfg, model), (cfg, notes)
    E = experts_of(model)  # whatever the config calls it (num_local_experts, num_experts, n_routed_experts)
    if E:
        k = top_k_of(model)  # DBRX: ffn_config.moe_top_k
        assert (spec.size("E"), spec.size("k")) == (E, k)
        assert active == reference_active(hf, model, E, k)
    else:
        assert active == total


# --------------------------------------------------------------------------- fixtures and defaults


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_matches_transformers(hf, read_fixture, name):
    cfg = read_fixture(name)
    spec, _, _ = load_config(CONFIG_DIR / f"{name}.json")  # symtrans reads the file as published
    if name in UNLOADABLE:  # transformers 5.24 refuses the published value: build with the one it needs
        sub, key, value = UNLOADABLE[name]
        with pytest.raises(Exception, match=key):
            hf.build(cfg["model_type"], cfg)
        cfg = {**cfg, sub: {**cfg[sub], key: value}}
    model = hf.build(cfg["model_type"], cfg)
    total, active = engine_counts(spec)
    assert total == reference_total(hf, cfg["model_type"], cfg, model)
    if spec.is_moe:
        assert active == reference_active(hf, model, spec.size("E"), spec.size("k"))


# Class defaults symtrans refuses, with the key named: DeepseekV2Config's num_experts_per_tok is
# None, which builds a model whose router cannot run (torch.topk needs k).  (types-moe)
# Class defaults transformers cannot build from, refused naming the key (MinistralConfig's
# head_dim None reaches MinistralAttention, NemotronConfig's num_key_value_heads None NemotronAttention: both raise).
REFUSED_CLASS_DEFAULTS = {
    "deepseek_v2": "num_experts_per_tok",
    "ministral": "head_dim",
    "hunyuan_v1_dense": "head_dim",  # HunYuanDenseV1Config's head_dim None: head_dim ** -0.5 fails
    "nemotron": "num_key_value_heads",
    "dots1": "n_routed_experts",  # Dots1Config's None expert counts: Dots1NaiveMoe cannot build
    "hunyuan_v1_moe": "head_dim",  # HunYuanMoEV1Config's None head_dim: q_proj cannot build
    "dbrx": "rope_theta",  # DbrxAttentionConfig has no rope_theta, which DbrxAttention reads
}


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_class_defaults_match_transformers(hf, model_type):
    """{"model_type": X}: every value from the config class; the whole default model matches."""
    if model_type in REFUSED_CLASS_DEFAULTS:
        with pytest.raises(ValueError, match=REFUSED_CLASS_DEFAULTS[model_type]):
            spec_from_config({"model_type": model_type}, "defaults")
        return
    check(hf, {"model_type": model_type})


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_documented_defaults_are_the_library_defaults(hf, model_type):
    """hf_config.DEFAULTS is what the installed transformers config classes default to."""
    cls = hf.model_class(model_type).config_class
    fields = {f.name: f.default for f in dataclasses.fields(cls)}
    instance = cls()
    # Gemma 4's config is heterogeneous (per_layer_config: its full-attention layers' head_dim and
    # num_key_value_heads); the global value is the field's, read with transformers' documented switch
    instance.allow_global_per_layer_attribute_access = True
    for key, value in DEFAULTS[model_type].items():
        if value is None:  # derived defaults: the field itself defaults to None
            assert fields[key] is None, key
        elif key == "pad_token_id":
            assert fields[key] == value
        elif value == "auto":
            # Mamba's time_step_rank / Jamba's mamba_dt_rank: the field defaults to "auto" and
            # __post_init__ resolves it to ceil(hidden_size / 16) (MambaConfig, JambaConfig),
            # the rule the readers in catalog/models/ssm.py and jamba.py apply.
            assert fields[key] == "auto", key
            assert getattr(instance, key) == -(-instance.hidden_size // 16), key
        else:
            assert getattr(instance, key) == value, key


def test_stories15m_state_dict_counts_tied_matrix_twice(hf, read_fixture):
    model = hf.build("llama", read_fixture("stories15M"))
    assert hf.count(model) == 15_191_712
    state = sum(t.numel() for t in model.state_dict().values())
    assert state == 24_407_712 == 15_191_712 + 32000 * 288


def test_explicit_head_dim_on_meta(hf, read_fixture):
    """d_model 2560, h 32, h_kv 8, head_dim 128: q_proj is 2560 -> 4096, k/v 2560 -> 1024."""
    for mt in ("qwen3", "llama"):
        cfg = {**read_fixture("qwen3-4b-shaped"), "model_type": mt}
        model = hf.build(mt, cfg)
        attn = model.model.layers[0].self_attn
        assert tuple(attn.q_proj.weight.shape) == (4096, 2560)
        assert tuple(attn.k_proj.weight.shape) == tuple(attn.v_proj.weight.shape) == (1024, 2560)
        assert tuple(attn.o_proj.weight.shape) == (2560, 4096)
        spec, _ = spec_from_config(cfg, mt)
        assert engine_counts(spec)[0] == hf.count(model)
    assert hf.count(hf.build("qwen3", read_fixture("qwen3-4b-shaped"))) == 4_022_468_096


def test_qwen15_72b_shape_on_meta(hf, read_fixture):
    model = hf.build("qwen2", read_fixture("qwen1.5-72b-shaped"))
    attn = model.model.layers[0].self_attn
    assert attn.q_proj.bias is not None and attn.o_proj.bias is None
    assert hf.count(model) == 72_287_920_128


# --------------------------------------------------------------------------- the two adjustments


def test_t5_untied_head_survives_from_pretrained(hf, tmp_path):
    """transformers 5.x: a fresh T5 is tied even with tie_word_embeddings false, but loading a
    checkpoint with a separate lm_head keeps it separate -- the count symtrans gives."""
    T, torch = hf.transformers, hf.torch
    cfg = dict(
        model_type="t5", vocab_size=20, d_model=8, d_kv=4, d_ff=8, num_layers=1, num_heads=2, tie_word_embeddings=False
    )
    fresh = T.T5ForConditionalGeneration(hf.config("t5", cfg))
    assert fresh.lm_head.weight is fresh.shared.weight
    fresh.lm_head.weight = torch.nn.Parameter(torch.randn(20, 8))  # as in a v1.1 checkpoint
    fresh.save_pretrained(tmp_path)
    loaded = T.T5ForConditionalGeneration.from_pretrained(tmp_path)
    assert loaded.lm_head.weight is not loaded.shared.weight
    spec, _ = spec_from_config(cfg, "t5")
    assert engine_counts(spec)[0] == hf.count(loaded) == hf.count(fresh)


@pytest.mark.parametrize("model_type", ["bart", "mbart", "pegasus", "marian"])
def test_bart_family_untied_shared_is_counted_though_never_read(hf, model_type):
    """Untied, the BART family keeps model.shared beside the encoder's and decoder's own tables
    and the head: a forward pass never reads it (changing it changes no logit), yet it is a
    parameter, and symtrans counts it as model.parameters() does: 4 x V x d_model."""
    torch = hf.torch
    torch.manual_seed(0)
    cfg = dict(
        model_type=model_type,
        vocab_size=20,
        d_model=8,
        encoder_layers=1,
        decoder_layers=1,
        encoder_ffn_dim=8,
        decoder_ffn_dim=8,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        max_position_embeddings=16,
        pad_token_id=1,
        decoder_start_token_id=0,
        tie_word_embeddings=False,
    )
    model = hf.model_class(model_type)(hf.config(model_type, cfg)).eval()  # nn.Module.eval(): inference mode
    inner = model.model
    tables = [inner.shared.weight, inner.encoder.embed_tokens.weight, inner.decoder.embed_tokens.weight]
    assert len({id(t) for t in [*tables, model.lm_head.weight]}) == 4
    ids = torch.tensor([[0, 5, 6, 7, 2]])
    with torch.no_grad():
        before = model(input_ids=ids, decoder_input_ids=ids).logits
        inner.shared.weight.normal_()
        after = model(input_ids=ids, decoder_input_ids=ids).logits
    assert torch.equal(before, after)
    spec, notes = spec_from_config(cfg, model_type)
    assert spec.idle_shared_embedding and any("model.shared" in n for n in notes)
    assert engine_counts(spec)[0] == hf.count(model)
    assert engine_counts(spec.replace(idle_shared_embedding=False))[0] == hf.count(model) - 20 * 8


def test_bart_asymmetric_stacks(hf):
    """Encoder and decoder with their own heads and FFN widths (h_dec, d_ff_dec): was an engine gap."""
    cfg = dict(
        model_type="bart",
        d_model=64,
        encoder_ffn_dim=256,
        decoder_ffn_dim=128,
        encoder_attention_heads=4,
        decoder_attention_heads=8,
        encoder_layers=2,
        decoder_layers=2,
        vocab_size=100,
        max_position_embeddings=32,
    )
    check(hf, cfg)
    spec, _ = spec_from_config(cfg, "bart")
    assert (spec.size("h"), spec.size("h_dec"), spec.size("d_ff"), spec.size("d_ff_dec")) == (4, 8, 256, 128)


# --------------------------------------------------------------------------- layouts the engine refuses

# Real configurations transformers builds that the engine does not model: each is refused in one
# ConfigError naming the key, never counted wrong ("refuse rather than guess").
GAPS = {
    # ALBERT-style layer groups: 2 groups of 2 inner layers over 4 layers (4 distinct layers stored,
    # each "layer" runs its group's 2 inner layers); share_layers is all-or-none.
    "albert layer groups": (
        dict(
            model_type="albert",
            hidden_size=64,
            num_attention_heads=4,
            intermediate_size=128,
            embedding_size=16,
            num_hidden_layers=4,
            num_hidden_groups=2,
            inner_group_num=2,
            vocab_size=100,
            max_position_embeddings=32,
        ),
        "num_hidden_groups",
    ),
    # GPT-2 as a seq2seq decoder: decoder-only layers carry no cross-attention in the engine.
    "gpt2 add_cross_attention": (
        dict(
            model_type="gpt2", n_embd=64, n_head=4, n_layer=2, vocab_size=100, n_positions=32, add_cross_attention=True
        ),
        "add_cross_attention",
    ),
}


@pytest.mark.parametrize("gap", list(GAPS))
def test_unmodelled_layouts_are_refused(hf, gap):
    cfg, key = GAPS[gap]
    model = hf.build(cfg["model_type"], cfg)  # a configuration transformers really builds
    assert sum(p.numel() for p in model.parameters()) > 0
    with pytest.raises(ConfigError, match=key):
        spec_from_config(cfg, "gap")


# --------------------------------------------------------------------------- hypothesis
# Random configs per model_type: tests/test_model_types.py (strategies in tests/hf_reference.py).
