"""What a derivation step *is*, as closed enumerations: code decides numbers from these,
never from a step's label (labels are for people and may be renamed freely).

``Role`` names the tensor or operation a ``Step`` counts (a weight matrix, its bias, a
product of activations, a norm).  ``Block`` names the component a ``Cost`` groups
(an attention block, a feed-forward network, a layer, a stack).  Conventions, the
Chinchilla term list, diff and hand-count categories, layer sharing, LoRA targets, the
shape walk, plots and the report all group by these.
"""

from __future__ import annotations

from enum import Enum


class Role(str, Enum):
    """The tensor or operation of one ``Step``.

    The value is a stable identifier (used in JSON output and tests).
    """

    # embeddings and positions
    TOKEN_EMBEDDING = "token_embedding"
    POSITION_EMBEDDING = "position_embedding"  # a learned table (parameters)
    POSITION_ENCODING = "position_encoding"  # fixed: sinusoidal, rotary, ALiBi (no parameters)
    TYPE_EMBEDDING = "type_embedding"  # token-type / segment embedding
    EMBEDDING_PROJECTION = "embedding_projection"  # ALBERT's E_emb -> d_model map (OPT's project_in)
    RELATIVE_BIAS = "relative_bias"  # T5's bucketed relative attention bias
    RELATIVE_PROJECTION = "relative_projection"  # Transformer-XL W_R
    RELATIVE_BIAS_VECTORS = "relative_bias_vectors"  # Transformer-XL u, v
    RELATIVE_SCORES = "relative_scores"  # Transformer-XL (q + v) R^T
    # attention
    Q_PROJ = "q_proj"
    K_PROJ = "k_proj"
    V_PROJ = "v_proj"
    O_PROJ = "o_proj"
    Q_NORM = "q_norm"
    K_NORM = "k_norm"
    ATTENTION_SCORES = "attention_scores"  # Q K^T
    SOFTMAX = "softmax"
    ATTENTION_VALUES = "attention_values"  # softmax(scores) V
    # feed-forward and experts
    FFN_UP = "ffn_up"  # W_1 of an MLP, W_up of a GLU
    FFN_GATE = "ffn_gate"  # W_gate of a GLU
    FFN_DOWN = "ffn_down"  # W_2 of an MLP, W_down of a GLU
    ACTIVATION = "activation"
    ROUTER = "router"
    EXPERTS = "experts"  # the E routed expert FFNs of a MoE layer, as one step
    # the rest of the model
    NORM = "norm"
    RESIDUAL = "residual"
    LM_HEAD = "lm_head"
    POOLER = "pooler"
    HEAD_TRANSFORM = "head_transform"  # the dense map before the logits (BERT MLM, ALBERT head)
    MLM_BIAS = "mlm_bias"
    ADAPTER = "adapter"
    # --- types-moe: multi-head latent attention (DeepSeek-V2 §2.1), sinks, shared-expert gate
    Q_DOWN = "q_down"  # MLA q_a_proj: d_model -> r_q
    Q_UP = "q_up"  # MLA q_b_proj: r_q -> h*(d_nope + d_rope)
    KV_DOWN = "kv_down"  # MLA kv_a_proj_with_mqa: d_model -> r_kv + d_rope (latent and shared rotary key)
    KV_UP = "kv_up"  # MLA kv_b_proj: r_kv -> h*(d_nope + d_v), keys and values of every head
    LATENT_NORM = "latent_norm"  # MLA q_a_layernorm / kv_a_layernorm on the compressed latents
    ATTENTION_SINKS = "attention_sinks"  # gpt-oss: one learned logit per head in every softmax
    SHARED_EXPERT_GATE = "shared_expert_gate"  # Qwen2-MoE: sigmoid(x W_g), W_g d_model x 1
    # --- encoders (types-enc): DeBERTa (He et al. 2021 §3.1; HF DebertaV2)
    RELATIVE_EMBEDDING = "relative_embedding"  # the 2*L_rel x d_model relative position table
    POS_KEY_PROJ = "pos_key_proj"  # c2p: the relative table projected to keys
    POS_QUERY_PROJ = "pos_query_proj"  # p2c: the relative table projected to queries
    DISENTANGLED_SCORES = "disentangled_scores"  # Q (P_K)^T (c2p) and K (P_Q)^T (p2c)
    CONV = "conv"  # a convolution's kernel (DeBERTa-v2's ConvLayer)
    UNUSED_OUTPUT = "unused_output"  # a product the forward computes and never uses: no backward
    # --- gpt2-like and wrappers
    OUTPUT_PROJECTION = "output_projection"  # OPT's project_out: d_model -> E_emb before a tied E_emb-wide head
    # --- seq2seq and front ends
    PATCH_EMBEDDING = "patch_embedding"  # ViT's p x p Conv2d from C_in channels to d_model
    CLS_TOKEN = "cls_token"  # a learned d_model vector prepended to the patches
    AUDIO_CONV = "audio_conv"  # Whisper's width-3 Conv1d front end over mel frames
    MASK_EMBEDDING = "mask_embedding"  # wav2vec 2.0 / HuBERT masked_spec_embed: the d_model vector masked frames take
    VISION = "vision"  # a tensor of a vision-language model's image side (engine/vision.py)
    UNUSED_EMBEDDING = "unused_embedding"  # a stored table no forward pass reads (BART family's untied shared)
    # --- dual encoders (CLIP, SigLIP; engine/dual.py)
    TEXT_PROJECTION = (
        "text_projection"  # the pooled text's map into the joint space (CLIP text_projection, SigLIP head)
    )
    LOGIT_SCALE = "logit_scale"  # the learned temperature (and SigLIP's bias) of the image-text logits
    # --- layer kinds (issue 20): state-space and linear-attention mixers
    MIXER_IN_PROJ = "mixer_in_proj"  # Mamba in_proj (x, z [, B, C, dt]); Gated DeltaNet in_proj_qkvz
    MIXER_GATE_PROJ = "mixer_gate_proj"  # Gated DeltaNet in_proj_ba: beta and the decay input a, per value head
    MIXER_CONV = "mixer_conv"  # the causal depthwise conv1d of a mixer (Mamba, Gated DeltaNet)
    SSM_X_PROJ = "ssm_x_proj"  # Mamba 1 x_proj: d_inner -> dt_rank + 2 d_state (dt, B, C)
    SSM_DT_PROJ = "ssm_dt_proj"  # Mamba 1 dt_proj: dt_rank -> d_inner, with bias
    SSM_DT_BIAS = "ssm_dt_bias"  # Mamba 2 / Gated DeltaNet dt_bias: one per head
    SSM_A = "ssm_a"  # A_log: the (negative, log-stored) state decay
    SSM_D = "ssm_d"  # D: the skip connection of the state-space layer
    MIXER_NORM = "mixer_norm"  # a norm inside a mixer (gated RMSNorm; Jamba's dt/B/C norms)
    MIXER_OUT_PROJ = "mixer_out_proj"  # out_proj of a Mamba or Gated DeltaNet mixer
    SCAN = "scan"  # the products of the recurrence (selective scan, chunked SSD, chunked delta rule)
    # --- DeepSeek Sparse Attention (engine/dsa.py): the lightning indexer of each DSA layer
    INDEXER_Q = "indexer_q"  # wq_b: r_q -> h_idx*d_idx, the indexer's queries from the query latent
    INDEXER_K = "indexer_k"  # wk: d_model -> d_idx, the indexer's one shared key (cached per token)
    INDEXER_NORM = "indexer_norm"  # k_norm: a LayerNorm (γ and β) over the indexer key
    INDEXER_WEIGHTS = "indexer_weights"  # weights_proj: d_model -> h_idx, a weight per indexer head
    INDEXER_SCORES = "indexer_scores"  # ReLU(q k^T) per head, then the head-weighted sum
    # --- Gemma 4's per-layer inputs (engine/gemma4.py)
    PLE_EMBEDDING = "ple_embedding"  # embed_tokens_per_layer: V_ple x N d_ple, every layer's slice in one row
    PLE_PROJECTION = (
        "ple_projection"  # per_layer_model_projection d_model -> N d_ple; per_layer_projection d_ple -> d_model
    )
    PLE_GATE = "ple_gate"  # per_layer_input_gate: d_model -> d_ple
    # --- DeepSeek-V4 (engine/deepseek_v4.py)
    COMPRESSOR = "compressor"  # a CSA/HCA KV compressor's kv_proj, gate_proj, position_bias, kv_norm
    HYPER_CONNECTION = "hyper_connection"  # mHC: fn, base, scale of attn_hc, ffn_hc and hc_head
    CACHE_STATE = "cache_state"  # no tensor of the model: what its cache keeps per sequence (Step.held)
    # --- the generic path (catalog/generic): a tensor whose module's class and name do not
    # make its role certain; its label is the module path
    GENERIC = "generic"


class Block(str, Enum):
    """The component a ``Cost`` groups."""

    MODEL = "model"
    EMBEDDINGS = "embeddings"  # the input embeddings of a one-stack model, or a table both stacks share
    ENCODER_EMBEDDINGS = "encoder_embeddings"
    DECODER_EMBEDDINGS = "decoder_embeddings"
    ENCODER = "encoder"  # a stack
    DECODER = "decoder"  # a stack
    LAYER = "layer"
    SHARED_LAYER_WEIGHTS = "shared_layer_weights"  # ALBERT-style sharing
    SELF_ATTENTION = "self_attention"
    CAUSAL_SELF_ATTENTION = "causal_self_attention"
    CROSS_ATTENTION = "cross_attention"
    FFN = "ffn"
    MOE = "moe"
    SHARED_EXPERT = "shared_expert"
    NORM = "norm"
    RELATIVE_POSITION_BIAS = "relative_position_bias"
    LM_HEAD = "lm_head"
    POOLER = "pooler"
    MLM_HEAD = "mlm_head"
    OTHER = "other"
    # --- encoders (types-enc)
    RELATIVE_EMBEDDINGS = "relative_embeddings"  # DeBERTa's relative position table (+ its norm)
    CONV_LAYER = "conv_layer"  # DeBERTa-v2's ConvLayer after the first layer
    # --- vision-language wrappers: the image side beside the language model
    VISION_TOWER = "vision_tower"  # CLIP / Qwen2-VL vision encoder (engine/vision.py)
    PROJECTOR = "projector"  # the map from vision features into the language model's width
    AUDIO_TOWER = "audio_tower"  # Gemma 4's conformer audio encoder and its embed_audio map
    # --- dual encoders (engine/dual.py)
    TEXT_HEAD = "text_head"  # the text tower's map of its pooled token into the joint space
    CONTRASTIVE = "contrastive"  # the image-text logits' learned scale (and bias): neither tower's
    # --- layer kinds (issue 20)
    SSM_MIXER = "ssm_mixer"  # a Mamba 1 or Mamba 2 mixer
    LINEAR_ATTENTION = "linear_attention"  # a Gated DeltaNet mixer
    SHORT_CONV = "short_conv"  # LFM2's gated short convolution
    FFN_SUBLAYER = "ffn_sublayer"  # the FFN half of a hybrid stack's layers, by FFN kind (kinds.hybrid_layers)


# Roles of weight matrices that attention and FFN blocks apply to every token: the
# targets LoRA (Hu et al. 2021) names q, k, v, o, gate, up, down.
ATTENTION_PROJECTIONS = (Role.Q_PROJ, Role.K_PROJ, Role.V_PROJ, Role.O_PROJ)
FFN_MATRICES = (Role.FFN_UP, Role.FFN_GATE, Role.FFN_DOWN)
ATTENTION_BLOCKS = (Block.SELF_ATTENTION, Block.CAUSAL_SELF_ATTENTION, Block.CROSS_ATTENTION)
STACKS = (Block.ENCODER, Block.DECODER)
HEADS = (Block.LM_HEAD, Block.MLM_HEAD)
# The image side of a vision-language model: not part of the text-only figure.
VISION_BLOCKS = (Block.VISION_TOWER, Block.PROJECTOR)
# The audio side (Gemma 4): neither the text-only nor the vision figure.
AUDIO_BLOCKS = (Block.AUDIO_TOWER,)
# --- seq2seq and front ends: the maps a model applies to its raw input (pixels, mel frames)
# before the first layer; they run with the encoder (prefill of an encoder-decoder).
FRONT_END_ROLES = (Role.PATCH_EMBEDDING, Role.AUDIO_CONV)
# --- layer kinds: the weight matrices of state-space and linear-attention mixers
MIXER_PROJECTIONS = (Role.MIXER_IN_PROJ, Role.MIXER_GATE_PROJ, Role.SSM_X_PROJ, Role.SSM_DT_PROJ, Role.MIXER_OUT_PROJ)
MIXER_BLOCKS = (Block.SSM_MIXER, Block.LINEAR_ATTENTION, Block.SHORT_CONV)
# --- DeepSeek Sparse Attention: products no gradient flows back through (forward FLOPs only in
# training).  The lightning indexer runs under torch.no_grad in transformers (DeepseekV32Indexer);
# DeepSeek-V3.2 §2.1.1 trains it with its own KL loss on a detached input, apart from the model's.
NO_GRAD_ROLES = (
    Role.UNUSED_OUTPUT,
    Role.INDEXER_Q,
    Role.INDEXER_K,
    Role.INDEXER_NORM,
    Role.INDEXER_WEIGHTS,
    Role.INDEXER_SCORES,
)
