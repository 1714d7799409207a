"""The legend of symtrans's sizes: names, LaTeX names, meanings and units.

Plain data, without SymPy, so that what only needs the names (validating a Spec,
parsing ``--set``, answering ``symtrans params`` from generated code) starts fast;
``symbols`` makes one SymPy symbol per entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SymbolInfo:
    """Legend entry: the symbol, its LaTeX name, meaning and unit."""

    name: str
    latex: str
    meaning: str
    unit: str


_LEGEND = [
    SymbolInfo("d_model", r"d_{\mathrm{model}}", "model (residual stream) width", "features"),
    SymbolInfo("d_ff", r"d_{\mathrm{ff}}", "inner width of the feed-forward network", "features"),
    SymbolInfo("h", "h", "attention (query) heads", "heads"),
    SymbolInfo("h_kv", r"h_{\mathrm{kv}}", "key/value heads (GQA/MQA)", "heads"),
    SymbolInfo("d_k", "d_k", "per-head query/key width", "features"),
    SymbolInfo("d_v", "d_v", "per-head value width", "features"),
    SymbolInfo("N", "N", "layers in a stack", "layers"),
    SymbolInfo("N_enc", r"N_{\mathrm{enc}}", "encoder layers", "layers"),
    SymbolInfo("N_dec", r"N_{\mathrm{dec}}", "decoder layers", "layers"),
    SymbolInfo("V", "V", "vocabulary size", "tokens"),
    SymbolInfo("L", "L", "sequence length: tokens per sequence in the workload", "tokens"),
    SymbolInfo(
        "L_max",
        r"L_{\mathrm{max}}",
        "maximum positions: rows of a learned position table (max_position_embeddings)",
        "tokens",
    ),
    SymbolInfo("L_src", r"L_{\mathrm{src}}", "source (encoder) sequence length", "tokens"),
    SymbolInfo("L_tgt", r"L_{\mathrm{tgt}}", "target (decoder) sequence length", "tokens"),
    SymbolInfo("B", "B", "batch size", "sequences"),
    SymbolInfo("E", "E", "experts per mixture-of-experts layer", "experts"),
    SymbolInfo("k", "k", "experts active per token", "experts"),
    SymbolInfo("E_emb", r"E_{\mathrm{emb}}", "factorized embedding width (ALBERT's E)", "features"),
    SymbolInfo("r", "r", "rank of a low-rank factorisation or LoRA", "features"),
    SymbolInfo("w", "w", "local attention window", "tokens"),
    SymbolInfo("N_w", r"N_{w}", "layers that attend within the window w (the others attend to everything)", "layers"),
    SymbolInfo(
        "b_loc",
        r"b_{\mathrm{loc}}",
        "tokens per local block (LongT5: local_radius + 1, 3 blocks of keys each)",
        "tokens",
    ),
    SymbolInfo("b_glob", r"b_{\mathrm{glob}}", "tokens summed into one transient global token (LongT5)", "tokens"),
    SymbolInfo(
        "w_att", r"w_{\mathrm{att}}", "Longformer attention window, both sides (LED attention_window)", "tokens"
    ),
    SymbolInfo("d_ff_e", r"d_{\mathrm{ff},e}", "inner width of a routed expert (moe_intermediate_size)", "features"),
    SymbolInfo("d_ff_s", r"d_{\mathrm{ff},s}", "inner width of the shared expert", "features"),
    SymbolInfo("N_moe", r"N_{\mathrm{moe}}", "mixture-of-experts layers among the N layers", "layers"),
    SymbolInfo("r_q", "r_q", "rank of the compressed query (MLA q_lora_rank)", "features"),
    SymbolInfo("r_kv", r"r_{\mathrm{kv}}", "rank of the compressed key-value latent (MLA kv_lora_rank)", "features"),
    SymbolInfo("d_nope", r"d_{\mathrm{nope}}", "per-head query/key width without rotary (MLA)", "features"),
    SymbolInfo("d_rope", r"d_{\mathrm{rope}}", "per-head rotary query/key width, one shared key (MLA)", "features"),
    SymbolInfo(
        "L_rel",
        r"L_{\mathrm{rel}}",
        "relative span: DeBERTa's relative position table has 2 L_rel rows (position_buckets)",
        "tokens",
    ),
    SymbolInfo(
        "h_dec", r"h_{\mathrm{dec}}", "decoder attention heads, where they differ from the encoder's h", "heads"
    ),
    SymbolInfo(
        "d_ff_dec",
        r"d_{\mathrm{ff,dec}}",
        "decoder feed-forward width, where it differs from the encoder's d_ff",
        "features",
    ),
    SymbolInfo(
        "V_dec", r"V_{\mathrm{dec}}", "decoder (target) vocabulary, where it differs from the source V", "tokens"
    ),
    SymbolInfo(
        "L_src_max",
        r"L_{\mathrm{src,max}}",
        "maximum source positions: rows of the encoder's position table (max_source_positions)",
        "tokens",
    ),
    SymbolInfo(
        "L_tgt_max",
        r"L_{\mathrm{tgt,max}}",
        "maximum target positions: rows of the decoder's position table (max_target_positions)",
        "tokens",
    ),
    SymbolInfo(
        "C_in", r"C_{\mathrm{in}}", "input channels of a convolutional front end (image channels, mel bins)", "channels"
    ),
    SymbolInfo("p", "p", "patch side of a vision front end (patch_size): p x p pixels per token", "pixels"),
    SymbolInfo("d_pool", r"d_{\mathrm{pool}}", "pooler output width, where it differs from d_model", "features"),
    # --- audio encoders (wav2vec 2.0, HuBERT): engine/frontends.wav2vec2_front
    SymbolInfo(
        "P_fe",
        r"P_{\mathrm{fe}}",
        "parameters of an audio encoder's convolutional feature encoder (conv_dim / conv_kernel layers, "
        "their biases and norms), summed by the config reader",
        "parameters",
    ),
    SymbolInfo(
        "M_fe1",
        r"M_{\mathrm{fe},1}",
        "multiply-accumulates of an audio encoder's convolutional feature encoder on the shortest waveform "
        "of one frame (its receptive field), summed over the layers by the config reader",
        "MACs",
    ),
    SymbolInfo(
        "M_fe",
        r"M_{\mathrm{fe}}",
        "multiply-accumulates of the convolutional feature encoder for each frame after the first (one hop of "
        "prod(conv_stride) more samples), summed over the layers by the config reader",
        "MACs",
    ),
    SymbolInfo(
        "K_pos",
        r"K_{\mathrm{pos}}",
        "kernel width of the convolutional position embedding (num_conv_pos_embeddings)",
        "positions",
    ),
    SymbolInfo(
        "G_pos",
        r"G_{\mathrm{pos}}",
        "groups of the convolutional position embedding (num_conv_pos_embedding_groups)",
        "groups",
    ),
    # --- vision-language wrappers: the vision tower's own sizes (engine/vision.py)
    SymbolInfo("d_vis", r"d_{\mathrm{vis}}", "vision tower width (vision_config hidden_size / embed_dim)", "features"),
    SymbolInfo("d_ff_vis", r"d_{\mathrm{ff,vis}}", "vision tower feed-forward width", "features"),
    SymbolInfo("N_vis", r"N_{\mathrm{vis}}", "vision tower layers", "layers"),
    SymbolInfo("C_vis", r"C_{\mathrm{vis}}", "image channels read by the vision tower", "channels"),
    SymbolInfo(
        "p_vis", r"p_{\mathrm{vis}}", "patch side of the vision tower: p_vis x p_vis pixels per patch", "pixels"
    ),
    SymbolInfo(
        "P_vis",
        r"P_{\mathrm{vis}}",
        "rows of the ViT's learned position table: CLIP's less its class token (its patches per image); "
        "Qwen3-VL and Qwen3.5 interpolate their P_vis rows to each image's grid",
        "patches",
    ),
    SymbolInfo("t_vis", r"t_{\mathrm{vis}}", "frames per patch in time (Qwen2-VL temporal_patch_size)", "frames"),
    SymbolInfo("m_vis", r"m_{\mathrm{vis}}", "patch merger side: m_vis x m_vis patches become one token", "patches"),
    SymbolInfo("h_vis", r"h_{\mathrm{vis}}", "vision tower attention heads (Gemma 4)", "heads"),
    SymbolInfo("h_kv_vis", r"h_{\mathrm{kv,vis}}", "vision tower key/value heads (Gemma 4)", "heads"),
    SymbolInfo("d_k_vis", r"d_{k,\mathrm{vis}}", "vision tower head width (Gemma 4)", "features"),
    SymbolInfo("d_aud", r"d_{\mathrm{aud}}", "audio tower width (Gemma 4 conformer)", "features"),
    SymbolInfo("N_aud", r"N_{\mathrm{aud}}", "audio tower layers (Gemma 4 conformer)", "layers"),
    SymbolInfo("h_aud", r"h_{\mathrm{aud}}", "audio tower attention heads (Gemma 4)", "heads"),
    SymbolInfo("K_aud", r"K_{\mathrm{aud}}", "audio tower depthwise convolution kernel (Gemma 4)", "frames"),
    SymbolInfo("d_out_aud", r"d_{\mathrm{out,aud}}", "audio tower output width (Gemma 4 output_proj_dims)", "features"),
    SymbolInfo(
        "c1_aud", r"c_{1,\mathrm{aud}}", "audio subsampling: first convolution's channels (Gemma 4)", "channels"
    ),
    SymbolInfo(
        "c2_aud", r"c_{2,\mathrm{aud}}", "audio subsampling: second convolution's channels (Gemma 4)", "channels"
    ),
    SymbolInfo("n_feat", r"n_{\mathrm{feat}}", "vision layers whose features the projector concatenates", "layers"),
    SymbolInfo(
        "d_proj",
        r"d_{\mathrm{proj}}",
        "patch merger output width, where it differs from d_model; a dual encoder's joint embedding width",
        "features",
    ),
    SymbolInfo(
        "n_ds",
        r"n_{\mathrm{ds}}",
        "DeepStack mergers: vision layers whose merged features are added to the first language layers (Qwen3-VL)",
        "layers",
    ),
    SymbolInfo(
        "d_ad_in",
        r"d_{\mathrm{ad,in}}",
        "vision adapter hidden width after the pixel shuffle (Llama 4 projector_input_dim)",
        "features",
    ),
    SymbolInfo(
        "d_ad_out", r"d_{\mathrm{ad,out}}", "vision adapter output width (Llama 4 projector_output_dim)", "features"
    ),
    SymbolInfo(
        "d_vout",
        r"d_{\mathrm{vout}}",
        "vision model output width the projector reads (Llama 4 vision_output_dim)",
        "features",
    ),
    # --- layer kinds (issue 20): count symbols of a hybrid stack and the sizes of its mixers
    SymbolInfo("N_attn", r"N_{\mathrm{attn}}", "attention layers of a hybrid stack", "layers"),
    SymbolInfo("N_ssm", r"N_{\mathrm{ssm}}", "state-space (Mamba) layers of a hybrid stack", "layers"),
    SymbolInfo("N_lin", r"N_{\mathrm{lin}}", "linear-attention (Gated DeltaNet) layers of a hybrid stack", "layers"),
    SymbolInfo("N_conv", r"N_{\mathrm{conv}}", "short-convolution (LFM2) layers of a hybrid stack", "layers"),
    SymbolInfo("N_mlp", r"N_{\mathrm{mlp}}", "MLP-only layers (no token mixer) of a hybrid stack", "layers"),
    SymbolInfo(
        "N_par",
        r"N_{\mathrm{par}}",
        "layers of attention and Mamba 2 in parallel (Falcon-H1) of a hybrid stack",
        "layers",
    ),
    SymbolInfo("d_inner", r"d_{\mathrm{inner}}", "inner width of a Mamba mixer (expand x d_model)", "features"),
    SymbolInfo(
        "d_state",
        r"d_{\mathrm{state}}",
        "state size per channel of a Mamba mixer (d_state, N in the papers)",
        "features",
    ),
    SymbolInfo("d_conv", r"d_{\mathrm{conv}}", "kernel width of a mixer's causal depthwise convolution", "positions"),
    SymbolInfo(
        "dt_rank",
        r"\mathrm{dt}_{\mathrm{rank}}",
        "rank of Mamba 1's input-dependent step size (time_step_rank)",
        "features",
    ),
    SymbolInfo("h_ssm", r"h_{\mathrm{ssm}}", "heads of a Mamba 2 mixer (num_heads)", "heads"),
    SymbolInfo("g_ssm", r"g_{\mathrm{ssm}}", "groups of B and C in a Mamba 2 mixer (n_groups)", "groups"),
    SymbolInfo("h_lk", r"h_{\mathrm{lk}}", "key heads of a linear-attention mixer (linear_num_key_heads)", "heads"),
    SymbolInfo("h_lv", r"h_{\mathrm{lv}}", "value heads of a linear-attention mixer (linear_num_value_heads)", "heads"),
    SymbolInfo(
        "d_lk", r"d_{\mathrm{lk}}", "key head width of a linear-attention mixer (linear_key_head_dim)", "features"
    ),
    SymbolInfo(
        "d_lv", r"d_{\mathrm{lv}}", "value head width of a linear-attention mixer (linear_value_head_dim)", "features"
    ),
    SymbolInfo(
        "L_chunk",
        r"L_{\mathrm{chunk}}",
        "chunk length of a chunked scan (Mamba 2 chunk_size; Gated DeltaNet 64)",
        "tokens",
    ),
    # --- Zamba2's shared transformer blocks (engine/zamba2.py)
    SymbolInfo("N_hyb", r"N_{\mathrm{hyb}}", "hybrid layers that run a shared transformer block (Zamba2)", "layers"),
    SymbolInfo("N_mem", r"N_{\mathrm{mem}}", "shared transformer blocks the model stores (Zamba2)", "blocks"),
    SymbolInfo("N_adp", r"N_{\mathrm{adp}}", "LoRA adapter sets the model stores for its shared blocks", "sets"),
    SymbolInfo("r_adp", r"r_{\mathrm{adp}}", "rank of the shared blocks' LoRA adapters (adapter_rank)", "features"),
    # --- DeepSeek Sparse Attention (engine/dsa.py): the lightning indexer's sizes
    SymbolInfo("N_dsa", r"N_{\mathrm{dsa}}", "layers whose MLA runs its own lightning indexer (DSA)", "layers"),
    SymbolInfo("h_idx", r"h_{\mathrm{idx}}", "heads of the lightning indexer (index_n_heads)", "heads"),
    SymbolInfo("d_idx", r"d_{\mathrm{idx}}", "head width of the lightning indexer (index_head_dim)", "features"),
    SymbolInfo(
        "k_idx", r"k_{\mathrm{idx}}", "keys each query attends to in sparse attention (index_topk)", "positions"
    ),
    # --- Gemma 4 (engine/gemma4.py): its full-attention layers' own shapes, KV sharing, per-layer inputs
    SymbolInfo(
        "N_g", r"N_{g}", "full-attention layers with their own keys and values (Gemma 4's global layers)", "layers"
    ),
    SymbolInfo(
        "N_xs",
        r"N_{xs}",
        "sliding-window layers that reuse an earlier layer's keys and values (Gemma 4 num_kv_shared_layers)",
        "layers",
    ),
    SymbolInfo(
        "N_xg",
        r"N_{xg}",
        "full-attention layers that reuse an earlier layer's keys and values (Gemma 4 num_kv_shared_layers)",
        "layers",
    ),
    SymbolInfo(
        "d_kg", r"d_{k,g}", "per-head query/key width of the full-attention layers (global_head_dim)", "features"
    ),
    SymbolInfo(
        "h_kvg",
        r"h_{\mathrm{kv},g}",
        "key/value heads of the full-attention layers (num_global_key_value_heads)",
        "heads",
    ),
    SymbolInfo(
        "d_ple", r"d_{\mathrm{ple}}", "width of each layer's per-layer input (hidden_size_per_layer_input)", "features"
    ),
    SymbolInfo(
        "V_ple", r"V_{\mathrm{ple}}", "rows of the per-layer embedding table (vocab_size_per_layer_input)", "tokens"
    ),
    # --- DeepSeek-V4 (engine/deepseek_v4.py)
    SymbolInfo("N_csa", r"N_{\mathrm{csa}}", "compressed sparse attention layers (DeepSeek-V4 CSA)", "layers"),
    SymbolInfo("N_hca", r"N_{\mathrm{hca}}", "heavily compressed attention layers (DeepSeek-V4 HCA)", "layers"),
    SymbolInfo("m_csa", r"m_{\mathrm{csa}}", "tokens per compressed entry in CSA layers (compress rate)", "tokens"),
    SymbolInfo("m_hca", r"m_{\mathrm{hca}}", "tokens per compressed entry in HCA layers (compress rate)", "tokens"),
    SymbolInfo("n_hc", r"n_{\mathrm{hc}}", "residual streams of the hyper-connections (hc_mult)", "streams"),
    SymbolInfo("g_o", r"g_{o}", "head groups of the grouped output projection (o_groups)", "groups"),
    SymbolInfo("r_o", r"r_{o}", "rank of each group of the grouped output projection (o_lora_rank)", "features"),
    SymbolInfo("L_pre", r"L_{\mathrm{pre}}", "prompt tokens in prefill", "tokens"),
    SymbolInfo("T_gen", r"T_{\mathrm{gen}}", "tokens generated in decode", "tokens"),
    SymbolInfo("D", "D", "training tokens", "tokens"),
    SymbolInfo("t", "t", "position of a generated token in decode (summation index, 1..T_gen)", "tokens"),
    SymbolInfo("N_d", "N_d", "data-parallel ranks (ZeRO's N_d)", "ranks"),
]

LEGEND: dict[str, SymbolInfo] = {s.name: s for s in _LEGEND}

# The size names, in legend order.
NAMES: tuple[str, ...] = tuple(LEGEND)

# The SymPy assumptions of every size symbol (``symbols`` creates them so): sizes are
# positive integers, which lets closed forms simplify (sqrt(d_model**2) = d_model).
ASSUMPTIONS: dict[str, bool] = {"integer": True, "positive": True}
_NAME_IN_TEXT = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?!\w|\s*\()")


def symbols_json(*closed_forms: str) -> dict[str, dict[str, Any]]:
    """The ``symbols`` map of the JSON output: each symbol name that occurs in the printed
    closed forms -> its SymPy assumptions, meaning and unit (the legend), in legend order.

    ``{"d_model": {"assumptions": {"integer": true, "positive": true},
    "meaning": "model (residual stream) width", "unit": "features"}, ...}``.  The
    assumptions are ``ASSUMPTIONS``, those ``symbols`` creates every symbol with, so
    a reader knows ``N`` is a layer count, not SymPy's ``N()``, and ``E`` an expert count,
    not Euler's number.  ``symtrans.parse_closed_form`` reads the same names back.

    Raises:
        RuntimeError: a name that is not a symtrans symbol (a closed form is built from
            ``SYMBOLS`` only, so this is a bug).
    """
    names: set[str] = set()
    for text in closed_forms:
        names.update(_NAME_IN_TEXT.findall(text))
    unknown = sorted(names - set(LEGEND))
    if unknown:
        raise RuntimeError(f"closed form names {', '.join(unknown)}, not symtrans symbols")
    out: dict[str, dict[str, Any]] = {}
    for info in _LEGEND:
        if info.name in names:
            out[info.name] = {
                "assumptions": dict(ASSUMPTIONS),
                "meaning": info.meaning,
                "unit": info.unit,
            }
    return out
