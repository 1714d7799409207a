"""Presets: named Specs with provenance and the published figure.

Each preset reproduces, to the parameter, the count of its reference implementation
(``reference``); ``published`` is the figure the paper or model card prints, and
``notes`` say why the two differ.  Presets are data: adding one adds no code.
"""

from __future__ import annotations

from symtrans.base.errors import UnknownNameError
from symtrans.catalog.handcounts import handcount_presets as _handcount_presets
from symtrans.catalog.preset import Preset
from symtrans.engine.spec import Spec

__all__ = ["PRESETS", "Preset", "get"]


def _gpt2_like(**sizes: int) -> Spec:
    return Spec(
        family="decoder-only", sizes=sizes, positional="learned", norm_position="pre", final_norm=True, tie_output=True
    )


def _llama(**sizes: int) -> Spec:
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        final_norm=True,
        tie_output=False,
        norm_position="pre",
    )


def _bert(**sizes: int) -> Spec:
    return Spec(
        family="encoder-only", sizes=sizes, positional="learned", token_types=2, embedding_norm=True, pooler=True
    )


def _vaswani(**sizes: int) -> Spec:
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        positional="sinusoidal",
        final_norm=True,
        share_embeddings=True,
        tie_output=True,
    )


def _t5(**sizes: int) -> Spec:
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        positional="relative",
        norm="rmsnorm",
        bias=False,
        final_norm=True,
        norm_position="pre",
        share_embeddings=True,
        tie_output=True,
    )


_VASWANI_NOTE = (
    "The paper's figure counts one 37000-token shared embedding; torch.nn.Transformer adds biases "
    "to every projection and a final LayerNorm to each stack, which the paper does not describe."
)
_GPT2_NOTE = (
    "Radford et al. 2019 Table 2 printed 117M/345M/762M/1542M; OpenAI's gpt-2 repository later "
    "named the released checkpoints 124M/355M/774M/1558M, which these exact counts confirm. "
    "The tied LM head is counted once."
)
_GPT3_NOTE = (
    "Brown et al. 2020 Table 2.1: V 50257, n_ctx 2048, d_ff = 4 d_model, learned positions, tied head; "
    "counted as GPT-2-style dense layers (the sparse-attention layers change no parameter)."
)

PRESETS: dict[str, Preset] = {}


def _add(p: Preset) -> None:
    PRESETS[p.name] = p


_add(
    Preset(
        "transformer-base",
        _vaswani(d_model=512, d_ff=2048, h=8, N=6, V=37000, L=512),
        "Vaswani et al. 2017, Table 3 (base); V = 37000 shared BPE (§5.1)",
        "torch.nn.Transformer(512, 8, 6, 6, 2048) + one shared 37000 x 512 embedding tied to the output",
        "65M",
        65e6,
        (_VASWANI_NOTE,),
        context_source="a workload of 512 tokens, symtrans's convention: Vaswani et al. 2017 §5.1 batch by about 25,000 tokens and state no sequence length",
    )
)
_add(
    Preset(
        "transformer-big",
        _vaswani(d_model=1024, d_ff=4096, h=16, N=6, V=37000, L=512),
        "Vaswani et al. 2017, Table 3 (big); V = 37000 shared BPE (§5.1)",
        "torch.nn.Transformer(1024, 16, 6, 6, 4096) + one shared 37000 x 1024 embedding tied to the output",
        "213M",
        213e6,
        (_VASWANI_NOTE,),
        context_source="a workload of 512 tokens, symtrans's convention: Vaswani et al. 2017 §5.1 batch by about 25,000 tokens and state no sequence length",
    )
)
_add(
    Preset(
        "bert-base",
        _bert(d_model=768, d_ff=3072, h=12, N=12, V=30522, L_max=512, L=512),
        "Devlin et al. 2019 §3 (BERT-base); config.json of bert-base-uncased",
        "transformers BertModel (with pooler)",
        "110M",
        110e6,
        (
            "The paper rounds; V = 30522 WordPiece tokens, 512 learned positions, 2 token types, "
            "an embedding LayerNorm and the pooler are all counted.",
        ),
    )
)
_add(
    Preset(
        "bert-large",
        _bert(d_model=1024, d_ff=4096, h=16, N=24, V=30522, L_max=512, L=512),
        "Devlin et al. 2019 §3 (BERT-large); config.json of bert-large-uncased",
        "transformers BertModel (with pooler)",
        "340M",
        340e6,
        ("The paper rounds down.",),
    )
)
_add(
    Preset(
        "roberta-base",
        Spec(
            family="encoder-only",
            sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50265, L_max=512, L=512),
            positional="learned",
            position_offset=2,
            token_types=1,
            embedding_norm=True,
            pooler=True,
        ),
        "Liu et al. 2019; config.json of roberta-base (514 positions: 512 + padding offset 2)",
        "transformers RobertaModel (with pooler)",
        "125M",
        125e6,
        ("RoBERTa keeps 514 position rows and a single token type.",),
    )
)
_add(
    Preset(
        "albert-base-v2",
        Spec(
            family="encoder-only",
            sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=30000, L_max=512, L=512, E_emb=128),
            positional="learned",
            token_types=2,
            embedding_norm=True,
            pooler=True,
            share_layers="all",
        ),
        "Lan et al. 2020 (ALBERT) Table 1 (base: E = 128, all layers shared); config.json of albert-base-v2",
        "transformers AlbertModel (with pooler)",
        "12M",
        12e6,
        (
            "One layer's weights serve all 12 layers (num_hidden_groups = 1): parameters do not scale with N, "
            "FLOPs do. The embeddings are E_emb = 128 wide (tokens, positions, token types and their LayerNorm), "
            "then an E_emb x d_model projection with bias.",
        ),
    )
)
for _name, _d, _n, _h, _pub in (
    ("gpt2", 768, 12, 12, "117M"),
    ("gpt2-medium", 1024, 24, 16, "345M"),
    ("gpt2-large", 1280, 36, 20, "762M"),
    ("gpt2-xl", 1600, 48, 25, "1542M"),
):
    _add(
        Preset(
            _name,
            _gpt2_like(d_model=_d, d_ff=4 * _d, h=_h, N=_n, V=50257, L_max=1024, L=1024),
            f"Radford et al. 2019 Table 2; config.json of {_name}",
            "transformers GPT2LMHeadModel",
            _pub,
            float(_pub[:-1]) * 1e6,
            (_GPT2_NOTE,),
        )
    )
for _name, _n, _d, _h, _pub, _note in (
    ("gpt3-small", 12, 768, 12, "125M", ""),
    ("gpt3-medium", 24, 1024, 16, "350M", ""),
    ("gpt3-large", 24, 1536, 16, "760M", ""),
    (
        "gpt3-xl",
        24,
        2048,
        16,
        "1.3B",
        "Misprint: Table 2.1 prints 24 heads of d_head 128 for d_model 2048 "
        "(24 x 128 = 3072); d_model 2048 is kept, with 16 heads of 128. With h*d_k = d_model the count does not depend on h.",
    ),
    ("gpt3-2.7b", 32, 2560, 32, "2.7B", ""),
    ("gpt3-6.7b", 32, 4096, 32, "6.7B", ""),
    ("gpt3-13b", 40, 5120, 40, "13B", "Misprint: Table 2.1 prints d_model 5140; 40 heads x d_head 128 = 5120 is used."),
    ("gpt3-175b", 96, 12288, 96, "175B", ""),
):
    _add(
        Preset(
            _name,
            _gpt2_like(d_model=_d, d_ff=4 * _d, h=_h, N=_n, V=50257, L_max=2048, L=2048),
            "Brown et al. 2020, Table 2.1",
            "GPT-2 architecture (transformers GPT2LMHeadModel) at these sizes",
            _pub,
            float(_pub[:-1]) * (1e9 if _pub.endswith("B") else 1e6),
            tuple(x for x in (_GPT3_NOTE, _note) if x),
        )
    )
_LLAMA2 = "Touvron et al. 2023 (Llama 2) Table 1; config.json of meta-llama/Llama-2-{}-hf"
_add(
    Preset(
        "llama-2-7b",
        _llama(d_model=4096, d_ff=11008, h=32, N=32, V=32000, L_max=4096, L=4096),
        _LLAMA2.format("7b"),
        "transformers LlamaForCausalLM",
        "7B",
        7e9,
        ("d_ff = 11008 by Llama's rule: 256 * ceil((2/3 * 4 * 4096) / 256).",),
    )
)
_add(
    Preset(
        "llama-2-13b",
        _llama(d_model=5120, d_ff=13824, h=40, N=40, V=32000, L_max=4096, L=4096),
        _LLAMA2.format("13b"),
        "transformers LlamaForCausalLM",
        "13B",
        13e9,
    )
)
_add(
    Preset(
        "llama-2-70b",
        _llama(d_model=8192, d_ff=28672, h=64, h_kv=8, N=80, V=32000, L_max=4096, L=4096),
        _LLAMA2.format("70b"),
        "transformers LlamaForCausalLM",
        "70B",
        70e9,
        (
            "Grouped-query attention with 8 key/value heads; d_ff by Llama's rule with ffn_dim_multiplier 1.3, multiple_of 4096.",
        ),
    )
)
_add(
    Preset(
        "llama-3-8b",
        _llama(d_model=4096, d_ff=14336, h=32, h_kv=8, N=32, V=128256, L_max=8192, L=8192),
        "Llama 3 (Dubey et al. 2024) Table 3; config.json of meta-llama/Meta-Llama-3-8B",
        "transformers LlamaForCausalLM",
        "8B",
        8e9,
        ("V = 128256 (128000 BPE tokens + 256 special tokens), not the paper's 128000.",),
    )
)
_add(
    Preset(
        "llama-3-70b",
        _llama(d_model=8192, d_ff=28672, h=64, h_kv=8, N=80, V=128256, L_max=8192, L=8192),
        "Llama 3 (Dubey et al. 2024) Table 3; config.json of meta-llama/Meta-Llama-3-70B",
        "transformers LlamaForCausalLM",
        "70B",
        70e9,
    )
)
_add(
    Preset(
        "mistral-7b",
        _llama(d_model=4096, d_ff=14336, h=32, h_kv=8, N=32, V=32000, L_max=32768, L=8192, w=4096),
        "Jiang et al. 2023 (Mistral 7B) Table 1; config.json of mistralai/Mistral-7B-v0.1",
        "transformers MistralForCausalLM",
        "7B",
        7e9,
        ("Sliding-window attention (w = 4096) changes FLOPs and the KV cache, not parameters.",),
        context_source="Jiang et al. 2023 (Mistral 7B) Table 1: context_len 8192",
    )
)
_add(
    Preset(
        "mixtral-8x7b",
        _llama(d_model=4096, d_ff=14336, h=32, h_kv=8, N=32, V=32000, L_max=32768, L=32768, E=8, k=2),
        "Jiang et al. 2024 (Mixtral of Experts); config.json of mistralai/Mixtral-8x7B-v0.1",
        "transformers MixtralForCausalLM",
        "47B total, 13B active",
        46.7e9,
        (
            "Only the feed-forward networks are replicated 8 times; attention, embeddings and norms are shared, "
            "so '8x7B' is 46.7B, not 8 x 7.2B = 58B; 2 of 8 experts run per token (12.9B active).",
        ),
        context_source="Jiang et al. 2024 (Mixtral of Experts) §2: a context of 32k tokens",
    )
)
_add(
    Preset(
        "qwen2-0.5b",
        Spec(
            family="decoder-only",
            sizes=dict(d_model=896, d_ff=4864, h=14, h_kv=2, N=24, V=151936, L_max=131072, L=32768),
            positional="rotary",
            norm="rmsnorm",
            bias=False,
            qkv_bias=True,
            ffn="swiglu",
            final_norm=True,
            tie_output=True,
            norm_position="pre",
        ),
        "Qwen2 technical report (Yang et al. 2024) Table 1; config.json of Qwen/Qwen2-0.5B",
        "transformers Qwen2ForCausalLM",
        "0.5B",
        0.5e9,
        ("Q, K and V projections carry biases; the output projection does not.",),
        context_source="Qwen2 technical report (Yang et al. 2024) Table 1: context length 32,768 for Qwen2-0.5B",
    )
)
_add(
    Preset(
        "qwen3-0.6b",
        Spec(
            family="decoder-only",
            sizes=dict(d_model=1024, d_ff=3072, h=16, h_kv=8, d_k=128, N=28, V=151936, L_max=40960, L=32768),
            positional="rotary",
            norm="rmsnorm",
            bias=False,
            ffn="swiglu",
            qk_norm=True,
            final_norm=True,
            tie_output=True,
            norm_position="pre",
        ),
        "Qwen3 technical report (2025) Table 1; config.json of Qwen/Qwen3-0.6B",
        "transformers Qwen3ForCausalLM",
        "0.6B",
        0.6e9,
        ("head_dim 128 is explicit: h*d_k = 2048 is wider than d_model = 1024; QK-norm adds 2*d_k per layer.",),
        context_source="Qwen3-0.6B model card: context length 32,768 (max_position_embeddings 40,960)",
    )
)
_add(
    Preset(
        "gemma-2b",
        Spec(
            family="decoder-only",
            sizes=dict(d_model=2048, d_ff=16384, h=8, h_kv=1, d_k=256, N=18, V=256000, L_max=8192, L=8192),
            positional="rotary",
            norm="rmsnorm",
            bias=False,
            ffn="geglu",
            final_norm=True,
            tie_output=True,
            norm_position="pre",
        ),
        "Gemma (Gemma Team 2024) Table 1; config.json of google/gemma-2b",
        "transformers GemmaForCausalLM",
        "2B",
        2e9,
        ("Multi-query attention (h_kv = 1), head_dim 256; the sqrt(d_model) embedding scale has no parameters.",),
    )
)
_add(
    Preset(
        "stories15m",
        Spec(
            family="decoder-only",
            sizes=dict(d_model=288, d_ff=768, h=6, N=6, V=32000, L_max=256, L=256),
            positional="rotary",
            norm="rmsnorm",
            bias=False,
            ffn="swiglu",
            final_norm=True,
            tie_output=True,
            norm_position="pre",
        ),
        "karpathy/llama2.c stories15M (dim 288, 6 layers, 6 heads, hidden 768)",
        "transformers LlamaForCausalLM (tied)",
        "15M",
        15e6,
        ("Summing a saved state dict counts the tied embedding twice (24,407,712).",),
    )
)
for _name, _d, _ff, _h, _n, _pub in (
    ("t5-small", 512, 2048, 8, 6, "60M"),
    ("t5-base", 768, 3072, 12, 12, "220M"),
    ("t5-large", 1024, 4096, 16, 24, "770M"),
):
    _add(
        Preset(
            _name,
            _t5(d_model=_d, d_ff=_ff, h=_h, d_k=64, N=_n, V=32128, L_max=512, L=512),
            f"Raffel et al. 2020 §3.7; config.json of {_name} (v1.0)",
            "transformers T5ForConditionalGeneration",
            _pub,
            float(_pub[:-1]) * 1e6,
            (
                "One 32128 x d_model matrix is shared by encoder, decoder and the (tied) head; each stack has "
                "32 x h relative-position buckets and a final RMS norm; no biases.",
            ),
        )
    )
_add(
    Preset(
        "bart-base",
        Spec(
            family="encoder-decoder",
            sizes=dict(d_model=768, d_ff=3072, h=12, N=6, V=50265, L_max=1024, L=1024),
            positional="learned",
            position_offset=2,
            embedding_norm=True,
            share_embeddings=True,
            tie_output=True,
        ),
        "Lewis et al. 2020; config.json of facebook/bart-base",
        "transformers BartForConditionalGeneration",
        "140M",
        140e6,
        ("Learned positions keep L + 2 rows; final_logits_bias is a buffer, not a parameter.",),
    )
)
_add(
    Preset(
        "opt-125m",
        Spec(
            family="decoder-only",
            sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50272, L_max=2048, L=2048),
            positional="learned",
            position_offset=2,
            final_norm=True,
            tie_output=True,
            norm_position="pre",
        ),
        "Zhang et al. 2022 (OPT) Table 1; config.json of facebook/opt-125m",
        "transformers OPTForCausalLM",
        "125M",
        125e6,
        ("Learned positions keep L + 2 rows.",),
    )
)


def get(name: str) -> Preset:
    """The preset called ``name``.

    Raises:
        KeyError: one sentence naming close matches, if there is no such preset.
    """
    try:
        return PRESETS[name]
    except KeyError:
        import difflib  # only for a misspelt name: not at start-up

        close = difflib.get_close_matches(name, PRESETS, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; see 'symtrans presets'"
        raise UnknownNameError(f"unknown preset {name!r}{hint}") from None


for _p in _handcount_presets():
    _add(_p)
