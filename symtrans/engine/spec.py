"""Spec: an architecture's options plus the numbers for its symbols, validated.

A Spec has two halves:

* options (``family``, ``bias``, ``norm``, ``ffn``, ``positional``, tying, ...), which
  decide the *shape* of the closed form;
* ``sizes``, the integer values of the symbols (``d_model``, ``d_ff``, ``h``, ``N``,
  ``V``, ``L`` and, where present, ``d_k``, ``h_kv``, ``E``, ``k``, ``N_enc``, ...).
  Which optional sizes are present is structural too: a Spec with ``h_kv`` has
  grouped-query attention in its formula, one without it uses ``h``; one without
  ``d_k`` uses ``d_model/h``.

Every option name is also a ``--set`` key.  Construction validates everything and
raises ``ValueError`` with one sentence that names the field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

from symtrans.base.errors import InputError
from symtrans.engine import audio_rules, long_rules, mixer_rules
from symtrans.engine.legend import LEGEND as SYMBOLS

FAMILIES = ("encoder-decoder", "encoder-only", "decoder-only")
NORMS = ("layernorm", "rmsnorm", "none")
POSITIONALS = ("sinusoidal", "learned", "none", "rotary", "alibi", "relative", "transformer-xl", "sinusoidal-table")
FFNS = ("mlp", "swiglu", "geglu", "reglu")
NORM_POSITIONS = ("post", "pre")
SHARE_LAYERS = ("none", "all", "attention", "ffn")
# --- decoder types (types-dec): norm layouts and QK-norm kinds
LAYER_NORMS = ("sublayer", "sandwich", "shared")
QK_NORMS = ("none", "head", "per_head", "full", "l2")
# Options that also accept a boolean (an older spelling): the value each boolean means.
BOOL_SPELLINGS: dict[str, dict[bool, str]] = {"qk_norm": {False: "none", True: "head"}}
# --- types-moe: whether every layer attends alike (one window w or none) or the layers differ
ATTENTION_PATTERNS = ("uniform", "per-layer")
# Sizes of multi-head latent attention (DeepSeek-V2 §2.1); r_q is optional (no query compression).
MLA_SIZES = ("r_kv", "d_nope", "d_rope", "d_v")
# --- encoders (types-enc)
EMBEDDING_PROJECTIONS = ("albert", "deberta")
DISENTANGLED = ("none", "c2p", "p2c", "c2p|p2c")
# T5-style bucketed relative attention bias: ``auto`` (once per stack when positional is
# ``relative``, T5), ``stack`` (once per stack whatever the positions: MPNet beside its learned
# table), ``layer`` (one in every self-attention layer: UMT5).
RELATIVE_BIASES = ("auto", "stack", "layer")
# What the first stack reads: token ids through an embedding table, image patches (ViT's Conv2d
# patch embedding), or mel frames (Whisper's two Conv1d layers).
FRONTENDS = ("tokens", "patch", "conv1d", "wav2vec2")
# --- layer kinds (issue 20): the token mixers a stack's layers may use, one registered class
# each (``symtrans.engine.kinds``; tests/test_layer_kinds.py checks this list against the
# registry).  ``Spec.mixers`` names the kinds of a stack, joined by "|"; their rules live in
# ``engine/mixer_rules.py``.
MIXER_KINDS = mixer_rules.MIXER_KINDS
MIXER_COUNTS = mixer_rules.MIXER_COUNTS
ATTENTION_KINDS = mixer_rules.ATTENTION_KINDS
mixer_kinds = mixer_rules.mixer_kinds

# Sizes that every model needs, per family.
_REQUIRED = {
    "encoder-decoder": ("d_model", "d_ff", "h", "V"),
    "encoder-only": ("d_model", "d_ff", "h", "V"),
    "decoder-only": ("d_model", "d_ff", "h", "V"),
}
# Sizes that describe the model (as opposed to a workload such as B or L_src).
MODEL_SIZES = (
    "d_model",
    "d_ff",
    "h",
    "h_kv",
    "d_k",
    "d_v",
    "N",
    "N_enc",
    "N_dec",
    "V",
    "L_max",
    "E",
    "k",
    "E_emb",
    "r",
    "w",
    "N_w",
    "b_loc",
    "b_glob",
    "w_att",
    # --- mixture of experts and multi-head latent attention (types-moe)
    "d_ff_e",
    "d_ff_s",
    "N_moe",
    "r_q",
    "r_kv",
    "d_nope",
    "d_rope",
    "L_rel",
    # --- seq2seq and front ends
    "h_dec",
    "d_ff_dec",
    "V_dec",
    "L_src_max",
    "L_tgt_max",
    "C_in",
    "p",
    "d_pool",
    *audio_rules.WAV2VEC2_SIZES,
    # --- vision-language wrappers (engine/vision.py)
    "d_vis",
    "d_ff_vis",
    "N_vis",
    "C_vis",
    "p_vis",
    "P_vis",
    "t_vis",
    "m_vis",
    "h_vis",
    "h_kv_vis",
    "d_k_vis",
    "d_aud",
    "N_aud",
    "h_aud",
    "K_aud",
    "d_out_aud",
    "c1_aud",
    "c2_aud",
    "n_feat",
    "d_proj",
    "n_ds",
    "d_ad_in",
    "d_ad_out",
    "d_vout",
    # --- layer kinds (issue 20, ``symtrans.engine.kinds``)
    "N_attn",
    "N_ssm",
    "N_lin",
    "N_conv",
    "N_mlp",
    "N_par",
    "d_inner",
    "d_state",
    "d_conv",
    "dt_rank",
    "h_ssm",
    "g_ssm",
    "h_lk",
    "h_lv",
    "d_lk",
    "d_lv",
    "L_chunk",
    # --- DeepSeek Sparse Attention (engine/dsa.py)
    "N_dsa",
    "h_idx",
    "d_idx",
    "k_idx",
    # --- Gemma 4 (engine/gemma4.py)
    *mixer_rules.GEMMA4_SIZES,
    # --- DeepSeek-V4 (engine/deepseek_v4.py)
    "N_csa",
    "N_hca",
    "m_csa",
    "m_hca",
    "n_hc",
    "g_o",
    "r_o",
    # --- Zamba2's shared blocks (engine/zamba2.py)
    "N_hyb",
    "N_mem",
    "N_adp",
    "r_adp",
)
# The vision towers of vision-language wrappers, and the sizes each needs (engine/vision.py).
VISIONS = (
    "none",
    "clip",
    "qwen2_vl",
    "gemma3",
    "mistral3",
    "qwen2_5_vl",
    "qwen3_vl",
    "llama4",
    "kimi_k25",
    "gemma4",
    "clip_dual",
    "siglip_dual",
    "siglip2_dual",
    "paligemma",
    "idefics3",
)
VISION_SIZES = {
    "clip": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "n_feat"),
    "qwen2_vl": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "t_vis", "m_vis"),
    "gemma3": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis"),
    "mistral3": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "m_vis", "n_feat"),
    "qwen2_5_vl": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "t_vis", "m_vis"),
    "qwen3_vl": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "t_vis", "m_vis"),
    "llama4": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "d_ad_in", "d_ad_out", "d_vout"),
    # dual encoders (engine/dual.py): the image tower beside an encoder-only text tower, both
    # mapped into a joint space d_proj wide
    "clip_dual": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "d_proj"),
    "siglip_dual": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "d_proj"),
    "siglip2_dual": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "d_proj"),
    "paligemma": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis"),
    "idefics3": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "m_vis"),
    "kimi_k25": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "m_vis"),
    # Gemma 4's tower (engine/vision.gemma4_tower): heads of their own width, m_vis the pooling side
    "gemma4": ("d_vis", "d_ff_vis", "N_vis", "C_vis", "p_vis", "P_vis", "m_vis", "h_vis", "h_kv_vis", "d_k_vis"),
}
_OPTIONAL_VISION_SIZES = {
    "clip": (),
    "qwen2_vl": ("d_proj",),
    "gemma3": (),
    "mistral3": (),
    "qwen2_5_vl": ("d_proj",),
    "qwen3_vl": ("d_proj", "n_ds"),  # n_ds absent: no DeepStack mergers (deepstack_visual_indexes [])
    "llama4": (),
    "paligemma": ("d_proj",),
    "idefics3": (),
    "kimi_k25": (),
    # Gemma 4's audio tower (engine/vision.gemma4_audio), where audio_config is set
    "gemma4": ("d_aud", "N_aud", "h_aud", "K_aud", "d_out_aud", "c1_aud", "c2_aud"),
}
# Towers that are SigLIP's (engine/vision.siglip_tower) with its optional attention-pooling
# head: the only ones with a ``vision_head`` (Idefics3's SigLIP-shaped tower has none).
_SIGLIP_VISIONS = ("gemma3", "siglip_dual", "siglip2_dual", "paligemma")
# Dual encoders: their text tower is an encoder-only stack (engine/dual.py), not a decoder.
DUAL_VISIONS = ("clip_dual", "siglip_dual", "siglip2_dual")
# The decoder's own sizes of an encoder-decoder, where they differ from the encoder's: each
# replaces its encoder symbol in the decoder's embeddings, stack and LM head.
DECODER_SIZES = {"h_dec": "h", "d_ff_dec": "d_ff", "V_dec": "V", "L_tgt_max": "L_max"}
# Sizes that describe a workload.  A Spec may carry L (its default sequence length, see
# resolve.default_seq_len) and, for an encoder-decoder, L_src and L_tgt as defaults
# (``flops``, ``memory``, ``solve`` and ``sweep`` use them); the others belong
# to an option of the command (or an argument in Python), so a Spec refuses them rather
# than carry a value that every command would silently replace (``--set B=8`` with B = 1).
WORKLOAD_SIZES = ("B", "L", "L_src", "L_tgt", "L_pre", "T_gen", "D")
WORKLOAD_OPTIONS = {
    "B": "the batch size: give it with --batch (batch= in Python)",
    "L_pre": "the prompt length of prefill and decode: give it with --prefill (flops, time)",
    "T_gen": "the number of generated tokens: give it with --generate (flops, time)",
    "D": "the number of training tokens: give it with --tokens (flops, time)",
    "N_d": "the number of data-parallel ranks: give it with --dp (memory)",
    "t": "the summation index of decode (1..T_gen)",
}


@dataclass(frozen=True)
class Spec:
    """An architecture and its sizes.

    Options (all are ``--set`` keys):
        family: ``encoder-decoder`` | ``encoder-only`` | ``decoder-only``.
        bias: all linear biases; ``attention_bias`` (Q, K, V and output),
            ``qkv_bias``, ``out_bias`` and ``ffn_bias`` override it when not None.
        norm: ``layernorm`` | ``rmsnorm`` | ``none``; ``norm_bias`` is LayerNorm's β.
        norm_position: ``post`` (Vaswani 2017, BERT) or ``pre`` (GPT-2, Llama); it
            changes no count, only the order of the shape walk.
        final_norm: a norm after the last layer of every stack.
        embedding_norm: a norm after the embeddings of every stack (BERT, BART).
        positional: ``sinusoidal`` | ``learned`` | ``none`` | ``rotary`` | ``alibi`` |
            ``relative`` (T5's bucketed bias, ``relative_buckets`` x h per stack) |
            ``transformer-xl`` (Dai et al. 2019: per layer W_R d_model x h*d_k and the
            u, v biases, h*d_k each; used by Chinchilla/Gopher).
        position_offset: extra learned position rows (BART and OPT keep 2).
        tie_output: the LM head shares the (decoder) token embedding.
        head_bias: the LM head has a V-vector bias.
        share_embeddings: encoder and decoder inputs share one V x d_model matrix.
        token_types: rows of the token-type (segment) embedding; 0 means none.
        pooler, mlm_head: BERT's pooler (d_model x d_model + bias, on the first
            token) and masked-LM head (dense + norm + tied decoder + V bias);
            encoder-only models only (elsewhere construction raises ValueError).
        pooler_bias: the pooler's d_model bias (hand counts often drop it).
        lm_head: whether the model has an LM head at all (decoder-only and
            encoder-decoder default True).
        ffn: ``mlp`` (two maps) | ``swiglu`` | ``geglu`` | ``reglu`` (three maps: gate, up and
            down, the gate through SiLU, GELU or ReLU; Shazeer 2020).
        qk_norm: norms on the queries and keys after their projections: ``none`` |
            ``head`` (one norm of width d_k shared by all heads: Qwen3, Gemma-3, Phi's
            LayerNorm) | ``per_head`` (a width-d_k norm of its own per head: h + h_kv
            norms, StableLM, Cohere) | ``full`` (one norm over all h*d_k query and
            h_kv*d_k key features: OLMo-2) | ``l2`` (no weights: Llama 4).  ``true`` and
            ``false`` are read as ``head`` and ``none``.  The norm is ``norm``'s kind
            (RMSNorm when ``norm`` is none); ``qk_norm_bias`` overrides ``norm_bias``.
        n_shared_experts: dense experts every MoE layer always runs (DeepSeekMoE).
        moe_first_dense, moe_every: of N layers, the first ``moe_first_dense`` are
            dense and then every ``moe_every``-th is a MoE layer.  These three need
            E (a spec without experts that sets one raises ValueError), and the
            layout must leave at least one MoE layer (moe_first_dense + moe_every <= N).
            The layout applies to decoder layers (an encoder's are all MoE layers; an
            encoder-only model refuses it).
        share_layers: ALBERT's cross-layer sharing (Lan et al. 2020 §3.1): ``none``,
            ``all`` (one layer's weights serve all N), ``attention`` or ``ffn`` (only
            that sublayer is shared).  Parameters stop scaling with N; FLOPs do not.
        global_tokens: Longformer's global tokens (Beltagy et al. 2020 §3.1) on top
            of a bidirectional local window ``w``; 0 means none; at most the tokens of
            a sequence (L, or L_src for an encoder-decoder; checked again at every
            workload by ``check_sizes(..., workload=True)``).
        window_mask: a bidirectional window ``w`` is a mask on the whole score matrix, as
            ModernBERT's eager attention applies it (transformers'
            ``create_bidirectional_sliding_window_mask``, |i − j| <= w // 2): ``--mask full``
            counts the square and ``--mask window`` the band.  False: a banded kernel
            (Longformer's sliding chunks) counts the band under every mask.
        layer_norms: the norms of a layer: ``sublayer`` (one per sublayer, before
            or after it by ``norm_position``), ``sandwich`` (one before and one after
            each sublayer: Gemma-2/3, four per decoder layer) or ``shared`` (one norm
            feeding both branches of a ``parallel_block``: GPT-J, Phi, Cohere).
        parallel_block: attention and FFN read the same layer input and their outputs
            are added to it together, x + Attn(norm(x)) + FFN(norm'(x)) (GPT-J, GPT-NeoX
            ``use_parallel_residual``, Falcon ``parallel_attn``; Wang & Komatsuzaki 2021).
            No count changes (the same maps run on as many tokens); pre-norm only, and
            not in an encoder-decoder.
        qk_norm_bias: LayerNorm β in the QK norms; None follows ``norm_bias``.
        shared_expert_gate: a sigmoid gate Linear(d_model, 1), no bias, scales the shared
            expert's output in every MoE layer (Qwen2-MoE ``shared_expert_gate``); needs
            n_shared_experts >= 1.
        router_bias: the router has an E-vector bias (gpt-oss ``GptOssTopKRouter.bias``).
        expert_bias: whether the routed experts' maps have biases (gpt-oss ``gate_up_proj_bias``,
            ``down_proj_bias``: true; DeepSeek-V2 with mlp_bias: false); None follows ``ffn_bias``.
        mla: multi-head latent attention (DeepSeek-V2 §2.1, ``symtrans.engine.mla``): needs
            sizes r_kv, d_nope, d_rope, d_v (r_q optional); h_kv and d_k do not apply.
        sinks: attention sinks (gpt-oss): one learned logit per head and layer (h
            parameters) joins every query's softmax.
        attention_pattern: ``uniform`` (every layer attends alike: fully, or in the window
            w) or ``per-layer`` (some layers use a sliding window or chunks and others not,
            e.g. gpt-oss's alternating layers): parameters are exact, but FLOPs, the KV
            cache and time refuse a ``per-layer`` spec (``check_workload``).
    MoE sizes: ``d_ff_e`` (a routed expert's width when it differs from the dense layers'
    d_ff), ``d_ff_s`` (the shared expert's width; default d_ff_e, else d_ff), ``N_moe``
    (how many of the N layers are MoE layers, from a config's list of them).
        k_bias: the key projection's bias; None means as the query and value maps
            (``qkv_bias``); Whisper's k_proj alone has none.
        idle_shared_embedding: an encoder-decoder whose inputs are untied
            (``share_embeddings`` false) also stores a V x d_model ``shared`` table that no
            forward pass reads (transformers' BART, mBART, Pegasus and Marian with
            ``tie_word_embeddings`` false); counted, as ``model.parameters()`` counts it.
        decoder_positional: the decoder's positions where they differ from the
            encoder's ``positional`` (Whisper: a sinusoidal table in the encoder, a learned
            one in the decoder); None means the same.
        frontend: ``tokens`` (an embedding table of V rows) | ``patch`` (ViT: a p x p
            Conv2d patch embedding of C_in channels, a CLS token and L_max = patches + 1
            learned positions; no vocabulary) | ``conv1d`` (Whisper's encoder: two width-3
            Conv1d layers over C_in mel bins, the second with stride 2) | ``wav2vec2`` (wav2vec 2.0 /
            HuBERT, no vocabulary: ``frontends.wav2vec2_front``; its sizes P_fe, C_in, K_pos, G_pos and
            options audio_feature_norm, audio_mask_embed, pos_conv_norm in ``engine/audio_rules.py``).
        vision: the image side of a vision-language wrapper beside its decoder-only language
            model (``engine/vision.py``): ``none`` | ``clip`` (LLaVA: a CLIP vision tower and a
            two-layer projector) | ``qwen2_vl`` (Qwen2-VL: a ViT with a 3-D patch embedding
            and a patch merger) | ``gemma3`` (Gemma 3: a SigLIP ViT and an RMSNorm + linear
            projector) | ``mistral3`` (Mistral 3: a Pixtral ViT, a patch merger and a two-layer
            projector) | ``qwen2_5_vl`` (Qwen2.5-VL: Qwen2-VL's layout with RMSNorms and a
            biased SwiGLU MLP) | ``qwen3_vl`` (Qwen3-VL: biased Conv3d, a learned position
            grid of P_vis rows, Qwen2-VL's blocks, a merger and n_ds DeepStack mergers;
            Qwen3.5's tower is it without n_ds) | ``llama4`` (Llama 4: a CLIP-like ViT with a
            bias-free unfold patch map, a pixel-shuffle adapter MLP and a bias-free projector) |
            ``paligemma`` (PaliGemma: a SigLIP ViT and
            one biased linear projector) | ``idefics3`` (Idefics3 and SmolVLM: a SigLIP-shaped
            ViT without head and a pixel-shuffle connector, m_vis^2 d_vis -> d_model) |
            ``clip_dual`` / ``siglip_dual`` / ``siglip2_dual`` (CLIPModel / SiglipModel /
            Siglip2Model: a dual encoder, the image
            tower beside an encoder-only text tower, each mapped into a d_proj-wide joint
            space, and the logits' learned scale; ``engine/dual.py``).  Its parameters are in
            the total; the text-only figure leaves out the ``Block.VISION_TOWER`` and
            ``Block.PROJECTOR`` subtrees (and a dual encoder's ``Block.CONTRASTIVE``, which is
            neither tower's).
        projector_bias: LLaVA's (Mistral 3's) projector maps have biases (``multimodal_projector_bias``).
        vision_head: a SigLIP tower keeps its attention-pooling head (``vision_use_head``).
        image_newline: LLaVA-NeXT's learned d_model vector appended after each row of image
            features (``LlavaNextModel.image_newline``); with ``vision`` ``clip`` only.
    Layer kinds (issue 20; ``symtrans.engine.kinds``):
        mixers: the token mixers of a decoder-only stack, joined by ``|``, from
            ``MIXER_KINDS``: ``attention`` (the default), ``mamba`` (Gu & Dao 2023),
            ``mamba2`` (Dao & Gu 2024), ``gated_deltanet`` (Yang et al. 2024, as in
            Qwen3-Next), ``short_conv`` (LFM2's gated short convolution), ``mlp`` and
            ``moe`` (a layer of one FFN or one mixture of experts and no token mixer:
            Nemotron-H's "-" and "E" layers, with ``mixer_only``; counts ``N_mlp``, ``N_moe``),
            ``attention_mamba2`` (attention and a Mamba 2 mixer side by side on the same normed
            input, their outputs summed: Falcon-H1; count ``N_par``).  Each kind
            after the first has a count symbol (``N_attn``, ``N_ssm``, ``N_lin``, ``N_conv``); the first kind has the rest, N minus them, so any
            ``layer_types`` pattern closes with one count per kind (which layers are of
            which kind changes no count, only how many).  Mamba layers need d_inner,
            d_state, d_conv and dt_rank (Mamba 1) or h_ssm, g_ssm (Mamba 2, with
            L_chunk for its chunked scan); Gated DeltaNet needs h_lk, h_lv, d_lk, d_lv,
            d_conv.  ``dsa`` (DeepSeek Sparse Attention, ``engine/dsa.py``) is multi-head
            latent attention with its lightning indexer (h_idx heads of d_idx, top k_idx
            keys; count symbol N_dsa); it needs mla and r_q.
        mixer_only: each layer is a norm and its mixer, without a feed-forward network
            (MambaForCausalLM, Mamba2ForCausalLM); d_ff and h are then not needed.
        ssm_bias: the Mamba in_proj and out_proj have biases (``use_bias``,
            ``mamba_proj_bias``); ssm_conv_bias: the mixer's conv1d has one
            (``use_conv_bias``, ``mamba_conv_bias``); for a short convolution, its
            in_proj, conv and out_proj all have one (LFM2's ``conv_bias``).
        ssm_out_bias: the Mamba 2 out_proj's bias where it differs from in_proj's (Falcon-H1's
            ``projectors_bias``); None: as ``ssm_bias``.
        ssm_gated_norm: the Mamba 2 mixer's gated RMSNorm (d_inner weights) is built (false:
            Falcon-H1's ``mamba_rms_norm`` off, an nn.Identity).
        ssm_inner_norms: Jamba's RMSNorms on dt (dt_rank), B and C (d_state each) inside
            every Mamba mixer (JambaMambaMixer dt/b/c_layernorm).
        attention_gate: the query projection also emits a sigmoid gate on the attention
            output, h*d_k more outputs (Qwen3-Next's Qwen3NextAttention q_proj).
        shared_attention_adapter: Zamba2's shared block also adapts W_Q, W_K and W_V at each use
            (LoRA of rank r_adp; ``use_shared_attention_adapter``; engine/zamba2.py).
        ffn_act_params: learned scalars inside each feed-forward network's activation:
            2 for xIELU (Huang et al. 2025; transformers' ``activations.XIELUActivation``
            holds alpha_p and alpha_n, one element each; Apertus's MLP), 0 for a fixed one.
        k_eq_v: Gemma 4's full-attention layers (``global_attention``) have no value projection:
            their keys serve as values (``attention_k_eq_v``); both are still cached.
        shared_ffn_double: the layers that reuse another layer's keys and values
            (``shared_attention``, ``shared_global_attention``) have an FFN 2 d_ff wide
            (Gemma 4 ``use_double_wide_mlp``).
    Gemma 4 (``engine/gemma4.py``): the kinds ``global_attention`` (count N_g; head width d_kg,
    h_kvg key/value heads), ``shared_attention`` (N_xs) and ``shared_global_attention`` (N_xg)
    beside the sliding-window ``attention`` layers; each layer has four norms, an FFN and, with E,
    a mixture of experts beside it; with d_ple and V_ple, per-layer inputs (a V_ple x N d_ple table
    and a d_model -> N d_ple map before the stack, a gate and a projection in every layer).
    Positions ``sinusoidal-table``: the sinusoids stored as a frozen (L_max x d_model)
    parameter (Pegasus, Marian, Whisper's encoder): counted, as ``model.parameters()``
    counts it.  An encoder-decoder may give its stacks their own table rows
    (``L_src_max``, ``L_tgt_max``) and its decoder its own ``h_dec``, ``d_ff_dec`` and
    ``V_dec`` (``DECODER_SIZES``).
    Variant sizes: ``E_emb`` (ALBERT's factorized embedding width), ``r`` (rank of a
    low-rank FFN), ``w`` (local / sliding-window attention); see ``variants.py``.

    Per-layer attention pattern (sizes ``w`` and ``N_w``): with ``w`` alone every
    self-attention layer attends within the window w (Mistral).  With ``N_w`` as well,
    ``N_w`` of the N decoder layers attend within w and the other N - N_w attend to the
    full context (Gemma-2 alternates, Gemma-3 has 5 sliding layers in 6, GPT-OSS and
    GPT-Neo alternate): the window reaches the attention FLOPs of those layers, the
    decode sum, the KV cache (a windowed layer keeps the last w positions, the others
    all of them) and the time estimates; parameters do not change.  Which layers are
    windowed does not matter to any count, only how many.  ``N_w`` needs ``w``, a
    decoder-only model and 0 < N_w <= N; in a mixture-of-experts stack of dense and MoE
    layers it is refused (the count of windowed layers of each kind would be needed).
        embedding_projection: with ``E_emb``, how the E_emb-wide embeddings reach d_model:
            ``albert`` (norm E_emb wide, then E_emb -> d_model with bias: ALBERT, ELECTRA's
            embeddings_project) or ``deberta`` (E_emb -> d_model without bias, then the norm
            d_model wide: DebertaV2Embeddings.embed_proj).
        disentangled: DeBERTa's disentangled attention terms (He et al. 2021 §3.1, HF
            ``pos_att_type``): ``none``, ``c2p`` (content-to-position), ``p2c``
            (position-to-content) or ``c2p|p2c``.  Needs ``L_rel``: the relative position
            table of 2*L_rel x d_model rows (DebertaV2Encoder.rel_embeddings), shared by the
            layers; each term adds a projection of the table per layer (pos_key_proj /
            pos_query_proj, d_model x h*d_k + bias) and a score product per layer.
        share_att_key: the relative table is projected by the layer's own W_Q and W_K
            (no pos_key_proj / pos_query_proj parameters; both projections still run).
        rel_norm: a LayerNorm over the relative table (DeBERTa's ``norm_rel_ebd``); without
            ``L_rel`` DebertaV2Encoder still creates it (2*d_model parameters, never run).
        encoder_attention: an encoder-decoder's encoder self-attention: ``full``, or LongT5's
            ``local`` blocks or ``transient-global`` (``engine/transient_global.py``: a global bias
            table and a global-input RMSNorm per layer), or LED's ``longformer`` (window ``w_att``).
        encoder_windows: LED's attention window of each encoder layer, joined by ``|``, when the
            layers' windows differ (``LEDEncoderLayer`` reads ``config.attention_window[layer_id]``);
            ``w_att`` is then the largest (``LEDEncoder._pad_to_window_size`` pads to a multiple of
            it) and every window must divide it.  Empty: every layer has ``w_att``.
        relative_bias: where a T5-style bucketed relative bias (relative_buckets x h) lives:
            ``auto`` (once per stack iff ``positional`` is ``relative``: T5, Raffel et al. 2020
            §2.1), ``stack`` (once per stack beside any positions: MPNet's
            ``MPNetEncoder.relative_attention_bias``, Song et al. 2020) or ``layer`` (its own
            table in every self-attention layer of every stack: UMT5, Chung et al. 2023,
            ``UMT5Attention`` built with ``has_relative_attention_bias`` in every layer).
        first_attention_norm: false for a pre-norm encoder whose first layer reads the
            normed embeddings without an attention norm of its own (ModernBERT,
            Warner et al. 2024: ``ModernBertEncoderLayer.attn_norm`` is ``nn.Identity`` in
            layer 0); encoder-only, pre-norm.
        conv_kernel, conv_groups: DeBERTa-v2's ConvLayer after the first layer (Conv1d
            d_model -> d_model, kernel conv_kernel, conv_groups groups, with bias, and a
            LayerNorm); 0 means none.
    ``L_rel``: DeBERTa's relative span (position_buckets, else max_relative_positions).
        token_projection: with ``E_emb``, only the token embedding (and the LM head tied to
            it) is E_emb wide, with a bias-free E_emb -> d_model map after the lookup and
            d_model -> E_emb after the last layer (OPT-350m's project_in / project_out);
            without it, E_emb factorizes every embedding as ALBERT does.
    ``N_w`` (with ``w``, below N): only N_w of the N decoder layers use the window, the
    others attend fully (GPT-Neo's alternating local and global layers).  Parameters do not
    depend on it; FLOPs, the KV cache and time do, and per-layer windows are not modelled
    yet, so every evaluation at a workload refuses such a spec (``check_sizes``).
    """

    family: str = "decoder-only"
    sizes: tuple[tuple[str, int], ...] = ()
    bias: bool = True
    attention_bias: bool | None = None
    qkv_bias: bool | None = None
    out_bias: bool | None = None
    ffn_bias: bool | None = None
    norm: str = "layernorm"
    norm_bias: bool = True
    norm_position: str = "post"
    final_norm: bool = False
    embedding_norm: bool = False
    positional: str = "sinusoidal"
    position_offset: int = 0
    relative_buckets: int = 32
    tie_output: bool = True
    head_bias: bool = False
    share_embeddings: bool = True
    token_types: int = 0
    pooler: bool = False
    pooler_bias: bool = True
    mlm_head: bool = False
    lm_head: bool = True
    ffn: str = "mlp"
    qk_norm: str = "none"
    n_shared_experts: int = 0
    moe_first_dense: int = 0
    moe_every: int = 1
    share_layers: str = "none"
    global_tokens: int = 0
    window_mask: bool = False
    # --- decoder types (types-dec)
    layer_norms: str = "sublayer"
    parallel_block: bool = False
    qk_norm_bias: bool | None = None
    # --- types-moe (issue 11): MoE details, multi-head latent attention, sinks, layer patterns
    shared_expert_gate: bool = False
    router_bias: bool = False
    expert_bias: bool | None = None
    mla: bool = False
    sinks: bool = False
    attention_pattern: str = "uniform"
    # --- encoders (types-enc)
    embedding_projection: str = "albert"
    disentangled: str = "none"
    share_att_key: bool = False
    rel_norm: bool = False
    relative_bias: str = "auto"
    encoder_attention: str = "full"
    encoder_windows: str = ""
    first_attention_norm: bool = True
    conv_kernel: int = 0
    conv_groups: int = 1
    token_projection: bool = False
    # --- seq2seq and front ends
    k_bias: bool | None = None
    idle_shared_embedding: bool = False
    decoder_positional: str | None = None
    frontend: str = "tokens"
    audio_feature_norm: bool = True
    audio_mask_embed: bool = False
    pos_conv_norm: str = "weight"
    vision: str = "none"
    projector_bias: bool = True
    vision_head: bool = False
    image_newline: bool = False
    # --- layer kinds (issue 20, ``symtrans.engine.kinds``)
    mixers: str = "attention"
    mixer_only: bool = False
    ssm_bias: bool = False
    ssm_conv_bias: bool = True
    ssm_inner_norms: bool = False
    ssm_out_bias: bool | None = None
    ssm_gated_norm: bool = True
    attention_gate: bool = False
    ffn_act_params: int = 0
    # --- Gemma 4 (engine/gemma4.py)
    k_eq_v: bool = False
    shared_ffn_double: bool = False
    shared_attention_adapter: bool = False

    def __post_init__(self) -> None:
        # Normalise sizes to a sorted tuple of (name, int) so equal specs hash equal.
        object.__setattr__(self, "sizes", tuple(sorted(dict(self.sizes).items())))
        for name, spelling in BOOL_SPELLINGS.items():  # qk_norm=True is qk_norm="head"
            value = getattr(self, name)
            if isinstance(value, bool):
                object.__setattr__(self, name, spelling[value])
        _validate(self)

    # -- sizes -------------------------------------------------------------
    @property
    def values(self) -> dict[str, int]:
        """The sizes as a dict name -> int."""
        return dict(self.sizes)

    def has(self, name: str) -> bool:
        return name in self.values

    def size(self, name: str) -> int:
        """The integer value of size ``name``.

        Raises:
            KeyError: if the spec does not set it.
        """
        return self.values[name]

    # -- resolved options ----------------------------------------------------
    @property
    def qkv_bias_on(self) -> bool:
        return _first(self.qkv_bias, self.attention_bias, self.bias)

    @property
    def out_bias_on(self) -> bool:
        return _first(self.out_bias, self.attention_bias, self.bias)

    @property
    def k_bias_on(self) -> bool:
        return _first(self.k_bias, self.qkv_bias, self.attention_bias, self.bias)

    @property
    def decoder_positions(self) -> str:
        """The decoder's positional kind (``decoder_positional``, else ``positional``)."""
        return self.positional if self.decoder_positional is None else self.decoder_positional

    @property
    def relative_bias_at(self) -> str | None:
        """Where the T5-style relative bias is stored: ``stack``, ``layer`` or None (none)."""
        if self.relative_bias == "auto":
            return "stack" if self.positional == "relative" else None
        return self.relative_bias

    @property
    def ffn_bias_on(self) -> bool:
        return _first(self.ffn_bias, self.bias)

    @property
    def is_moe(self) -> bool:
        return "E" in self.values

    def structure(self) -> "Spec":
        """The spec with every size value replaced by 1: equal for equal closed forms.

        Used as the cache key of built models (the closed form depends on which
        sizes are present, never on their values).
        """
        return _unchecked_replace(self, sizes=tuple((n, 1) for n, _ in self.sizes))

    def replace(self, **changes: Any) -> "Spec":
        """A copy with options changed and sizes merged (``sizes={...}`` adds/overrides).

        Raises:
            ValueError: if the result is invalid.
        """
        if "sizes" in changes:
            merged = self.values
            merged.update(dict(changes["sizes"]))
            changes["sizes"] = tuple(merged.items())
        return dataclasses.replace(self, **changes)

    def check_sizes(self, sizes: dict[str, int], workload: bool = False, v4_counted: bool = False) -> None:
        """Validate this spec's sizes with ``sizes`` merged in, without building a Spec.

        The same size checks as construction (``replace(sizes=sizes)`` would raise the
        same error); the options are not re-checked (they are unchanged).  Used by
        sweeps, which validate many size combinations against one set of options.

        With ``workload=True``, ``sizes`` may also hold the workload (B, L as the sequence
        length, L_pre, T_gen, ...): the option ranges that depend on it are checked too
        (``global_tokens`` <= the encoder's sequence length).  Every place that evaluates
        a count at a workload calls this (``workload_values``).

        Raises:
            ValueError: one sentence naming the size that is wrong.
        """
        merged = self.values
        merged.update(sizes)
        _validate_sizes(self, merged, workload)
        if workload:
            self.check_workload(v4_counted=v4_counted)

    def check_workload(self, memory: bool = False, v4_counted: bool = False) -> None:
        """Refuse to evaluate FLOPs, the KV cache or time of a ``per-layer`` attention pattern;
        with ``memory``, also the memory of an audio encoder (its feature encoder's activations).

        Raises:
            ValueError: one sentence, when ``attention_pattern`` is ``per-layer``.
        """
        if memory and self.frontend == "wav2vec2":
            raise InputError(audio_rules.MEMORY_REFUSAL)
        long_rules.check_workload(self, memory)
        if set(mixer_kinds(self)) & set(mixer_rules.V4_KINDS) and not v4_counted:
            raise InputError(mixer_rules.V4_WORKLOAD_REFUSAL)
        if self.attention_pattern != "uniform":
            raise InputError(
                "attention_pattern is per-layer: some layers attend through a sliding window or in chunks "
                "and others to every position, and symtrans does not yet model FLOPs, KV cache or time per "
                "kind of layer (parameters are exact); make every layer alike to count them"
            )


def _first(*vals: bool | None) -> bool:
    for v in vals:
        if v is not None:
            return bool(v)
    return False


def _unchecked_replace(spec: Spec, **changes: Any) -> Spec:
    new = object.__new__(Spec)
    for f in fields(Spec):
        object.__setattr__(new, f.name, changes.get(f.name, getattr(spec, f.name)))
    return new


OPTION_NAMES = tuple(f.name for f in fields(Spec) if f.name != "sizes")
OPTION_TYPES: dict[str, Any] = {
    "family": FAMILIES,
    "norm": NORMS,
    "positional": POSITIONALS,
    "ffn": FFNS,
    "norm_position": NORM_POSITIONS,
    "bias": bool,
    "attention_bias": bool,
    "qkv_bias": bool,
    "out_bias": bool,
    "ffn_bias": bool,
    "norm_bias": bool,
    "final_norm": bool,
    "embedding_norm": bool,
    "tie_output": bool,
    "head_bias": bool,
    "share_embeddings": bool,
    "pooler": bool,
    "pooler_bias": bool,
    "mlm_head": bool,
    "lm_head": bool,
    "qk_norm": QK_NORMS,
    "position_offset": int,
    "relative_buckets": int,
    "token_types": int,
    "n_shared_experts": int,
    "moe_first_dense": int,
    "moe_every": int,
    "share_layers": SHARE_LAYERS,
    "global_tokens": int,
    "window_mask": bool,
    # --- decoder types (types-dec)
    "layer_norms": LAYER_NORMS,
    "parallel_block": bool,
    "qk_norm_bias": bool,
    # --- types-moe
    "shared_expert_gate": bool,
    "router_bias": bool,
    "expert_bias": bool,
    "mla": bool,
    "sinks": bool,
    "attention_pattern": ATTENTION_PATTERNS,
    # --- encoders (types-enc)
    "embedding_projection": EMBEDDING_PROJECTIONS,
    "disentangled": DISENTANGLED,
    "share_att_key": bool,
    "rel_norm": bool,
    "relative_bias": RELATIVE_BIASES,
    "encoder_attention": long_rules.ENCODER_ATTENTIONS,
    "encoder_windows": str,
    "first_attention_norm": bool,
    "conv_kernel": int,
    "conv_groups": int,
    "token_projection": bool,
    # --- seq2seq and front ends
    "k_bias": bool,
    "idle_shared_embedding": bool,
    "decoder_positional": POSITIONALS,
    "frontend": FRONTENDS,
    "audio_feature_norm": bool,
    "audio_mask_embed": bool,
    "pos_conv_norm": audio_rules.POS_CONV_NORMS,
    "vision": VISIONS,
    "projector_bias": bool,
    "vision_head": bool,
    "image_newline": bool,
    # --- layer kinds (issue 20)
    "mixers": str,
    "mixer_only": bool,
    "ssm_bias": bool,
    "ssm_conv_bias": bool,
    "ssm_inner_norms": bool,
    "ssm_out_bias": bool,
    "ssm_gated_norm": bool,
    "attention_gate": bool,
    "ffn_act_params": int,
    # --- Gemma 4 (engine/gemma4.py)
    "k_eq_v": bool,
    "shared_ffn_double": bool,
    "shared_attention_adapter": bool,
}
_NONNEGATIVE_INTS = (
    "position_offset",
    "token_types",
    "n_shared_experts",
    "moe_first_dense",
    "global_tokens",
    "conv_kernel",
    "ffn_act_params",
)
_NULLABLE = (
    "attention_bias",
    "ssm_out_bias",
    "qkv_bias",
    "out_bias",
    "ffn_bias",
    "k_bias",
    "decoder_positional",
    "qk_norm_bias",
    "expert_bias",
)


def _validate(spec: Spec) -> None:
    for name in OPTION_TYPES:
        value = getattr(spec, name)
        kind = OPTION_TYPES[name]
        if isinstance(kind, tuple):
            if value is None and name in _NULLABLE:
                continue
            if value not in kind:
                raise InputError(f"{name} must be one of {', '.join(kind)}, not {value!r}")
        elif kind is bool:
            if not (isinstance(value, bool) or (value is None and name in _NULLABLE)):
                raise InputError(f"{name} must be true or false, not {value!r}")
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(f"{name} must be an integer, not {value!r}")
            if value < 0 or (name not in _NONNEGATIVE_INTS and value == 0):
                raise InputError(
                    f"{name} must be {'non-negative' if name in _NONNEGATIVE_INTS else 'positive'}, not {value}"
                )
    # Options that only an encoder-only model has: elsewhere they would change nothing.
    for name in ("pooler", "mlm_head"):
        if getattr(spec, name) and spec.family != "encoder-only":
            raise InputError(
                f"{name} applies to encoder-only models (BERT's heads), not to a {spec.family} model; set {name}=false"
            )
    # --- decoder types (types-dec)
    if spec.layer_norms == "shared" and not spec.parallel_block:
        raise InputError("layer_norms=shared is one norm feeding both branches of a parallel block: set parallel_block")
    if spec.parallel_block and spec.family == "encoder-decoder":
        raise InputError("parallel_block applies to one-stack models; an encoder-decoder layer has cross-attention too")
    if spec.parallel_block and spec.norm_position != "pre":
        raise InputError("parallel_block reads one normed input in both branches: set norm_position=pre")
    if spec.qk_norm_bias is not None and spec.qk_norm in ("none", "l2"):
        raise InputError(f"qk_norm_bias applies to QK norms with weights; qk_norm is {spec.qk_norm}")
    if not spec.first_attention_norm and (spec.family != "encoder-only" or spec.norm_position != "pre"):
        raise InputError(
            "first_attention_norm=false drops the first layer's attention norm of a pre-norm encoder (ModernBERT): "
            "set family=encoder-only and norm_position=pre"
        )
    _validate_moe_mla_options(spec)
    _validate_seq2seq_options(spec)
    mixer_rules.check_mixers(spec)
    _validate_sizes(spec, spec.values)


@dataclass(frozen=True)
class RowRule:
    """A size rule that relates the values of two sizes: ``a`` divides ``b``
    (``kind="divides"``) or ``a`` is at most ``b`` (``kind="at_most"``).

    It applies when every size of ``needs`` is present and none of ``unless``.
    ``holds(v)`` works on ints and, elementwise, on NumPy arrays alike; ``broken(v,
    buf)`` says whether any row of arrays breaks it, with one array operation into the
    int64 buffer ``buf`` (a sweep checks a million configurations this way).
    ``message(v)`` is the error for ints.
    """

    kind: str
    a: str
    b: str
    needs: tuple[str, ...]
    unless: tuple[str, ...]
    message: Any

    def applies(self, names) -> bool:
        return all(n in names for n in self.needs) and not any(n in names for n in self.unless)

    def holds(self, v):
        return v[self.b] % v[self.a] == 0 if self.kind == "divides" else v[self.a] <= v[self.b]

    def broken(self, v, buf) -> bool:
        import numpy as np

        if self.kind == "divides":
            return bool(np.remainder(v[self.b], v[self.a], out=buf).any())
        return bool(np.greater(v[self.a], v[self.b]).any())


ROW_RULES = (
    RowRule(
        "divides",
        "h",
        "d_model",
        ("d_model", "h"),
        ("d_k",),
        lambda v: f"h={v['h']} does not divide d_model={v['d_model']}; give d_k (head_dim) explicitly",
    ),
    RowRule("divides", "h_kv", "h", ("h", "h_kv"), (), lambda v: f"h={v['h']} is not divisible by h_kv={v['h_kv']}"),
    RowRule("at_most", "k", "E", ("E", "k"), (), lambda v: f"k={v['k']} experts per token exceeds E={v['E']} experts"),
)
_D_K_RULE, _H_KV_RULE, _K_E_RULE = ROW_RULES


def _check_row_rule(rule: RowRule, v: dict[str, int]) -> None:
    if rule.applies(v) and not rule.holds(v):
        raise InputError(rule.message(v))


def _validate_moe_mla_options(spec: Spec) -> None:
    """--- types-moe: the options of MoE details and MLA that need a kind of model."""
    if spec.shared_expert_gate and not spec.n_shared_experts:
        raise InputError("shared_expert_gate gates a shared expert: set n_shared_experts >= 1, or drop it")
    if spec.mla and spec.family != "decoder-only":
        raise InputError(
            f"mla (multi-head latent attention) applies to decoder-only models, not to a {spec.family} model"
        )
    if spec.sinks and spec.family != "decoder-only":
        raise InputError(f"sinks (attention sinks) apply to decoder-only models, not to a {spec.family} model")


def _validate_seq2seq_options(spec: Spec) -> None:
    """The options of the BART family, Whisper and ViT, each where it changes something."""
    if spec.family != "encoder-decoder":
        for name, off in (("idle_shared_embedding", False), ("decoder_positional", None)):
            if getattr(spec, name) != off:
                raise InputError(f"{name} applies to encoder-decoder models, not to a {spec.family} model")
    if spec.idle_shared_embedding and spec.share_embeddings:
        raise InputError(
            "idle_shared_embedding is the unused shared table of untied inputs; with share_embeddings=true "
            "the shared table is the one the model reads: drop idle_shared_embedding"
        )
    if spec.frontend == "patch":
        if spec.family != "encoder-only":
            raise InputError(f"frontend=patch is a vision encoder's (ViT); a {spec.family} model reads tokens")
        if spec.positional != "learned":
            raise InputError("frontend=patch needs positional=learned (ViT's (patches + 1) x d_model table)")
        if spec.mlm_head or spec.token_types:
            raise InputError("frontend=patch reads pixels: a model without a vocabulary has no MLM head or token types")
    audio_rules.check_options(spec)
    long_rules.check_options(spec)
    if spec.frontend == "conv1d":
        if spec.family != "encoder-decoder":
            raise InputError(f"frontend=conv1d is an audio encoder's (Whisper); a {spec.family} model reads tokens")
        if spec.share_embeddings or spec.idle_shared_embedding:
            raise InputError(
                "frontend=conv1d: the encoder reads mel frames, so no token table is shared with it: "
                "set share_embeddings=false"
            )


# The largest size a user may give, the home of the one limit: --set (``settings.parse_setting``),
# the workload options (``cli.arguments.size_arg``), the Python API (``user_size``) and every size
# in a config.json (``catalog.reader.MAX_SIZE``).  A config.json's depth has its own, lower limit
# (``catalog.reader.MAX_LAYERS``: reading it builds each layer's entry; --set N builds none).
MAX_USER_SIZE = 2**53


def user_size(name: str, value: Any) -> int:
    """A size the user gave through the Python API, checked exactly as ``--set`` checks
    it: a positive integer of at most 2**53.  Python ints, SymPy Integers (``sp.Integer(2)``)
    and NumPy integers are accepted; bools, floats and strings are not.  The message never
    prints a huge number's digits (Python refuses to, past 4,300 digits).

    Raises:
        InputError: one line naming ``name``.
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) and not _is_sympy_integer(value):
        raise InputError(f"{name} must be a positive integer, not {type(value).__name__} {_short(value)}")
    value = int(value)
    if value <= 0:
        raise InputError(f"{name} must be a positive integer, not {_short(value)}")
    if value > MAX_USER_SIZE:
        raise InputError(f"{name} = {_short(value)} is implausibly large for a size (the limit is 2**53)")
    return value


def _is_sympy_integer(value: Any) -> bool:
    try:
        import sympy as sp
    except ImportError:  # pragma: no cover - SymPy is a dependency
        return False
    return isinstance(value, sp.Integer)


def _short(value: Any) -> str:
    """A value for a message: a huge integer by its digit count (str() of one past 4,300
    digits raises), anything else by its first 40 characters of repr."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"a number of about {int(value.bit_length() * 0.30103):,} digits"
    r = repr(value) if not isinstance(value, int) else str(value)
    return r if len(r) <= 40 else r[:40] + "..."


def _validate_sizes(spec: Spec, v: dict[str, int], workload: bool = False) -> None:
    """The checks of the sizes ``v`` (types, presence per family, divisibility, and the
    option ranges that depend on sizes) for ``spec``'s options.  ``workload``: ``v`` may
    hold workload sizes too (``Spec.check_sizes``)."""
    for name, value in v.items():
        if name not in SYMBOLS:
            raise InputError(f"unknown size {name!r}; known sizes: {', '.join(MODEL_SIZES + WORKLOAD_SIZES)}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(
                f"{name} must be a positive integer, not {type(value).__name__} {_short(value)}"
                + (
                    " (give int(...); the Python API's Model.set and model() convert it)"
                    if _is_sympy_integer(value)
                    else ""
                )
            )
        if value <= 0:
            raise InputError(f"{name} must be a positive integer, not {value}")
        if not workload and name in WORKLOAD_OPTIONS:
            raise InputError(f"{name} is not a size of the model but {WORKLOAD_OPTIONS[name]}")
        if not workload and name in ("L_src", "L_tgt") and spec.family != "encoder-decoder":
            raise InputError(
                f"{name} is a length of encoder-decoder models; this {spec.family} model reads L tokens: "
                "give --seq-len (or set L)"
            )
    for name in _REQUIRED[spec.family]:
        if name in mixer_rules.mixer_free(spec):  # a stack without attention or FFN (Mamba) has no h or d_ff
            continue
        if name == "V" and spec.frontend in ("patch", "wav2vec2"):
            if "V" in v:
                what = "pixels" if spec.frontend == "patch" else "a waveform"
                raise InputError(f"frontend={spec.frontend} reads {what}, not tokens: drop V (there is no vocabulary)")
            continue
        if name not in v:
            raise InputError(f"{spec.family} model needs size {name}")
    if spec.family == "encoder-decoder":
        if "N" not in v and not ("N_enc" in v and "N_dec" in v):
            raise InputError("encoder-decoder model needs N, or both N_enc and N_dec")
        if "N" in v and ("N_enc" in v or "N_dec" in v):
            raise InputError("give either N or N_enc and N_dec, not both")
    elif "N" not in v:
        raise InputError(f"{spec.family} model needs size N")
    if not spec.mla:  # MLA's heads have widths of their own (d_nope, d_rope, d_v)
        _check_row_rule(_D_K_RULE, v)
    _check_row_rule(_H_KV_RULE, v)
    if "k" in v and "E" not in v:
        raise InputError("k (experts per token) needs E (experts)")
    if "E" in v and "k" not in v:
        raise InputError("E (experts) needs k (experts per token)")
    _check_row_rule(_K_E_RULE, v)
    if "E" not in v:  # the MoE layout options describe MoE layers; without E they would change nothing
        for name, dense in (("n_shared_experts", 0), ("moe_first_dense", 0), ("moe_every", 1)):
            if getattr(spec, name) != dense:
                raise InputError(
                    f"{name} applies to mixture-of-experts models, and this one has no experts: "
                    f"give E and k as well, or drop {name}"
                )
    _validate_moe_mla_sizes(spec, v)
    _validate_stack_sizes(spec, v)
    if "N_w" in v:  # --- decoder types (types-dec): the per-layer attention pattern
        if "w" not in v:
            raise InputError("N_w (windowed layers) needs the window w")
        if spec.family == "encoder-decoder":
            raise InputError(
                "N_w (windowed layers) applies to decoder-only and encoder-only models, not to an encoder-decoder"
            )
        if spec.family == "encoder-only" and "N" in v and v["N_w"] >= v["N"]:
            raise InputError(f"N_w={v['N_w']} must be below N={v['N']} in an encoder (every layer windowed: w alone)")
        if spec.family == "encoder-only" and not spec.window_mask:
            raise InputError("N_w (windowed layers) in an encoder needs window_mask (a window masking the full square)")
        if "N" in v and v["N_w"] > v["N"]:
            raise InputError(f"N_w={v['N_w']} windowed layers exceed the N={v['N']} layers")
        if "E" in v and (spec.moe_first_dense or spec.moe_every != 1 or "N_moe" in v):
            raise InputError(
                "N_w (windowed layers) in a stack of dense and mixture-of-experts layers is not modelled: "
                "the windowed layers of each kind would be needed"
            )
    if spec.token_projection and ("E_emb" not in v or spec.family != "decoder-only"):
        raise InputError("token_projection needs a decoder-only model with an embedding width E_emb")
    if spec.window_mask and ("w" not in v or spec.family != "encoder-only" or spec.global_tokens):
        raise InputError("window_mask needs an encoder-only model with a window w and no global tokens")
    if spec.global_tokens and "w" not in v:
        raise InputError("global_tokens need a local attention window w")
    if spec.global_tokens and spec.family == "decoder-only":
        raise InputError("global_tokens apply to bidirectional (encoder) self-attention; a decoder-only model has none")
    _validate_deberta(spec, v)
    _validate_ranges(spec, v)
    mixer_rules.check_mixer_sizes(spec, v)
    long_rules.check_window_sizes(spec, v)


def _validate_moe_mla_sizes(spec: Spec, v: dict[str, int]) -> None:
    """--- types-moe: expert widths, the MoE layer count and MLA's sizes need their model."""
    if "E" not in v:
        for name in ("d_ff_e", "d_ff_s", "N_moe"):
            if name in v:
                raise InputError(
                    f"{name} applies to mixture-of-experts models, and this one has no experts: give E and k"
                )
        for name in ("router_bias", "expert_bias", "shared_expert_gate"):
            if getattr(spec, name):
                raise InputError(
                    f"{name} applies to mixture-of-experts models, and this one has no experts: give E and k"
                )
    if "d_ff_s" in v and not spec.n_shared_experts:
        raise InputError("d_ff_s is the shared expert's width: set n_shared_experts >= 1, or drop d_ff_s")
    if "N_moe" in v:
        if spec.family != "decoder-only":
            raise InputError("N_moe lays out the layers of a decoder-only model")
        if spec.moe_first_dense or spec.moe_every != 1:
            raise InputError(
                "give either N_moe (how many layers are MoE layers) or moe_first_dense/moe_every, not both"
            )
        if "N" in v and v["N_moe"] > v["N"]:
            raise InputError(f"N_moe={v['N_moe']} MoE layers exceed the N={v['N']} layers")
    if spec.mla:
        missing = [n for n in MLA_SIZES if n not in v]
        if missing:
            raise InputError(f"mla (multi-head latent attention) needs sizes {', '.join(missing)}")
        for name in ("h_kv", "d_k"):
            if name in v:
                raise InputError(
                    f"{name} does not apply to mla (its heads are h, of width d_nope + d_rope): drop {name}"
                )
    else:
        v4 = bool(set(mixer_kinds(spec)) & set(mixer_rules.V4_KINDS))  # DeepSeek-V4's query latent r_q
        for name in ("r_q", "r_kv", "d_nope", "d_rope"):
            if name in v and not (v4 and name == "r_q"):
                raise InputError(f"{name} is a size of multi-head latent attention: set mla=true, or drop {name}")


_TABLES = ("learned", "sinusoidal-table")


def _validate_vision(spec: Spec, v: dict[str, int]) -> None:
    """A vision tower needs a decoder-only language model and exactly its sizes."""
    allowed = set(VISION_SIZES.get(spec.vision, ())) | set(_OPTIONAL_VISION_SIZES.get(spec.vision, ()))
    for name in v:
        every = {n for table in (VISION_SIZES, _OPTIONAL_VISION_SIZES) for sizes in table.values() for n in sizes}
        if name in every and name not in allowed:
            raise InputError(f"{name} is a size of a vision tower; this model's vision is {spec.vision}")
    if spec.image_newline and spec.vision != "clip":
        raise InputError(
            "image_newline is LLaVA-NeXT's, beside a CLIP vision tower; this model's vision is " + spec.vision
        )
    if spec.vision_head and spec.vision not in _SIGLIP_VISIONS:
        raise InputError("vision_head is the attention-pooling head of a SigLIP vision tower; this model has none")
    if spec.vision == "none":
        if not spec.projector_bias:
            raise InputError("projector_bias applies to a vision-language model's projector; this model has none")
        return
    if spec.vision in DUAL_VISIONS:
        if spec.family != "encoder-only":
            raise InputError(
                f"vision={spec.vision} is a dual encoder: its text tower is encoder-only, not {spec.family}"
            )
    elif spec.family != "decoder-only":
        raise InputError(f"vision={spec.vision} wraps a decoder-only language model, not a {spec.family} model")
    missing = [n for n in VISION_SIZES[spec.vision] if n not in v]
    if missing:
        raise InputError(f"vision={spec.vision} needs sizes {', '.join(missing)}")


def _validate_stack_sizes(spec: Spec, v: dict[str, int]) -> None:
    """Position-table rows per stack, the decoder's own sizes and the front ends' sizes."""
    seq2seq = spec.family == "encoder-decoder"
    for name in ("L_src_max", *DECODER_SIZES):
        if name in v and not seq2seq:
            raise InputError(f"{name} is a size of an encoder-decoder's stack; this {spec.family} model has one stack")
    for name, frontends in (("C_in", ("patch", "conv1d", "wav2vec2")), ("p", ("patch",))):
        if name in v and spec.frontend not in frontends:
            raise InputError(
                f"{name} is a size of the {' or '.join(frontends)} front end; this model's is {spec.frontend}"
            )
    _validate_vision(spec, v)
    if "d_pool" in v and not spec.pooler:
        raise InputError("d_pool is the pooler's output width; this model has no pooler")
    stacks = [("encoder", spec.positional, "L_src_max"), ("decoder", spec.decoder_positions, "L_tgt_max")]
    for stack, kind, own in stacks if seq2seq else [("model", spec.positional, "")]:
        if kind in _TABLES and "L_max" not in v and own not in v:
            raise InputError(
                f"{kind} positions need L_max (rows of the position table, max_position_embeddings)"
                + (f" or the {stack}'s own {own}" if own else "")
            )
    if "V_dec" in v and spec.share_embeddings:
        raise InputError("V_dec: a token table shared by encoder and decoder has one vocabulary V; drop V_dec")
    if "h_dec" in v and "d_k" not in v and v["d_model"] % v["h_dec"]:
        raise InputError(f"h_dec={v['h_dec']} does not divide d_model={v['d_model']}")
    if "h_dec" in v and "h_kv" in v and v["h_dec"] % v["h_kv"]:
        raise InputError(f"h_dec={v['h_dec']} is not divisible by h_kv={v['h_kv']}")
    if spec.frontend != "tokens":
        needed = ("C_in", "p") if spec.frontend == "patch" else ("C_in",)
        for name in needed:
            if name not in v:
                raise InputError(f"frontend={spec.frontend} needs size {name}")
    audio_rules.check_sizes(spec, v)


def _validate_ranges(spec: Spec, v: dict[str, int]) -> None:
    """Options whose range depends on the sizes: the MoE layout within the N layers, and
    the global tokens within the encoder's sequence."""
    layout = spec.moe_first_dense != 0 or spec.moe_every != 1
    if layout and spec.family == "encoder-only":  # the layout would change nothing: refuse it
        raise InputError(
            "moe_first_dense and moe_every lay out the layers of a decoder; every layer of an "
            "encoder-only mixture-of-experts model is a MoE layer: drop them"
        )
    if "E" in v:
        n_name = "N" if "N" in v else "N_dec"
        n = v[n_name]
        if spec.moe_first_dense >= n:
            raise InputError(
                f"moe_first_dense={spec.moe_first_dense} dense layers leave none of the {n_name}={n} layers "
                f"for the experts; moe_first_dense must be below {n_name}"
            )
        if spec.moe_first_dense + spec.moe_every > n:
            raise InputError(
                f"moe_every={spec.moe_every} after moe_first_dense={spec.moe_first_dense} dense layers leaves no "
                f"mixture-of-experts layer among the {n_name}={n} layers; moe_first_dense + moe_every must be at "
                f"most {n_name}"
            )
    if spec.frontend == "conv1d" and "L_src" in v and "L_src_max" in v and v["L_src"] != v["L_src_max"]:
        raise InputError(
            f"L_src = {v['L_src']}: the convolutional audio front end (Whisper) reads exactly 2 x L_src_max "
            f"mel frames, so the source length is L_src_max = {v['L_src_max']}"
        )
    if spec.global_tokens:
        # The encoder's self-attention reads L tokens (L_src for an encoder-decoder, L when not given).
        seq = "L_src" if spec.family == "encoder-decoder" and "L_src" in v else "L"
        if seq in v and spec.global_tokens > v[seq]:
            raise InputError(
                f"global_tokens={spec.global_tokens} exceeds the {v[seq]} tokens of a sequence ({seq}); "
                f"a sequence cannot hold more global tokens than tokens"
            )


def _validate_deberta(spec: Spec, v: dict[str, int]) -> None:
    """DeBERTa's options (types-enc): each needs what it acts on, else it would change nothing."""
    if spec.embedding_projection != "albert" and "E_emb" not in v:
        raise InputError(f"embedding_projection={spec.embedding_projection} needs E_emb (the embedding width)")
    rel = "L_rel" in v
    for name, off in (("disentangled", "none"), ("share_att_key", False)):
        if getattr(spec, name) != off and not rel:
            raise InputError(f"{name} needs L_rel (the relative span of DeBERTa's relative position table)")
    if (rel or spec.conv_kernel or spec.rel_norm) and spec.family != "encoder-only":
        raise InputError(
            "L_rel and conv_kernel describe DeBERTa's encoder (relative table, ConvLayer); "
            f"this is a {spec.family} model"
        )
    if rel and "w" in v:
        raise InputError("L_rel (disentangled attention) with a local window w is not modelled")
    if spec.conv_groups != 1 and not spec.conv_kernel:
        raise InputError("conv_groups applies to DeBERTa's ConvLayer: give conv_kernel as well")
    if spec.conv_kernel:
        if spec.conv_kernel % 2 == 0:
            raise InputError(
                f"conv_kernel={spec.conv_kernel} is even: DeBERTa's ConvLayer pads (k - 1) // 2 per side, so an "
                "even kernel returns L - 1 positions and its forward fails; give an odd kernel"
            )
        if v["d_model"] % spec.conv_groups:
            raise InputError(f"conv_groups={spec.conv_groups} does not divide d_model={v['d_model']} (torch Conv1d)")
