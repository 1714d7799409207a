"""Which component of the model each stored tensor is: name -> ``Role`` and ``Block``.

One table per naming family.  A row matches the *module path* of a tensor (its name
without the last component, e.g. ``model.layers.3.self_attn.q_proj``); the last
component (``weight``, ``bias``, ``qweight``, ``inv_freq``, ...) says whether it is the
matrix, its bias, a packed quantized matrix, quantization metadata or a buffer.
Wrapper prefixes (``model.``, ``transformer.``, ``bert.``, ``base_model.model.``,
``_orig_mod.``, ...) are optional everywhere.

Families and where the names come from (transformers 5.x model files; llama.cpp):

=========  ===============================================================
llama      LlamaForCausalLM and its kin (Mistral, Mixtral, Qwen2/3, Gemma),
           and Meta's original / llama2.c names (tok_embeddings, wq, w1, output)
gpt2       GPT2LMHeadModel (Conv1D: weights stored (d_in, d_out))
bert       BertModel / BertForMaskedLM, RobertaModel (incl. old gamma/beta names)
t5         T5ForConditionalGeneration
bart       BartForConditionalGeneration
opt        OPTForCausalLM
gguf       llama.cpp's GGUF names (gguf.constants.TENSOR_NAMES)
=========  ===============================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from symtrans.engine.roles import Block, Role


class Kind(str, Enum):
    """What a stored tensor is, for counting."""

    PARAMETER = "parameter"  # a parameter of the model (possibly packed or quantized)
    TIED_COPY = "tied_copy"  # a second copy of a tied matrix
    BUFFER = "buffer"  # a non-parameter buffer (rotary inv_freq, masks, position ids)
    QUANT_META = "quantization_metadata"  # scales, zeros, group indices of a quantized matrix


# Layouts of the stored array: a linear map d_in -> d_out is (d_out, d_in) in nn.Linear
# and in GGUF (after reversing ne), (d_in, d_out) in GPT-2's Conv1D; an embedding or
# relative-bias table is (rows, width); norms and biases are vectors.
OUT_IN, IN_OUT, ROWS, VECTOR = "out_in", "in_out", "rows", "vector"


@dataclass(frozen=True)
class Rule:
    """One row of a naming table.

    Attributes:
        pattern: regex over the module path; ``{L}`` is the layer index, ``{E}`` the
            expert index.
        role, block: the engine's component (None for a pure buffer).
        layout: see OUT_IN, IN_OUT, ROWS, VECTOR.
        stack: ``Block.ENCODER`` or ``Block.DECODER`` in encoder-decoder models.
        fused: the roles a fused matrix holds (GPT-2's c_attn holds Q, K and V).
        part: for ``Role.EXPERTS``, which map of the expert FFN.
        buffer: every tensor of this module is a buffer (GPT-2's ``attn.bias`` mask).
        alias: a copy of the token embedding when embeddings are shared (T5's
            ``encoder.embed_tokens``, BART's).
    """

    pattern: str
    role: Role | None
    block: Block | None
    layout: str = OUT_IN
    stack: Block | None = None
    fused: tuple[Role, ...] = ()
    part: Role | None = None
    buffer: bool = False
    alias: bool = False


@dataclass(frozen=True)
class Family:
    """A naming table and the architecture it implies (used when there is no config)."""

    name: str
    rules: tuple[Rule, ...]
    family: str  # Spec.family
    norm: str = "layernorm"
    gated: str = "swiglu"  # the Spec.ffn of a gated FFN (three maps)
    positional: str = "none"  # when no position table is stored
    position_offset: int = 0
    norm_position: str = "pre"


R, B = Role, Block
_ATT = B.CAUSAL_SELF_ATTENTION


def _llama_rules() -> tuple[Rule, ...]:
    L = r"layers\.{L}\."
    return (
        Rule(r"embed_tokens", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"tok_embeddings", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(L + r"self_attn\.q_proj", R.Q_PROJ, _ATT),
        Rule(L + r"self_attn\.k_proj", R.K_PROJ, _ATT),
        Rule(L + r"self_attn\.v_proj", R.V_PROJ, _ATT),
        Rule(L + r"self_attn\.o_proj", R.O_PROJ, _ATT),
        Rule(L + r"self_attn\.qkv_proj", R.Q_PROJ, _ATT, fused=(R.Q_PROJ, R.K_PROJ, R.V_PROJ)),
        Rule(L + r"self_attn\.q_norm", R.Q_NORM, _ATT, VECTOR),
        Rule(L + r"self_attn\.k_norm", R.K_NORM, _ATT, VECTOR),
        Rule(L + r"attention\.wq", R.Q_PROJ, _ATT),
        Rule(L + r"attention\.wk", R.K_PROJ, _ATT),
        Rule(L + r"attention\.wv", R.V_PROJ, _ATT),
        Rule(L + r"attention\.wo", R.O_PROJ, _ATT),
        Rule(L + r"mlp\.gate_proj", R.FFN_GATE, B.FFN),
        Rule(L + r"mlp\.up_proj", R.FFN_UP, B.FFN),
        Rule(L + r"mlp\.down_proj", R.FFN_DOWN, B.FFN),
        Rule(L + r"mlp\.gate_up_proj", R.FFN_GATE, B.FFN, fused=(R.FFN_GATE, R.FFN_UP)),
        Rule(L + r"feed_forward\.w1", R.FFN_GATE, B.FFN),
        Rule(L + r"feed_forward\.w3", R.FFN_UP, B.FFN),
        Rule(L + r"feed_forward\.w2", R.FFN_DOWN, B.FFN),
        # mixture of experts: Mixtral's names, and the Qwen-MoE/transformers-5 ones
        Rule(L + r"block_sparse_moe\.gate", R.ROUTER, B.MOE),
        Rule(L + r"block_sparse_moe\.experts\.{E}\.w1", R.EXPERTS, B.MOE, part=R.FFN_GATE),
        Rule(L + r"block_sparse_moe\.experts\.{E}\.w3", R.EXPERTS, B.MOE, part=R.FFN_UP),
        Rule(L + r"block_sparse_moe\.experts\.{E}\.w2", R.EXPERTS, B.MOE, part=R.FFN_DOWN),
        Rule(L + r"mlp\.gate", R.ROUTER, B.MOE),
        Rule(L + r"mlp\.experts\.{E}\.gate_proj", R.EXPERTS, B.MOE, part=R.FFN_GATE),
        Rule(L + r"mlp\.experts\.{E}\.up_proj", R.EXPERTS, B.MOE, part=R.FFN_UP),
        Rule(L + r"mlp\.experts\.{E}\.down_proj", R.EXPERTS, B.MOE, part=R.FFN_DOWN),
        # Qwen2-MoE's always-active shared expert and its sigmoid gate (Qwen2MoeSparseMoeBlock)
        Rule(L + r"mlp\.shared_expert\.gate_proj", R.FFN_GATE, B.SHARED_EXPERT),
        Rule(L + r"mlp\.shared_expert\.up_proj", R.FFN_UP, B.SHARED_EXPERT),
        Rule(L + r"mlp\.shared_expert\.down_proj", R.FFN_DOWN, B.SHARED_EXPERT),
        Rule(L + r"mlp\.shared_expert_gate", R.SHARED_EXPERT_GATE, B.MOE),
        Rule(L + r"(?:input_layernorm|post_attention_layernorm|attention_norm|ffn_norm)", R.NORM, B.NORM, VECTOR),
        Rule(L + r"(?:pre_feedforward_layernorm|post_feedforward_layernorm)", R.NORM, B.NORM, VECTOR),
        Rule(r"norm", R.NORM, B.NORM, VECTOR),
        Rule(r"(?:lm_head|output)", R.LM_HEAD, B.LM_HEAD),
        Rule(L + r"self_attn\.rotary_emb", None, None, buffer=True),
        Rule(r"rotary_emb", None, None, buffer=True),
        Rule(r"rope", None, None, buffer=True),  # Meta's rope.freqs
    )


def _gpt2_rules() -> tuple[Rule, ...]:
    H = r"h\.{L}\."
    return (
        Rule(r"wte", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"wpe", R.POSITION_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(H + r"ln_[12]", R.NORM, B.NORM, VECTOR),
        Rule(H + r"attn\.c_attn", R.Q_PROJ, _ATT, IN_OUT, fused=(R.Q_PROJ, R.K_PROJ, R.V_PROJ)),
        Rule(H + r"attn\.c_proj", R.O_PROJ, _ATT, IN_OUT),
        Rule(H + r"attn", None, None, buffer=True),  # attn.bias (the causal mask), attn.masked_bias
        Rule(H + r"mlp\.c_fc", R.FFN_UP, B.FFN, IN_OUT),
        Rule(H + r"mlp\.c_proj", R.FFN_DOWN, B.FFN, IN_OUT),
        Rule(r"ln_f", R.NORM, B.NORM, VECTOR),
        Rule(r"lm_head", R.LM_HEAD, B.LM_HEAD),
    )


def _bert_rules() -> tuple[Rule, ...]:
    L = r"encoder\.layer\.{L}\."
    S = B.SELF_ATTENTION
    return (
        Rule(r"embeddings\.word_embeddings", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"embeddings\.position_embeddings", R.POSITION_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"embeddings\.token_type_embeddings", R.TYPE_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"embeddings\.LayerNorm", R.NORM, B.EMBEDDINGS, VECTOR),
        Rule(L + r"attention\.self\.query", R.Q_PROJ, S),
        Rule(L + r"attention\.self\.key", R.K_PROJ, S),
        Rule(L + r"attention\.self\.value", R.V_PROJ, S),
        Rule(L + r"attention\.output\.dense", R.O_PROJ, S),
        Rule(L + r"attention\.output\.LayerNorm", R.NORM, B.NORM, VECTOR),
        Rule(L + r"intermediate\.dense", R.FFN_UP, B.FFN),
        Rule(L + r"output\.dense", R.FFN_DOWN, B.FFN),
        Rule(L + r"output\.LayerNorm", R.NORM, B.NORM, VECTOR),
        Rule(r"pooler\.dense", R.POOLER, B.POOLER),
        Rule(r"(?:cls\.predictions|lm_head)\.transform\.dense", Role.HEAD_TRANSFORM, B.MLM_HEAD),
        Rule(r"lm_head\.dense", Role.HEAD_TRANSFORM, B.MLM_HEAD),
        Rule(r"(?:cls\.predictions\.transform\.LayerNorm|lm_head\.layer_norm)", R.NORM, B.MLM_HEAD, VECTOR),
        Rule(r"(?:cls\.predictions\.decoder|lm_head\.decoder)", R.LM_HEAD, B.MLM_HEAD),
        Rule(r"(?:cls\.predictions|lm_head)", R.MLM_BIAS, B.MLM_HEAD, VECTOR),  # its leaf is "bias"
        Rule(r"embeddings", None, None, buffer=True),  # position_ids, token_type_ids
    )


def _t5_rules() -> tuple[Rule, ...]:
    rules = [
        Rule(r"shared", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"encoder\.embed_tokens", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS, stack=B.ENCODER, alias=True),
        Rule(r"decoder\.embed_tokens", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS, stack=B.DECODER, alias=True),
        Rule(r"lm_head", R.LM_HEAD, B.LM_HEAD),
    ]
    for stack, st in (("encoder", B.ENCODER), ("decoder", B.DECODER)):
        P = stack + r"\.block\.{L}\.layer\."
        self_att = B.SELF_ATTENTION if st == B.ENCODER else B.CAUSAL_SELF_ATTENTION
        ffn = "1" if st == B.ENCODER else "2"
        rules += [
            Rule(P + r"0\.SelfAttention\.q", R.Q_PROJ, self_att, stack=st),
            Rule(P + r"0\.SelfAttention\.k", R.K_PROJ, self_att, stack=st),
            Rule(P + r"0\.SelfAttention\.v", R.V_PROJ, self_att, stack=st),
            Rule(P + r"0\.SelfAttention\.o", R.O_PROJ, self_att, stack=st),
            Rule(
                P + r"0\.SelfAttention\.relative_attention_bias",
                R.RELATIVE_BIAS,
                B.RELATIVE_POSITION_BIAS,
                ROWS,
                stack=st,
            ),
            Rule(P + r"\d\.layer_norm", R.NORM, B.NORM, VECTOR, stack=st),
            Rule(P + ffn + r"\.DenseReluDense\.wi", R.FFN_UP, B.FFN, stack=st),
            Rule(P + ffn + r"\.DenseReluDense\.wi_0", R.FFN_GATE, B.FFN, stack=st),
            Rule(P + ffn + r"\.DenseReluDense\.wi_1", R.FFN_UP, B.FFN, stack=st),
            Rule(P + ffn + r"\.DenseReluDense\.wo", R.FFN_DOWN, B.FFN, stack=st),
            Rule(stack + r"\.final_layer_norm", R.NORM, B.NORM, VECTOR, stack=st),
        ]
        if st == B.DECODER:
            rules += [
                Rule(P + r"1\.EncDecAttention\.q", R.Q_PROJ, B.CROSS_ATTENTION, stack=st),
                Rule(P + r"1\.EncDecAttention\.k", R.K_PROJ, B.CROSS_ATTENTION, stack=st),
                Rule(P + r"1\.EncDecAttention\.v", R.V_PROJ, B.CROSS_ATTENTION, stack=st),
                Rule(P + r"1\.EncDecAttention\.o", R.O_PROJ, B.CROSS_ATTENTION, stack=st),
            ]
    return tuple(rules)


def _bart_like(stacks: tuple[str, ...]) -> list[Rule]:
    rules = []
    for stack in stacks:
        st = B.ENCODER if stack == "encoder" else B.DECODER
        self_att = B.SELF_ATTENTION if st == B.ENCODER else B.CAUSAL_SELF_ATTENTION
        P = stack + r"\.layers\.{L}\."
        rules += [
            Rule(stack + r"\.embed_tokens", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS, stack=st, alias=len(stacks) == 2),
            Rule(stack + r"\.embed_positions", R.POSITION_EMBEDDING, B.EMBEDDINGS, ROWS, stack=st),
            Rule(stack + r"\.layernorm_embedding", R.NORM, B.EMBEDDINGS, VECTOR, stack=st),
            Rule(P + r"self_attn\.q_proj", R.Q_PROJ, self_att, stack=st),
            Rule(P + r"self_attn\.k_proj", R.K_PROJ, self_att, stack=st),
            Rule(P + r"self_attn\.v_proj", R.V_PROJ, self_att, stack=st),
            Rule(P + r"self_attn\.out_proj", R.O_PROJ, self_att, stack=st),
            Rule(P + r"encoder_attn\.q_proj", R.Q_PROJ, B.CROSS_ATTENTION, stack=st),
            Rule(P + r"encoder_attn\.k_proj", R.K_PROJ, B.CROSS_ATTENTION, stack=st),
            Rule(P + r"encoder_attn\.v_proj", R.V_PROJ, B.CROSS_ATTENTION, stack=st),
            Rule(P + r"encoder_attn\.out_proj", R.O_PROJ, B.CROSS_ATTENTION, stack=st),
            Rule(
                P + r"(?:self_attn_layer_norm|encoder_attn_layer_norm|final_layer_norm)",
                R.NORM,
                B.NORM,
                VECTOR,
                stack=st,
            ),
            Rule(P + r"fc1", R.FFN_UP, B.FFN, stack=st),
            Rule(P + r"fc2", R.FFN_DOWN, B.FFN, stack=st),
            Rule(stack + r"\.final_layer_norm", R.NORM, B.NORM, VECTOR, stack=st),
        ]
    return rules


def _bart_rules() -> tuple[Rule, ...]:
    return (
        Rule(r"shared", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        *_bart_like(("encoder", "decoder")),
        Rule(r"lm_head", R.LM_HEAD, B.LM_HEAD),
        Rule(r"", None, None, buffer=True),  # final_logits_bias, a registered buffer at the top level
    )


def _opt_rules() -> tuple[Rule, ...]:
    # OPT has one stack, called "decoder": no stack tag (a decoder-only model).
    return tuple(
        Rule(r.pattern, r.role, r.block, r.layout, None, r.fused, r.part, r.buffer, False)
        for r in _bart_like(("decoder",))
    ) + (Rule(r"lm_head", R.LM_HEAD, B.LM_HEAD),)


# llama.cpp's names (gguf.constants.MODEL_TENSOR member -> role, block, layout, extras).
_GGUF: dict[str, tuple] = {
    "TOKEN_EMBD": (R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
    "TOKEN_TYPES": (R.TYPE_EMBEDDING, B.EMBEDDINGS, ROWS),
    "POS_EMBD": (R.POSITION_EMBEDDING, B.EMBEDDINGS, ROWS),
    "TOKEN_EMBD_NORM": (R.NORM, B.EMBEDDINGS, VECTOR),
    "OUTPUT": (R.LM_HEAD, B.LM_HEAD, OUT_IN),
    "OUTPUT_NORM": (R.NORM, B.NORM, VECTOR),
    "ROPE_FREQS": (None, None, VECTOR, {"buffer": True}),
    "ROPE_FACTORS_LONG": (None, None, VECTOR, {"buffer": True}),
    "ROPE_FACTORS_SHORT": (None, None, VECTOR, {"buffer": True}),
    "ATTN_Q": (R.Q_PROJ, _ATT, OUT_IN),
    "ATTN_K": (R.K_PROJ, _ATT, OUT_IN),
    "ATTN_V": (R.V_PROJ, _ATT, OUT_IN),
    "ATTN_QKV": (R.Q_PROJ, _ATT, OUT_IN, {"fused": (R.Q_PROJ, R.K_PROJ, R.V_PROJ)}),
    "ATTN_OUT": (R.O_PROJ, _ATT, OUT_IN),
    "ATTN_NORM": (R.NORM, B.NORM, VECTOR),
    "ATTN_NORM_2": (R.NORM, B.NORM, VECTOR),
    "ATTN_OUT_NORM": (R.NORM, B.NORM, VECTOR),
    "ATTN_POST_NORM": (R.NORM, B.NORM, VECTOR),
    "ATTN_Q_NORM": (R.Q_NORM, _ATT, VECTOR),
    "ATTN_K_NORM": (R.K_NORM, _ATT, VECTOR),
    "ATTN_ROT_EMBD": (None, None, VECTOR, {"buffer": True}),
    "FFN_GATE_INP": (R.ROUTER, B.MOE, OUT_IN),
    "FFN_NORM": (R.NORM, B.NORM, VECTOR),
    "FFN_PRE_NORM": (R.NORM, B.NORM, VECTOR),
    "FFN_POST_NORM": (R.NORM, B.NORM, VECTOR),
    "FFN_GATE": (R.FFN_GATE, B.FFN, OUT_IN),
    "FFN_UP": (R.FFN_UP, B.FFN, OUT_IN),
    "FFN_DOWN": (R.FFN_DOWN, B.FFN, OUT_IN),
    "FFN_GATE_EXP": (R.EXPERTS, B.MOE, OUT_IN, {"part": R.FFN_GATE}),
    "FFN_UP_EXP": (R.EXPERTS, B.MOE, OUT_IN, {"part": R.FFN_UP}),
    "FFN_DOWN_EXP": (R.EXPERTS, B.MOE, OUT_IN, {"part": R.FFN_DOWN}),
    "FFN_GATE_SHEXP": (R.FFN_GATE, B.SHARED_EXPERT, OUT_IN),
    "FFN_UP_SHEXP": (R.FFN_UP, B.SHARED_EXPERT, OUT_IN),
    "FFN_DOWN_SHEXP": (R.FFN_DOWN, B.SHARED_EXPERT, OUT_IN),
    "LAYER_OUT_NORM": (R.NORM, B.NORM, VECTOR),
}


@lru_cache(maxsize=1)
def _gguf_rules() -> tuple[Rule, ...]:
    from gguf.constants import MODEL_TENSOR, TENSOR_NAMES

    rules = []
    for member, spec in _GGUF.items():
        mt = getattr(MODEL_TENSOR, member, None)
        if mt is None or mt not in TENSOR_NAMES:  # a name this gguf version lacks
            continue
        role, block, layout, *extra = spec
        opts = extra[0] if extra else {}
        pattern = re.escape(TENSOR_NAMES[mt]).replace(r"\{bid\}", "{L}")
        rules.append(Rule(pattern, role, block, layout, **opts))
    return tuple(rules)


FAMILIES: dict[str, Family] = {
    "llama": Family("llama", _llama_rules(), "decoder-only", norm="rmsnorm", positional="rotary"),
    "gpt2": Family("gpt2", _gpt2_rules(), "decoder-only"),
    "bert": Family("bert", _bert_rules(), "encoder-only", norm_position="post"),
    "t5": Family("t5", _t5_rules(), "encoder-decoder", norm="rmsnorm", gated="geglu", positional="relative"),
    # opt before bart: OPT's names are BART's decoder names (best_family takes the first
    # table that names nearly every tensor; BART's encoder names fail OPT's table)
    "opt": Family("opt", _opt_rules(), "decoder-only", position_offset=2),
    "bart": Family("bart", _bart_rules(), "encoder-decoder", position_offset=2, norm_position="post"),
}

# config.json model_type -> naming family.
MODEL_TYPES = {
    "llama": "llama",
    "mistral": "llama",
    "mixtral": "llama",
    "qwen2_moe": "llama",
    "qwen2": "llama",
    "qwen3": "llama",
    "gemma": "llama",
    "gpt2": "gpt2",
    "bert": "bert",
    "roberta": "bert",
    "t5": "t5",
    "bart": "bart",
    "opt": "opt",
}

# GGUF general.architecture -> (Spec.family, norm, gated FFN flavour, positional when no table).
GGUF_ARCHS = {
    "llama": ("decoder-only", "rmsnorm", "swiglu", "rotary"),
    "mistral": ("decoder-only", "rmsnorm", "swiglu", "rotary"),
    "qwen2": ("decoder-only", "rmsnorm", "swiglu", "rotary"),
    "qwen3": ("decoder-only", "rmsnorm", "swiglu", "rotary"),
    "gemma": ("decoder-only", "rmsnorm", "geglu", "rotary"),
    "gpt2": ("decoder-only", "layernorm", "swiglu", "none"),
}


def gguf_family(arch: str | None) -> Family:
    """The GGUF naming table with the architecture ``arch`` implies (llama-like when unknown)."""
    fam, norm, gated, positional = GGUF_ARCHS.get(arch or "", GGUF_ARCHS["llama"])
    return Family("gguf", _gguf_rules(), fam, norm=norm, gated=gated, positional=positional)


# Leaves (last name components) and what they are.
PARAM_LEAVES = {"weight": False, "bias": True, "gamma": False, "beta": True}  # -> is a bias
GPTQ_LEAVES = ("qweight", "qzeros", "scales", "g_idx")
FP8_META_LEAVES = ("weight_scale", "weight_scale_inv", "input_scale", "weight_zero_point", "weight_g_idx", "SCB")
BUFFER_LEAVES = (
    "inv_freq",
    "position_ids",
    "token_type_ids",
    "masked_bias",
    "freqs",
    "freqs_cos",
    "freqs_sin",
    "cos_cached",
    "sin_cached",
    "_float_tensor",
    "final_logits_bias",
    # DeepSeek-V3's router bias for expert choice: register_buffer in DeepseekV3TopkRouter
    # (transformers 5), saved with the weights but not in model.parameters()
    "e_score_correction_bias",
)
# bitsandbytes 4-bit: weight.absmax, weight.quant_map, weight.nested_absmax,
# weight.nested_quant_map, weight.quant_state.bitsandbytes__nf4 (or __fp4).
BNB_META = re.compile(r"\.weight\.(absmax|quant_map|nested_absmax|nested_quant_map|quant_state\..*)$")

_PREFIX = r"(?:(?:model|transformer|bert|roberta|base_model\.model|_orig_mod|module|language_model)\.)*"


@dataclass(frozen=True)
class Match:
    """A tensor name matched against a family's table."""

    rule: Rule | None
    module: str
    leaf: str
    layer: int | None
    expert: int | None


# A table compiled: its one regex, and for each outer group number (``lastindex``) the
# rule and the group numbers of its layer and expert (None where the rule has none).
_Table = tuple[re.Pattern, dict[int, tuple[Rule, int | None, int | None]]]
_COMPILED: dict[tuple[str, int], _Table] = {}


def _compiled(family: str, rules: tuple[Rule, ...]) -> _Table:
    key = (family, len(rules))  # a family's table never changes (the GGUF one is built once)
    if key not in _COMPILED:
        _COMPILED[key] = _compile(rules)
    return _COMPILED[key]


def _compile(rules: tuple[Rule, ...]) -> _Table:
    """One regex for a whole table: the alternatives ``(?P<r{i}>...)`` in table order.

    ``fullmatch`` backtracks through the alternatives left to right, so the alternative
    that matches is the first rule of the table that matches the whole module path (what
    trying the rules one by one gave), in one call: a 90,000-tensor header took 4.8 M
    Python-level ``fullmatch`` calls.  Group names carry the rule's index (``layer_3``),
    as a regex cannot repeat a name; ``lastindex`` is the matched alternative's outer
    group (it closes last), looked up by number (``groupdict`` cost as much as the match).
    """
    alternatives = []
    for i, r in enumerate(rules):
        p = r.pattern.replace("{L}", rf"(?P<layer_{i}>\d+)").replace("{E}", rf"(?P<expert_{i}>\d+)")
        body = _PREFIX + p if p else r"(?:" + _PREFIX + r")?"
        alternatives.append(rf"(?P<r{i}>{body})")
    pattern = re.compile("|".join(alternatives))  # used with fullmatch: no anchor
    g = pattern.groupindex
    return pattern, {g[f"r{i}"]: (r, g.get(f"layer_{i}"), g.get(f"expert_{i}")) for i, r in enumerate(rules)}


def split_name(name: str) -> tuple[str, str]:
    """(module path, leaf) of a tensor name; bitsandbytes metadata keeps ``weight.X`` as its leaf."""
    m = BNB_META.search(name)
    if m:
        return name[: m.start()], "weight." + m.group(1)
    module, _, leaf = name.rpartition(".")
    return module, leaf


def match(name: str, family: Family) -> Match:
    """The rule of ``family`` that ``name``'s module path matches (``rule`` None if none)."""
    module, leaf = split_name(name)
    pattern, alternatives = _compiled(family.name, family.rules)
    m = pattern.fullmatch(module)
    if m is None:
        return Match(None, module, leaf, None, None)
    rule, li, ei = alternatives[m.lastindex]
    layer = m.group(li) if li else None
    expert = m.group(ei) if ei else None
    return Match(
        rule, module, leaf, int(layer) if layer is not None else None, int(expert) if expert is not None else None
    )


def best_family(names: list[str], matched: dict[str, list[Match]] | None = None) -> Family:
    """The HF naming family whose table matches the most of ``names``.

    Families are tried in order (llama first, the most common); one that names at least
    95% of the tensors is taken at once, so a usual checkpoint compiles one table.
    ``matched``, when given, receives {family name: the matches of ``names``} for the
    family returned when it was taken at once, so ``inventory.classify`` need not match
    every name again (half of the naming time of a 90,000-tensor header).
    """
    scores = {}
    for key, fam in FAMILIES.items():
        found = [match(n, fam) for n in names]
        scores[key] = sum(1 for m in found if m.rule is not None)
        if scores[key] >= 0.95 * len(names):
            if matched is not None:
                matched[fam.name] = found
            return fam
    best = max(scores, key=lambda k: (scores[k], k == "llama"))
    return FAMILIES[best]
