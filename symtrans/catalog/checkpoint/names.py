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
dual       CLIPModel, SiglipModel, Siglip2Model (text_model, vision_model, projections, logit_scale)
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
        leaf: a rule over the whole name: the tensor's last component must be ``leaf``
            (a parameter registered on a module beside its children, with no ``weight``
            leaf: ViT's ``embeddings.cls_token``, Mamba's ``mixer.A_log``, gpt-oss's
            stacked ``mlp.experts.gate_up_proj``); such a tensor is a parameter whatever
            its leaf, or a buffer with ``buffer``.
        bias: with ``leaf``, the tensor is the bias of ``role`` (``gate_up_proj_bias``).
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
    leaf: str | None = None
    bias: bool = False


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
    # blocks: Kimi K2.5's language model as transformers 5.24 saves it (its checkpoint conversion
    # writes Moonshot's names back: language_model.model.blocks.{L}.self_attn...)
    L = r"(?:layers|blocks)\.{L}\."
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
        *_decoder_synonyms(L),
        *_mixer_rules(L),
        *_zamba2_rules(L),
        *_vision_rules(),
    )


def _decoder_synonyms(L: str) -> tuple[Rule, ...]:
    """The other names transformers 5.x's ``model.layers.{L}`` decoders give the same roles.

    Phi (``self_attn.dense``, ``mlp.fc1/fc2``, ``final_layernorm``, ``q_layernorm``),
    Starcoder2 (``mlp.c_fc/c_proj``: nn.Linear, not GPT-2's Conv1D), GLM-4's extra norms,
    DeepSeek-V2/V3's multi-head latent attention (``q_a_proj`` ... ``kv_b_proj``) and
    ``shared_experts``, gpt-oss (``mlp.router``, stacked ``mlp.experts.*`` tensors, ``sinks``),
    Llama 4 and Jamba (``feed_forward.*``, ``router``, stacked or per-expert experts), LFM2
    (``operator_norm``, ``self_attn.out_proj``).
    """
    A = L + r"self_attn\."
    moe = r"(?:mlp|feed_forward|mixer)\."  # mixer: Nemotron-H's MoE layer (NemotronHMoE.shared_experts)
    stacked = [  # (E, d_in, d_out) tensors named by their leaf: nn.Parameter on the experts module
        Rule(L + moe + r"experts", R.EXPERTS, B.MOE, IN_OUT, part=R.FFN_GATE, leaf="gate_up_proj"),
        Rule(L + moe + r"experts", R.EXPERTS, B.MOE, IN_OUT, part=R.FFN_DOWN, leaf="down_proj"),
        Rule(L + moe + r"experts", R.EXPERTS, B.MOE, VECTOR, part=R.FFN_GATE, leaf="gate_up_proj_bias", bias=True),
        Rule(L + moe + r"experts", R.EXPERTS, B.MOE, VECTOR, part=R.FFN_DOWN, leaf="down_proj_bias", bias=True),
    ]
    return (
        *stacked,
        Rule(L + r"self_attn", R.ATTENTION_SINKS, _ATT, VECTOR, leaf="sinks"),  # gpt-oss: one logit per head
        Rule(A + r"dense", R.O_PROJ, _ATT),
        Rule(A + r"out_proj", R.O_PROJ, _ATT),
        # Phi, LFM2; StableLM's per-head LayerNorms are q_layernorm.norms.{head}
        Rule(A + r"q_layernorm(?:\.norms\.\d+)?", R.Q_NORM, _ATT, VECTOR),
        Rule(A + r"k_layernorm(?:\.norms\.\d+)?", R.K_NORM, _ATT, VECTOR),
        # multi-head latent attention (DeepSeek-V2 §2.1)
        Rule(A + r"q_a_proj", R.Q_DOWN, _ATT),
        Rule(A + r"q_b_proj", R.Q_UP, _ATT),
        Rule(A + r"kv_a_proj_with_mqa", R.KV_DOWN, _ATT),
        Rule(A + r"kv_b_proj", R.KV_UP, _ATT),
        Rule(A + r"(?:q_a_layernorm|kv_a_layernorm)", R.LATENT_NORM, _ATT, VECTOR),
        # DeepSeek Sparse Attention's lightning indexer (DeepseekV32Indexer; GLM-5 reuses it)
        Rule(A + r"indexer\.wq_b", R.INDEXER_Q, _ATT),
        Rule(A + r"indexer\.wk", R.INDEXER_K, _ATT),
        Rule(A + r"indexer\.k_norm", R.INDEXER_NORM, _ATT, VECTOR),
        Rule(A + r"indexer\.weights_proj", R.INDEXER_WEIGHTS, _ATT),
        # DeepSeek-V4 (DeepseekV4Attention): the shared key-value map, the grouped output projection,
        # the CSA/HCA compressors and the CSA indexer; the hyper-connections of each layer and the head
        Rule(A + r"kv_proj", R.K_PROJ, _ATT),
        Rule(A + r"kv_norm", R.LATENT_NORM, _ATT, VECTOR),
        Rule(A + r"q_a_norm", R.LATENT_NORM, _ATT, VECTOR),
        Rule(A + r"o_a_proj", R.O_PROJ, _ATT),
        Rule(A + r"o_b_proj", R.O_PROJ, _ATT),
        Rule(A + r"compressor\.indexer\.q_b_proj", R.INDEXER_Q, _ATT),
        Rule(A + r"compressor\.indexer\.scorer\.weights_proj", R.INDEXER_WEIGHTS, _ATT),
        Rule(A + r"compressor(?:\.indexer)?\.(?:kv_proj|gate_proj)", R.COMPRESSOR, _ATT),
        Rule(A + r"compressor(?:\.indexer)?\.kv_norm", R.COMPRESSOR, _ATT, VECTOR),
        Rule(A + r"compressor(?:\.indexer)?", R.COMPRESSOR, _ATT, leaf="position_bias"),
        Rule(A + r"compressor(?:\.indexer)?\.rotary_emb", None, None, buffer=True),
        Rule(L + r"(?:attn_hc|ffn_hc)", R.HYPER_CONNECTION, B.OTHER, leaf="fn"),
        Rule(L + r"(?:attn_hc|ffn_hc)", R.HYPER_CONNECTION, B.OTHER, VECTOR, leaf="base"),
        Rule(L + r"(?:attn_hc|ffn_hc)", R.HYPER_CONNECTION, B.OTHER, VECTOR, leaf="scale"),
        Rule(r"hc_head", R.HYPER_CONNECTION, B.OTHER, leaf="hc_fn"),
        Rule(r"hc_head", R.HYPER_CONNECTION, B.OTHER, VECTOR, leaf="hc_base"),
        Rule(r"hc_head", R.HYPER_CONNECTION, B.OTHER, VECTOR, leaf="hc_scale"),
        Rule(L + r"mlp\.gate", None, None, VECTOR, buffer=True, leaf="tid2eid"),
        # ... and the names its save_pretrained writes (DeepSeek's own, transformers 5.24's conversion
        # mapping of deepseek_v4): attn.wq_a ... wo_b, attn_sink, the compressors' wkv / wgate / ape /
        # norm, ffn.* with w1 / w3 / w2 experts, hc_attn_* / hc_ffn_* on the layer, head
        *_deepseek_v4_saved(L),
        Rule(L + r"mlp\.(?:fc1|c_fc)", R.FFN_UP, B.FFN),
        Rule(L + r"mlp\.(?:fc2|c_proj)", R.FFN_DOWN, B.FFN),
        Rule(L + r"feed_forward\.gate_proj", R.FFN_GATE, B.FFN),
        Rule(L + r"feed_forward\.up_proj", R.FFN_UP, B.FFN),
        Rule(L + r"feed_forward\.down_proj", R.FFN_DOWN, B.FFN),
        Rule(L + moe + r"router", R.ROUTER, B.MOE),
        Rule(L + r"feed_forward\.experts\.{E}\.gate_proj", R.EXPERTS, B.MOE, part=R.FFN_GATE),
        Rule(L + r"feed_forward\.experts\.{E}\.up_proj", R.EXPERTS, B.MOE, part=R.FFN_UP),
        Rule(L + r"feed_forward\.experts\.{E}\.down_proj", R.EXPERTS, B.MOE, part=R.FFN_DOWN),
        Rule(L + moe + r"shared_experts?\.gate_proj", R.FFN_GATE, B.SHARED_EXPERT),
        Rule(L + moe + r"shared_experts?\.up_proj", R.FFN_UP, B.SHARED_EXPERT),
        Rule(L + moe + r"shared_experts?\.down_proj", R.FFN_DOWN, B.SHARED_EXPERT),
        Rule(
            L + r"(?:post_self_attn_layernorm|post_mlp_layernorm|pre_ff_layernorm|operator_norm)",
            R.NORM,
            B.NORM,
            VECTOR,
        ),
        Rule(r"final_layernorm", R.NORM, B.NORM, VECTOR),
        # Apertus: attention_/feedforward_layernorm, and xIELU's learned alpha_p, alpha_n (its
        # beta and eps are buffers: transformers activations.XIELUActivation)
        Rule(L + r"(?:attention_layernorm|feedforward_layernorm)", R.NORM, B.NORM, VECTOR),
        Rule(L + r"mlp\.act_fn", R.ACTIVATION, B.FFN, VECTOR, leaf="alpha_p"),
        Rule(L + r"mlp\.act_fn", R.ACTIVATION, B.FFN, VECTOR, leaf="alpha_n"),
        Rule(L + r"mlp\.act_fn", None, None, VECTOR, buffer=True, leaf="beta"),
        Rule(L + r"mlp\.act_fn", None, None, VECTOR, buffer=True, leaf="eps"),
        # Granite-MoE: stacked (E, 2 d_ff, d) input_linear (gate and up) and output_linear, a
        # router.layer; GraniteMoeShared's shared_mlp; HunYuan-MoE's gate.wg and shared_mlp;
        # ERNIE-4.5-MoE's moe_statics.e_score_correction_bias, a parameter there (not a buffer)
        Rule(L + r"block_sparse_moe\.input_linear", R.EXPERTS, B.MOE, part=R.FFN_GATE),
        Rule(L + r"block_sparse_moe\.output_linear", R.EXPERTS, B.MOE, part=R.FFN_DOWN),
        Rule(L + r"block_sparse_moe\.router\.layer", R.ROUTER, B.MOE),
        Rule(L + r"shared_mlp\.input_linear", R.FFN_GATE, B.SHARED_EXPERT, fused=(R.FFN_GATE, R.FFN_UP)),
        Rule(L + r"shared_mlp\.output_linear", R.FFN_DOWN, B.SHARED_EXPERT),
        Rule(L + r"mlp\.gate\.wg", R.ROUTER, B.MOE),
        Rule(L + r"mlp\.shared_mlp\.gate_proj", R.FFN_GATE, B.SHARED_EXPERT),
        Rule(L + r"mlp\.shared_mlp\.up_proj", R.FFN_UP, B.SHARED_EXPERT),
        Rule(L + r"mlp\.shared_mlp\.down_proj", R.FFN_DOWN, B.SHARED_EXPERT),
        Rule(L + r"mlp\.moe_statics", R.ROUTER, B.MOE, VECTOR, leaf="e_score_correction_bias", bias=True),
        # Gemma 4 (Gemma4TextDecoderLayer): experts and a router beside the MLP (stacked tensors on the
        # layer itself), their three norms, the per-layer input's gate, projection and norm; layer_scalar is
        # a buffer.  Before the stack: the per-layer table, its projection from the embeddings and its norm
        Rule(L + r"experts", R.EXPERTS, B.MOE, IN_OUT, part=R.FFN_GATE, leaf="gate_up_proj"),
        Rule(L + r"experts", R.EXPERTS, B.MOE, IN_OUT, part=R.FFN_DOWN, leaf="down_proj"),
        Rule(L + r"router\.proj", R.ROUTER, B.MOE),
        Rule(L + r"router", R.ROUTER, B.MOE, VECTOR, leaf="scale"),
        Rule(L + r"router", R.ROUTER, B.MOE, VECTOR, leaf="per_expert_scale"),
        Rule(
            L + r"(?:pre_feedforward_layernorm_2|post_feedforward_layernorm_[12]|post_per_layer_input_norm)",
            R.NORM,
            B.NORM,
            VECTOR,
        ),
        Rule(L + r"per_layer_input_gate", R.PLE_GATE, B.OTHER),
        Rule(L + r"per_layer_projection", R.PLE_PROJECTION, B.OTHER),
        Rule(L.rstrip("\\."), None, None, VECTOR, buffer=True, leaf="layer_scalar"),
        Rule(r"embed_tokens_per_layer", R.PLE_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"per_layer_model_projection", R.PLE_PROJECTION, B.EMBEDDINGS),
        Rule(r"per_layer_projection_norm", R.NORM, B.NORM, VECTOR),
        # Nemotron-H: each layer's one "mixer" is attention, an MLP or a MoE (NemotronHBlock); its experts
        # are saved per expert, non-gated (up_proj, down_proj), its router is mixer.gate
        Rule(L + r"mixer\.q_proj", R.Q_PROJ, _ATT),
        Rule(L + r"mixer\.k_proj", R.K_PROJ, _ATT),
        Rule(L + r"mixer\.v_proj", R.V_PROJ, _ATT),
        Rule(L + r"mixer\.o_proj", R.O_PROJ, _ATT),
        Rule(L + r"mixer\.up_proj", R.FFN_UP, B.FFN),
        Rule(L + r"mixer\.down_proj", R.FFN_DOWN, B.FFN),
        Rule(L + r"mixer\.gate", R.ROUTER, B.MOE),
        Rule(L + r"mixer\.experts\.{E}\.up_proj", R.EXPERTS, B.MOE, part=R.FFN_UP),
        Rule(L + r"mixer\.experts\.{E}\.down_proj", R.EXPERTS, B.MOE, part=R.FFN_DOWN),
        # HunYuan's per-head query/key norms
        Rule(A + r"query_layernorm", R.Q_NORM, _ATT, VECTOR),
        Rule(A + r"key_layernorm", R.K_NORM, _ATT, VECTOR),
    )


def _deepseek_v4_saved(L: str) -> tuple[Rule, ...]:
    """DeepSeek-V4's checkpoint names (what DeepseekV4ForCausalLM.save_pretrained writes)."""
    A = L + r"attn\."
    hc = [
        Rule(L[: -len(r"\.")], R.HYPER_CONNECTION, B.OTHER, VECTOR if part != "fn" else OUT_IN, leaf=f"hc_{s}_{part}")
        for s in ("attn", "ffn")
        for part in ("fn", "base", "scale")
    ]
    return (
        Rule(A + r"wq_a", R.Q_DOWN, _ATT),
        Rule(A + r"wq_b", R.Q_UP, _ATT),
        Rule(A + r"q_norm", R.LATENT_NORM, _ATT, VECTOR),
        Rule(A + r"wkv", R.K_PROJ, _ATT),
        Rule(A + r"norm", R.LATENT_NORM, _ATT, VECTOR),
        Rule(A + r"(?:wo_a|wo_b)", R.O_PROJ, _ATT),
        Rule(L + r"attn", R.ATTENTION_SINKS, _ATT, VECTOR, leaf="attn_sink"),
        Rule(A + r"(?:indexer\.)?compressor\.(?:wkv|wgate)", R.COMPRESSOR, _ATT),
        Rule(A + r"(?:indexer\.)?compressor\.norm", R.COMPRESSOR, _ATT, VECTOR),
        Rule(A + r"(?:indexer\.)?compressor", R.COMPRESSOR, _ATT, leaf="ape"),
        Rule(A + r"indexer\.wq_b", R.INDEXER_Q, _ATT),
        Rule(A + r"indexer\.weights_proj", R.INDEXER_WEIGHTS, _ATT),
        Rule(L + r"(?:attn_norm|ffn_norm)", R.NORM, B.NORM, VECTOR),
        Rule(L + r"ffn\.gate", R.ROUTER, B.MOE),
        Rule(L + r"ffn\.gate", None, None, VECTOR, buffer=True, leaf="tid2eid"),
        Rule(L + r"ffn\.gate", None, None, VECTOR, buffer=True, leaf="bias"),  # e_score_correction_bias
        Rule(L + r"ffn\.experts\.{E}\.w1", R.EXPERTS, B.MOE, part=R.FFN_GATE),
        Rule(L + r"ffn\.experts\.{E}\.w3", R.EXPERTS, B.MOE, part=R.FFN_UP),
        Rule(L + r"ffn\.experts\.{E}\.w2", R.EXPERTS, B.MOE, part=R.FFN_DOWN),
        Rule(L + r"ffn\.shared_experts\.w1", R.FFN_GATE, B.SHARED_EXPERT),
        Rule(L + r"ffn\.shared_experts\.w3", R.FFN_UP, B.SHARED_EXPERT),
        Rule(L + r"ffn\.shared_experts\.w2", R.FFN_DOWN, B.SHARED_EXPERT),
        *hc,
        Rule(r"head", R.LM_HEAD, B.LM_HEAD),
    )


def _zamba2_rules(L: str) -> tuple[Rule, ...]:
    """Zamba2's hybrid layers (transformers 5.24 Zamba2HybridLayer): ``mamba_decoder`` (a Mamba 2
    layer: its norm and mixer), ``linear`` (the d_model map of the block's output) and
    ``shared_transformer`` (the shared block: attention at 2 x d_model, a fused gate_up MLP, their
    norms and the LoRA adapters ``*_adapter_list.{use}.{0,1}``; tied copies are saved once)."""
    D, M, T = L + r"mamba_decoder\.", L + r"mamba_decoder\.mamba", L + r"shared_transformer\."
    return (
        Rule(M, R.SSM_A, B.SSM_MIXER, VECTOR, leaf="A_log"),
        Rule(M, R.SSM_D, B.SSM_MIXER, VECTOR, leaf="D"),
        Rule(M, R.SSM_DT_BIAS, B.SSM_MIXER, VECTOR, leaf="dt_bias"),
        Rule(M + r"\.in_proj", R.MIXER_IN_PROJ, B.SSM_MIXER),
        Rule(M + r"\.conv1d", R.MIXER_CONV, B.SSM_MIXER, VECTOR),
        Rule(M + r"\.norm", R.MIXER_NORM, B.SSM_MIXER, VECTOR),
        Rule(M + r"\.out_proj", R.MIXER_OUT_PROJ, B.SSM_MIXER),
        Rule(D + r"input_layernorm", R.NORM, B.NORM, VECTOR),
        Rule(L + r"linear", R.ADAPTER, B.OTHER),
        Rule(T + r"self_attn\.q_proj", R.Q_PROJ, _ATT),
        Rule(T + r"self_attn\.k_proj", R.K_PROJ, _ATT),
        Rule(T + r"self_attn\.v_proj", R.V_PROJ, _ATT),
        Rule(T + r"self_attn\.o_proj", R.O_PROJ, _ATT),
        Rule(T + r"self_attn\.linear_[qkv]_adapter_list\.\d+\.[01]", R.ADAPTER, _ATT),
        Rule(T + r"feed_forward\.gate_up_proj", R.FFN_GATE, B.FFN, fused=(R.FFN_GATE, R.FFN_UP)),
        Rule(T + r"feed_forward\.down_proj", R.FFN_DOWN, B.FFN),
        Rule(T + r"feed_forward\.gate_up_proj_adapter_list\.\d+\.[01]", R.ADAPTER, B.FFN),
        Rule(T + r"(?:input_layernorm|pre_ff_layernorm)", R.NORM, B.NORM, VECTOR),
    )


def _mixer_rules(L: str) -> tuple[Rule, ...]:
    """State-space and linear-attention mixers inside ``layers.{L}``: Mamba's ``mixer``
    (MambaForCausalLM, Mamba2ForCausalLM under ``backbone``), Jamba's ``mamba``, Qwen3-Next's
    Gated DeltaNet ``linear_attn`` and LFM2's short ``conv``.  ``A_log``, ``D`` and
    ``dt_bias`` are parameters registered on the mixer itself (full-name rules)."""
    rules: list[Rule] = []
    for name, block in (("mixer", B.SSM_MIXER), ("mamba", B.SSM_MIXER), ("linear_attn", B.LINEAR_ATTENTION)):
        M = L + name
        rules += [
            Rule(M, R.SSM_A, block, VECTOR, leaf="A_log"),
            Rule(M, R.SSM_D, block, VECTOR, leaf="D"),
            Rule(M, R.SSM_DT_BIAS, block, VECTOR, leaf="dt_bias"),
            # Qwen3-Next fuses qkvz and ba; Qwen3.5 keeps in_proj_qkv, in_proj_z, in_proj_a, in_proj_b apart
            Rule(M + r"\.(?:in_proj|in_proj_qkvz|in_proj_qkv|in_proj_z)", R.MIXER_IN_PROJ, block),
            Rule(M + r"\.in_proj_(?:ba|a|b)", R.MIXER_GATE_PROJ, block),
            Rule(M + r"\.conv1d", R.MIXER_CONV, block, VECTOR),
            Rule(M + r"\.x_proj", R.SSM_X_PROJ, block),
            Rule(M + r"\.dt_proj", R.SSM_DT_PROJ, block),
            Rule(M + r"\.(?:norm|dt_layernorm|b_layernorm|c_layernorm)", R.MIXER_NORM, block, VECTOR),
            Rule(M + r"\.out_proj", R.MIXER_OUT_PROJ, block),
        ]
    C = L + r"conv\."
    rules += [
        Rule(C + r"in_proj", R.MIXER_IN_PROJ, B.SHORT_CONV),
        Rule(C + r"conv", R.MIXER_CONV, B.SHORT_CONV, VECTOR),
        Rule(C + r"out_proj", R.MIXER_OUT_PROJ, B.SHORT_CONV),
        Rule(L + r"norm", R.NORM, B.NORM, VECTOR),  # Mamba's per-layer norm
        Rule(r"(?:norm_f|embedding_norm)", R.NORM, B.NORM, VECTOR),  # Mamba's and LFM2's final norms
        Rule(r"embeddings", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),  # Mamba's backbone.embeddings
    ]
    return tuple(rules)


def _vision_rules() -> tuple[Rule, ...]:
    """A vision-language model's image side (LlavaForConditionalGeneration's and Gemma 3's
    ``vision_tower`` and ``multi_modal_projector``; Qwen2-VL's ``visual`` and ``visual.merger``;
    Idefics3's and SmolVLM's ``vision_model`` and ``connector``), counted
    by the engine as whole components of ``Role.VISION`` (engine/vision.py): every tensor
    under them is that role, the rest of the name is the vision encoder's own naming."""
    return (
        Rule(r"vision_tower\.embeddings", R.VISION, B.VISION_TOWER, VECTOR, leaf="class_embedding"),  # CLIP
        Rule(r"", R.VISION, B.PROJECTOR, VECTOR, leaf="image_newline"),  # LLaVA-NeXT's row separator
        # Gemma 3's projector: a bare (d_vis, d_model) parameter, x @ W (Gemma3MultiModalProjector)
        Rule(r"multi_modal_projector", R.VISION, B.PROJECTOR, IN_OUT, leaf="mm_input_projection_weight"),
        Rule(r"visual\.merger\..*", R.VISION, B.PROJECTOR),
        Rule(r"visual\.deepstack_merger_list\..*", R.VISION, B.PROJECTOR),  # Qwen3-VL's DeepStack mergers
        # Llama 4's vision_model: two bare parameters beside its children (its own naming below)
        Rule(r"vision_model", R.VISION, B.VISION_TOWER, VECTOR, leaf="class_embedding"),
        Rule(r"vision_model", R.VISION, B.VISION_TOWER, ROWS, leaf="positional_embedding_vlm"),
        # Gemma 4's position tables: a bare (2, P_vis, d_vis) parameter beside the patch map
        Rule(r"vision_tower\.patch_embedder", R.VISION, B.VISION_TOWER, ROWS, leaf="position_embedding_table"),
        # Kimi K2.5's mm_projector, Gemma 4's embed_vision
        Rule(r"(?:multi_modal_projector|connector|mm_projector|embed_vision)\..*", R.VISION, B.PROJECTOR),
        Rule(r"(?:vision_tower|visual|vision_model)(?:\..*)?", R.VISION, B.VISION_TOWER),
        # Gemma 4's audio tower (a conformer) and its embed_audio map
        Rule(r"(?:audio_tower|embed_audio)(?:\..*)?", R.VISION, B.AUDIO_TOWER),
    )


def _dual_rules() -> tuple[Rule, ...]:
    """CLIPModel and SiglipModel: ``text_model`` (an encoder: ``embeddings.token_embedding``,
    ``embeddings.position_embedding``, ``encoder.layers.{L}`` with ``self_attn.{q,k,v,out}_proj``,
    ``layer_norm1/2``, ``mlp.fc1/fc2``; ``final_layer_norm``; SigLIP's ``head``), CLIP's
    ``text_projection``, the image side (``vision_model``, CLIP's ``visual_projection``), counted
    by the engine as whole components of ``Role.VISION`` (engine/dual.py), and the logits'
    ``logit_scale`` (and SigLIP's ``logit_bias``), parameters registered on the model itself.
    SigLIP's pooling head holds torch ``nn.MultiheadAttention``'s ``in_proj_weight`` /
    ``in_proj_bias`` and its ``probe``: leaves other than weight and bias."""
    T = r"text_model\."
    L = T + r"encoder\.layers\.{L}\."
    S = B.SELF_ATTENTION
    V = r"vision_model(?:\..*)?"
    return (
        Rule(T + r"embeddings\.token_embedding", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(T + r"embeddings\.position_embedding", R.POSITION_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(L + r"self_attn\.q_proj", R.Q_PROJ, S),
        Rule(L + r"self_attn\.k_proj", R.K_PROJ, S),
        Rule(L + r"self_attn\.v_proj", R.V_PROJ, S),
        Rule(L + r"self_attn\.out_proj", R.O_PROJ, S),
        Rule(L + r"layer_norm[12]", R.NORM, B.NORM, VECTOR),
        Rule(L + r"mlp\.fc1", R.FFN_UP, B.FFN),
        Rule(L + r"mlp\.fc2", R.FFN_DOWN, B.FFN),
        Rule(T + r"final_layer_norm", R.NORM, B.NORM, VECTOR),
        Rule(r"(?:text_projection|text_model\.head)", R.TEXT_PROJECTION, B.TEXT_HEAD),
        Rule(r"", R.LOGIT_SCALE, B.CONTRASTIVE, VECTOR, leaf="logit_scale"),
        Rule(r"", R.LOGIT_SCALE, B.CONTRASTIVE, VECTOR, leaf="logit_bias"),
        Rule(r"visual_projection", R.VISION, B.PROJECTOR),
        Rule(V, R.VISION, B.VISION_TOWER, VECTOR, leaf="class_embedding"),  # CLIP
        Rule(V, R.VISION, B.VISION_TOWER, VECTOR, leaf="probe"),  # SigLIP's pooling query
        Rule(V, R.VISION, B.VISION_TOWER, leaf="in_proj_weight"),  # (3 d_vis, d_vis): out x in
        Rule(V, R.VISION, B.VISION_TOWER, VECTOR, leaf="in_proj_bias", bias=True),
        Rule(V, R.VISION, B.VISION_TOWER),
    )


def _gpt_neox_rules() -> tuple[Rule, ...]:
    """GPTNeoXForCausalLM: ``gpt_neox.layers.{L}``; its LM head is saved as ``embed_out``."""
    L = r"layers\.{L}\."
    return (
        Rule(r"embed_in", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(L + r"attention\.query_key_value", R.Q_PROJ, _ATT, fused=(R.Q_PROJ, R.K_PROJ, R.V_PROJ)),
        Rule(L + r"attention\.dense", R.O_PROJ, _ATT),
        Rule(L + r"attention(?:\.rotary_emb)?", None, None, buffer=True),  # masks, inv_freq
        Rule(L + r"(?:input_layernorm|post_attention_layernorm)", R.NORM, B.NORM, VECTOR),
        Rule(L + r"mlp\.dense_h_to_4h", R.FFN_UP, B.FFN),
        Rule(L + r"mlp\.dense_4h_to_h", R.FFN_DOWN, B.FFN),
        Rule(r"final_layer_norm", R.NORM, B.NORM, VECTOR),
        Rule(r"(?:embed_out|lm_head)", R.LM_HEAD, B.LM_HEAD),
        Rule(r"rotary_emb", None, None, buffer=True),
    )


def _bloom_rules() -> tuple[Rule, ...]:
    """BloomForCausalLM and FalconForCausalLM: ``transformer.h.{L}.self_attention`` with a
    fused ``query_key_value`` (Falcon's multi-query width is d + 2 d_k) and ``dense_h_to_4h``."""
    H = r"h\.{L}\."
    return (
        Rule(r"word_embeddings", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"word_embeddings_layernorm", R.NORM, B.EMBEDDINGS, VECTOR),
        Rule(H + r"self_attention\.query_key_value", R.Q_PROJ, _ATT, fused=(R.Q_PROJ, R.K_PROJ, R.V_PROJ)),
        Rule(H + r"self_attention\.dense", R.O_PROJ, _ATT),
        Rule(H + r"self_attention(?:\.rotary_emb)?", None, None, buffer=True),
        Rule(H + r"(?:input_layernorm|post_attention_layernorm|ln_attn|ln_mlp)", R.NORM, B.NORM, VECTOR),
        Rule(H + r"mlp\.dense_h_to_4h", R.FFN_UP, B.FFN),
        Rule(H + r"mlp\.dense_4h_to_h", R.FFN_DOWN, B.FFN),
        Rule(r"ln_f", R.NORM, B.NORM, VECTOR),
        Rule(r"lm_head", R.LM_HEAD, B.LM_HEAD),
        Rule(r"rotary_emb", None, None, buffer=True),
    )


def _gpt_j_neo_mpt_rules() -> tuple[Rule, ...]:
    """GPT-style ``h.{L}`` / ``blocks.{L}`` names with nn.Linear maps (not GPT-2's Conv1D):
    GPTNeoForCausalLM (``attn.attention.q_proj``, ``mlp.c_fc``), GPTJForCausalLM
    (``attn.q_proj``, ``mlp.fc_in``), MptForCausalLM (``blocks.{L}.attn.Wqkv``, ``ffn``) and
    DbrxForCausalLM (``blocks.{L}.norm_attn_norm.attn.Wqkv``, ``ffn.router.layer``, and its
    experts ``ffn.experts.mlp.w1``/``v1``/``w2``: each one (E x ffn_hidden_size, d_model) tensor,
    w1 and v1 used as out x in, w2 as in x out; transformers 5.24 modeling_dbrx.DbrxExpertGLU)."""
    H = r"(?:h|blocks)\.{L}\."
    At = H + r"(?:norm_attn_norm\.)?attn\.(?:attention\.)?"
    X = H + r"ffn\.experts\.mlp"
    return (
        Rule(X, R.EXPERTS, B.MOE, OUT_IN, part=R.FFN_GATE, leaf="w1"),
        Rule(X, R.EXPERTS, B.MOE, OUT_IN, part=R.FFN_UP, leaf="v1"),
        Rule(X, R.EXPERTS, B.MOE, IN_OUT, part=R.FFN_DOWN, leaf="w2"),
        Rule(H + r"ffn\.router\.layer", R.ROUTER, B.MOE),
        Rule(r"wte", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"wpe", R.POSITION_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(At + r"q_proj", R.Q_PROJ, _ATT),
        Rule(At + r"k_proj", R.K_PROJ, _ATT),
        Rule(At + r"v_proj", R.V_PROJ, _ATT),
        Rule(At + r"out_proj", R.O_PROJ, _ATT),
        Rule(At + r"Wqkv", R.Q_PROJ, _ATT, fused=(R.Q_PROJ, R.K_PROJ, R.V_PROJ)),
        Rule(H + r"attn(?:\.attention)?", None, None, buffer=True),  # masks (bias, masked_bias)
        Rule(H + r"(?:norm_attn_norm\.)?(?:ln_1|ln_2|norm_1|norm_2)", R.NORM, B.NORM, VECTOR),
        Rule(H + r"(?:mlp\.c_fc|mlp\.fc_in|ffn\.up_proj)", R.FFN_UP, B.FFN),
        Rule(H + r"(?:mlp\.c_proj|mlp\.fc_out|ffn\.down_proj)", R.FFN_DOWN, B.FFN),
        Rule(r"(?:ln_f|norm_f)", R.NORM, B.NORM, VECTOR),
        Rule(r"lm_head", R.LM_HEAD, B.LM_HEAD),
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
        *_encoder_synonyms(),
    )


def _encoder_synonyms() -> tuple[Rule, ...]:
    """The other encoders' names for BERT's roles (transformers 5.x): DistilBERT
    (``transformer.layer.{L}.attention.q_lin``, ``ffn.lin1``), ELECTRA's
    ``embeddings_project``, ALBERT's shared ``albert_layer_groups.{G}`` (the index is the
    group: layers share it), DeBERTa-v2 (``query_proj``, ``pos_key_proj``, ``rel_embeddings``,
    the ConvLayer) and ViT (``cls_token`` and ``position_embeddings`` registered on
    ``embeddings``, the patch projection, ``layernorm_before/after``)."""
    S = B.SELF_ATTENTION
    D = r"layer\.{L}\."
    G = r"encoder\.albert_layer_groups\.{L}\.albert_layers\.\d+\."
    E = r"encoder\.layer\.{L}\."
    NL = r"(?:encoder\.)?layers\.{L}\."  # ModernBERT's layers.{L}, NomicBERT's encoder.layers.{L}
    return (
        Rule(D + r"attention\.q_lin", R.Q_PROJ, S),
        Rule(D + r"attention\.k_lin", R.K_PROJ, S),
        Rule(D + r"attention\.v_lin", R.V_PROJ, S),
        Rule(D + r"attention\.out_lin", R.O_PROJ, S),
        Rule(D + r"(?:sa_layer_norm|output_layer_norm)", R.NORM, B.NORM, VECTOR),
        Rule(D + r"ffn\.lin1", R.FFN_UP, B.FFN),
        Rule(D + r"ffn\.lin2", R.FFN_DOWN, B.FFN),
        Rule(
            r"(?:embeddings_project|encoder\.embedding_hidden_mapping_in|embeddings\.embed_proj)",
            R.EMBEDDING_PROJECTION,
            B.EMBEDDINGS,
        ),
        Rule(G + r"attention\.query", R.Q_PROJ, S),
        Rule(G + r"attention\.key", R.K_PROJ, S),
        Rule(G + r"attention\.value", R.V_PROJ, S),
        Rule(G + r"attention\.dense", R.O_PROJ, S),
        Rule(G + r"(?:attention\.LayerNorm|full_layer_layer_norm)", R.NORM, B.NORM, VECTOR),
        Rule(G + r"ffn", R.FFN_UP, B.FFN),
        Rule(G + r"ffn_output", R.FFN_DOWN, B.FFN),
        Rule(r"pooler", R.POOLER, B.POOLER),  # ALBERT's pooler is the Linear itself
        Rule(E + r"attention\.(?:self|attention)\.(?:query_proj|query)", R.Q_PROJ, S),
        Rule(E + r"attention\.(?:self|attention)\.(?:key_proj|key)", R.K_PROJ, S),
        Rule(E + r"attention\.(?:self|attention)\.(?:value_proj|value)", R.V_PROJ, S),
        Rule(E + r"attention\.self\.pos_key_proj", R.POS_KEY_PROJ, S),
        Rule(E + r"attention\.self\.pos_query_proj", R.POS_QUERY_PROJ, S),
        Rule(r"encoder\.rel_embeddings", R.RELATIVE_EMBEDDING, B.RELATIVE_EMBEDDINGS, ROWS),
        Rule(r"encoder\.LayerNorm", R.NORM, B.RELATIVE_EMBEDDINGS, VECTOR),
        Rule(r"encoder\.conv\.conv", R.CONV, B.CONV_LAYER, VECTOR),
        Rule(r"encoder\.conv\.LayerNorm", R.NORM, B.CONV_LAYER, VECTOR),
        Rule(r"embeddings", R.CLS_TOKEN, B.EMBEDDINGS, VECTOR, leaf="cls_token"),
        Rule(r"embeddings", R.POSITION_EMBEDDING, B.EMBEDDINGS, ROWS, leaf="position_embeddings"),
        Rule(r"embeddings\.patch_embeddings\.projection", R.PATCH_EMBEDDING, B.EMBEDDINGS, VECTOR),
        Rule(E + r"(?:layernorm_before|layernorm_after)", R.NORM, B.NORM, VECTOR),
        Rule(r"layernorm", R.NORM, B.NORM, VECTOR),
        # RoBERTa-PreLayerNorm (attention.LayerNorm, intermediate.LayerNorm, a final LayerNorm)
        # and MPNet (attention.attn.q/k/v/o, one relative bias table for the stack)
        Rule(E + r"(?:attention|intermediate)\.LayerNorm", R.NORM, B.NORM, VECTOR),
        Rule(r"LayerNorm", R.NORM, B.NORM, VECTOR),
        Rule(E + r"attention\.attn\.q", R.Q_PROJ, S),
        Rule(E + r"attention\.attn\.k", R.K_PROJ, S),
        Rule(E + r"attention\.attn\.v", R.V_PROJ, S),
        Rule(E + r"attention\.attn\.o", R.O_PROJ, S),
        Rule(r"encoder\.relative_attention_bias", R.RELATIVE_BIAS, B.RELATIVE_POSITION_BIAS, ROWS),
        # ModernBERT: fused Wqkv, a GLU's fused Wi (gate and up), no attn_norm in layer 0
        Rule(r"embeddings\.tok_embeddings", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        Rule(r"embeddings\.norm", R.NORM, B.EMBEDDINGS, VECTOR),
        Rule(r"final_norm", R.NORM, B.NORM, VECTOR),
        Rule(NL + r"attn\.Wqkv", R.Q_PROJ, S, fused=(R.Q_PROJ, R.K_PROJ, R.V_PROJ)),
        Rule(NL + r"attn\.Wo", R.O_PROJ, S),
        Rule(NL + r"mlp\.Wi", R.FFN_GATE, B.FFN, fused=(R.FFN_GATE, R.FFN_UP)),
        Rule(NL + r"mlp\.Wo", R.FFN_DOWN, B.FFN),
        Rule(NL + r"(?:attn_norm|mlp_norm)", R.NORM, B.NORM, VECTOR),
        # NomicBERT's saved names (transformers conversion_mapping "nomic_bert": fc11 is up_proj,
        # fc12 gate_proj, norm1/norm2 the post-attention and post-MLP LayerNorms)
        Rule(r"emb_ln", R.NORM, B.EMBEDDINGS, VECTOR),
        Rule(NL + r"attn\.out_proj", R.O_PROJ, S),
        Rule(NL + r"mlp\.fc11", R.FFN_UP, B.FFN),
        Rule(NL + r"mlp\.fc12", R.FFN_GATE, B.FFN),
        Rule(NL + r"mlp\.fc2", R.FFN_DOWN, B.FFN),
        Rule(NL + r"norm[12]", R.NORM, B.NORM, VECTOR),
        # the masked-LM heads (catalog/task_heads.MASKED_LM): ALBERT's predictions.*, DistilBERT's
        # vocab_*, ELECTRA's generator_*; a tied decoder matrix is not saved, its V bias is
        Rule(r"(?:predictions|generator_predictions)\.dense|vocab_transform", R.HEAD_TRANSFORM, B.MLM_HEAD),
        Rule(r"(?:predictions|generator_predictions)\.LayerNorm|vocab_layer_norm", R.NORM, B.MLM_HEAD, VECTOR),
        Rule(r"predictions\.decoder|vocab_projector|generator_lm_head", R.LM_HEAD, B.MLM_HEAD),
        Rule(r"predictions", R.MLM_BIAS, B.MLM_HEAD, VECTOR),  # its leaf is "bias"
    )


def _wav2vec2_rules() -> tuple[Rule, ...]:
    """Wav2Vec2Model and HubertModel (transformers 5.x; ``wav2vec2.`` / ``hubert.`` before them in the
    task classes): the feature encoder's convolutions and norms, the feature projection,
    ``masked_spec_embed``, the position convolution (weight-normed: ``parametrizations.weight.original0``
    / ``original1`` as torch's parametrization saves them, ``weight_g`` / ``weight_v`` in older files;
    or HuBERT's BatchNorm1d, whose running statistics are buffers) and the BERT-shaped layers.  The
    front end's norms are in ``Block.OTHER``: neither the embedding norm nor the final norm, which
    ``encoder.layer_norm`` is (before the layers, or after them with do_stable_layer_norm)."""
    S, E = B.SELF_ATTENTION, B.EMBEDDINGS
    L = r"encoder\.layers\.{L}\."
    P = r"encoder\.pos_conv_embed\."
    return (
        # the feature encoder is one step of the count (P_fe, norms included): no layer index, one role
        Rule(r"feature_extractor\.conv_layers\.\d+\.(?:conv|layer_norm)", R.AUDIO_CONV, E, VECTOR),
        Rule(r"feature_projection\.layer_norm", R.NORM, B.OTHER, VECTOR),
        Rule(r"feature_projection\.projection", R.EMBEDDING_PROJECTION, E),
        Rule("", R.MASK_EMBEDDING, E, VECTOR, leaf="masked_spec_embed"),
        *(Rule(P + r"conv\.parametrizations\.weight", R.CONV, E, VECTOR, leaf=f"original{i}") for i in (0, 1)),
        *(Rule(P + r"conv", R.CONV, E, VECTOR, leaf=leaf) for leaf in ("weight_g", "weight_v")),
        Rule(P + r"conv", R.CONV, E, VECTOR),
        *(
            Rule(P + r"batch_norm", None, None, buffer=True, leaf=leaf)
            for leaf in ("running_mean", "running_var", "num_batches_tracked")
        ),
        Rule(P + r"batch_norm", R.NORM, B.OTHER, VECTOR),
        Rule(r"encoder\.layer_norm", R.NORM, B.NORM, VECTOR),
        Rule(L + r"attention\.q_proj", R.Q_PROJ, S),
        Rule(L + r"attention\.k_proj", R.K_PROJ, S),
        Rule(L + r"attention\.v_proj", R.V_PROJ, S),
        Rule(L + r"attention\.out_proj", R.O_PROJ, S),
        Rule(L + r"(?:layer_norm|final_layer_norm)", R.NORM, B.NORM, VECTOR),
        Rule(L + r"feed_forward\.intermediate_dense", R.FFN_UP, B.FFN),
        Rule(L + r"feed_forward\.output_dense", R.FFN_DOWN, B.FFN),
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
        # LongT5's encoder names its self-attention LocalSelfAttention or TransientGlobalSelfAttention
        A = r"0\.(?:SelfAttention|LocalSelfAttention|TransientGlobalSelfAttention)\."
        rules += [
            Rule(P + A + r"q", R.Q_PROJ, self_att, stack=st),
            Rule(P + A + r"k", R.K_PROJ, self_att, stack=st),
            Rule(P + A + r"v", R.V_PROJ, self_att, stack=st),
            Rule(P + A + r"o", R.O_PROJ, self_att, stack=st),
            Rule(
                P + A + r"(?:global_)?relative_attention_bias",
                R.RELATIVE_BIAS,
                B.RELATIVE_POSITION_BIAS,
                ROWS,
                stack=st,
            ),
            Rule(P + r"\d\.layer_norm", R.NORM, B.NORM, VECTOR, stack=st),
            Rule(P + A + r"global_input_layer_norm", R.NORM, B.NORM, VECTOR, stack=st),
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
            # LED's encoder: Longformer self-attention (the global tokens' own maps too) and its output map
            Rule(P + r"self_attn\.longformer_self_attn\.(?:query|query_global)", R.Q_PROJ, self_att, stack=st),
            Rule(P + r"self_attn\.longformer_self_attn\.(?:key|key_global)", R.K_PROJ, self_att, stack=st),
            Rule(P + r"self_attn\.longformer_self_attn\.(?:value|value_global)", R.V_PROJ, self_att, stack=st),
            Rule(P + r"self_attn\.output", R.O_PROJ, self_att, stack=st),
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
            # MBart, Pegasus, Whisper: the stack's final norm; Whisper's audio front end
            Rule(stack + r"\.layer_norm", R.NORM, B.NORM, VECTOR, stack=st),
            Rule(stack + r"\.conv[12]", R.AUDIO_CONV, B.EMBEDDINGS, VECTOR, stack=st),
        ]
    return rules


def _bart_rules() -> tuple[Rule, ...]:
    return (
        Rule(r"shared", R.TOKEN_EMBEDDING, B.EMBEDDINGS, ROWS),
        *_bart_like(("encoder", "decoder")),
        Rule(r"(?:lm_head|proj_out)", R.LM_HEAD, B.LM_HEAD),  # Whisper's head is proj_out
        Rule(r"", None, None, buffer=True),  # final_logits_bias, a registered buffer at the top level
    )


def _opt_rules() -> tuple[Rule, ...]:
    # OPT has one stack, called "decoder": no stack tag (a decoder-only model).
    return tuple(
        Rule(r.pattern, r.role, r.block, r.layout, None, r.fused, r.part, r.buffer, False)
        for r in _bart_like(("decoder",))
    ) + (
        Rule(r"lm_head", R.LM_HEAD, B.LM_HEAD),
        # word_embed_proj_dim != hidden_size: E_emb -> d_model in, d_model -> E_emb before the head
        Rule(r"decoder\.project_in", R.EMBEDDING_PROJECTION, B.EMBEDDINGS),
        Rule(r"decoder\.project_out", R.OUTPUT_PROJECTION, B.LM_HEAD),
    )


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
    "wav2vec2": Family("wav2vec2", _wav2vec2_rules(), "encoder-only", norm_position="post"),
    "bart": Family("bart", _bart_rules(), "encoder-decoder", position_offset=2, norm_position="post"),
    "gpt_neox": Family("gpt_neox", _gpt_neox_rules(), "decoder-only", positional="rotary"),
    "bloom": Family("bloom", _bloom_rules(), "decoder-only"),
    "gpt_j_neo_mpt": Family("gpt_j_neo_mpt", _gpt_j_neo_mpt_rules(), "decoder-only"),
    "dual": Family("dual", _dual_rules(), "encoder-only"),
}

# config.json model_type -> naming family: every type symtrans counts (hf_config.SUPPORTED)
# names its family here; tests/test_inspect_every_type.py fails for a type that has none.
MODEL_TYPES = {
    **dict.fromkeys(
        "llama mistral mixtral qwen2 qwen3 gemma qwen2_moe qwen3_moe granite phi3 starcoder2 gemma2 "
        "gemma3_text olmo olmo2 cohere stablelm phi deepseek_v2 deepseek_v3 gpt_oss llama4_text ministral "
        "helium arcee seed_oss ernie4_5 glm glm4 nemotron mamba falcon_mamba mamba2 jamba qwen3_next lfm2 "
        "llava qwen2_vl smollm3 olmo3 exaone4 gemma3 apertus cohere2 dots1 glm4_moe hunyuan_v1_dense minimax_m2 "
        "ministral3 olmoe llava_next mistral3 ernie4_5_moe granitemoe granitemoeshared hunyuan_v1_moe phimoe "
        "bamba qwen2_5_vl qwen3_5_text glm4_moe_lite granitemoehybrid qwen3_vl qwen3_5_moe_text qwen3_5 "
        "qwen3_5_moe nemotron_h paligemma idefics3 smolvlm deepseek_v32 glm_moe_dsa mistral4 llama4 falcon_h1 "
        "qwen3_vl_moe kimi_k25 gemma4_text gemma4 deepseek_v4 zamba2".split(),
        "llama",
    ),
    **dict.fromkeys("gpt2 gpt_bigcode".split(), "gpt2"),
    **dict.fromkeys(
        "bert roberta xlm-roberta albert distilbert electra deberta-v2 vit camembert roberta-prelayernorm mpnet "
        "modernbert nomic_bert".split(),
        "bert",
    ),
    **dict.fromkeys("t5 mt5 umt5 longt5".split(), "t5"),
    **dict.fromkeys("bart mbart pegasus marian whisper led".split(), "bart"),
    "opt": "opt",
    **dict.fromkeys("wav2vec2 hubert".split(), "wav2vec2"),
    "gpt_neox": "gpt_neox",
    **dict.fromkeys("bloom falcon".split(), "bloom"),
    **dict.fromkeys("gpt_neo gptj mpt dbrx".split(), "gpt_j_neo_mpt"),
    **dict.fromkeys("clip siglip siglip2".split(), "dual"),
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

_PREFIX = (
    r"(?:(?:model|transformer|bert|roberta|base_model\.model|_orig_mod|module|language_model|text_model|gpt_neox"
    r"|backbone|distilbert|albert|electra|deberta|vit|wav2vec2|hubert|led)\.)*"
)


@dataclass(frozen=True, slots=True)
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
# A family compiled: its module-path table, and its full-name table of ``Rule.leaf`` rules
# with the leaves they name (None when the family has no such rule).
_Compiled = tuple[_Table, tuple[_Table, frozenset[str]] | None]
_COMPILED: dict[tuple[str, int], _Compiled] = {}


def _compiled(family: str, rules: tuple[Rule, ...]) -> _Compiled:
    key = (family, len(rules))  # a family's table never changes (the GGUF one is built once)
    if key not in _COMPILED:
        by_leaf = tuple(r for r in rules if r.leaf is not None)
        leaves = (_compile(by_leaf), frozenset(r.leaf for r in by_leaf)) if by_leaf else None
        _COMPILED[key] = (_compile(tuple(r for r in rules if r.leaf is None)), leaves)
    return _COMPILED[key]


def _compile(rules: tuple[Rule, ...]) -> _Table:
    """One regex for a whole table: the alternatives ``(?P<r{i}>...)`` in table order.

    ``fullmatch`` backtracks through the alternatives left to right, so the alternative
    that matches is the first rule of the table that matches the whole module path (what
    trying the rules one by one gave), in one call: a 90,000-tensor header took 4.8 M
    Python-level ``fullmatch`` calls.  Group names carry the rule's index (``layer_3``),
    as a regex cannot repeat a name; ``lastindex`` is the matched alternative's outer
    group (it closes last), looked up by number (``groupdict`` cost as much as the match).
    A ``Rule.leaf`` rule's alternative ends in ``.<leaf>``: it is matched against the
    whole tensor name.
    """
    alternatives = []
    for i, r in enumerate(rules):
        body = r.pattern.replace("{L}", rf"(?P<layer_{i}>\d+)").replace("{E}", rf"(?P<expert_{i}>\d+)")
        if r.leaf is not None:
            body += (r"\." if body else "") + re.escape(r.leaf)
        alternatives.append(rf"(?P<r{i}>{body})")
    # The optional wrapper prefixes once, before the alternatives (not inside each): a name
    # that no rule matches is rejected 2.4 times faster (200,000 such names took 9.5 s).
    pattern = re.compile(_PREFIX + "(?:" + "|".join(alternatives) + ")")  # used with fullmatch: no anchor
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
    (pattern, alternatives), by_leaf = _compiled(family.name, family.rules)
    m = None
    if by_leaf is not None and leaf in by_leaf[1]:  # a full-name rule first (ViT's embeddings.cls_token)
        (pattern_leaf, alternatives_leaf), _ = by_leaf
        m = pattern_leaf.fullmatch(name)
        if m is not None:
            alternatives = alternatives_leaf
    if m is None:
        m = pattern.fullmatch(module)
    if m is None:
        return Match(None, module, leaf, None, None)
    rule, li, ei = alternatives[m.lastindex]
    layer = m.group(li) if li else None
    expert = m.group(ei) if ei else None
    return Match(
        rule, module, leaf, int(layer) if layer is not None else None, int(expert) if expert is not None else None
    )


# Names a family's table is first tried on (evenly spaced): a header of 200,000 tensors
# (formats.MAX_TENSORS) that no table names took 9 full passes, 16 s.
_SAMPLE = 512


def best_family(names: list[str], matched: dict[str, list[Match]] | None = None) -> Family:
    """The HF naming family whose table matches the most of ``names``.

    Families are tried in order (llama first, the most common), each on an evenly spaced
    sample of ``_SAMPLE`` names first; one that names at least 95% of the sample is matched
    against every name, and taken when it names at least 95% of them, so a usual checkpoint
    compiles one table and an unknown one costs a sample per table.  Otherwise the family
    that names most of the sample is taken.  ``matched``, when given, receives {family
    name: the matches of ``names``} for the family taken at once, so ``inventory.classify``
    need not match every name again (half of the naming time of a 90,000-tensor header).
    """
    sample = names[:: max(1, len(names) // _SAMPLE)]
    scores = {}
    for key, fam in FAMILIES.items():
        scores[key] = sum(1 for n in sample if match(n, fam).rule is not None)
        if scores[key] < 0.95 * len(sample):
            continue
        found = [match(n, fam) for n in names]
        if sum(1 for m in found if m.rule is not None) >= 0.95 * len(names):
            if matched is not None:
                matched[fam.name] = found
            return fam
    best = max(scores, key=lambda k: (scores[k], k == "llama"))
    return FAMILIES[best]
