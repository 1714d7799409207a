"""The typed record of one model type: everything symtrans knows about a ``model_type`` of a
Hugging Face ``config.json``, in one place (the style of transformers' ``models/<type>/``).

A :class:`ModelType` states the transformers 5.x config class whose defaults apply, the model
class whose parameters are counted, the keys of the config class, their defaults and aliases,
the keys that change no parameter (each with its reason, from :data:`WHY`), the keys the
modeling file reads with ``getattr``, and the reader function that maps a config dict to a
:class:`~symtrans.engine.spec.Spec`.  ``catalog/models/__init__.py`` registers the records;
``catalog/hf_config.py`` assembles its tables from them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from symtrans.catalog.reader import Reader
from symtrans.engine.spec import Spec

# Why a key changes no parameter: the reasons a record's ``no_param_effect`` cites (one text
# per reason, so the same reason reads the same for every type).  tests/test_model_types.py
# changes every key of every config class and requires that symtrans's count and
# transformers' move identically, or that neither moves and the key is declared with one of these.
WHY: dict[str, str] = {
    "meta": "bookkeeping of the config (architectures, labels, dtype, version, output switches)",
    "dropout": "a dropout or layer-drop probability: training noise, no weights",
    "init": "the initialisation scale: weight values, not shapes",
    "eps": "a norm's epsilon: a constant, not a weight",
    "act": "an activation function: no weights",
    "token": "a special token id: which row, not how many rows (a padding_idx must lie inside the vocabulary)",
    "cache": "a generation or KV-cache switch, or an extra output of the forward pass",
    "rope": "rotary settings: fixed frequencies held in buffers, no weights",
    "scale": "a constant scale factor in the forward pass (scores, embeddings or outputs), no weights",
    "mask": "the attention mask (causal or bidirectional): no weights",
    "window": "the attention pattern (sliding window, layer types): FLOPs and KV cache, not weights; read as w",
    "no head": "the model counted has no task head and no LM head to tie or summarise",
    "loss": "a training-loss setting (router auxiliary loss, router noise)",
    "tp": "tensor-parallel slicing of the same matrices at training time",
    "buckets": "the largest bucketed distance: bucket boundaries, not the number of buckets",
    "positions": "the longest sequence: rotary positions have no table, so no weights (read as L)",
    # --- decoder types (types-dec)
    "clip": "a clamp on the query, key and value activations in the forward pass, no weights",
    "parallel": "the parallel residual block: the same maps and norms, summed in parallel (FLOPs unchanged)",
    "alibi": "ALiBi or rotary positions: neither has weights",
    # --- types-moe
    "routing": "how the router picks and weighs experts (top-k method, groups, scaling, normalisation): no weights",
    "mtp": "DeepSeek-V3's multi-token-prediction layer: in the checkpoint, not built by transformers 5.x",
    "mla dims": "MLA's post-init bookkeeping (qk_head_dim, head_dim = qk_rope_head_dim): derived, never read for shapes",
    "kv heads": "multi-head latent attention expands keys and values for all h heads: num_key_value_heads sets no shape",
    "l2 norm": "Llama 4's QK norm is an L2 norm without weights",
    "rope layers": "which layers rotate (NoPE layers): rotary frequencies are buffers, no weights",
    # --- DeepSeek Sparse Attention (catalog/models/dsa.py)
    "topk": "DeepSeek Sparse Attention's top-k: how many keys each query reads (FLOPs, read as k_idx), no weights",
    # --- DeepSeek-V4 (catalog/models/deepseek_v4.py)
    "sinkhorn": "the Sinkhorn-Knopp iterations that make the hyper-connections' mixing matrix doubly stochastic: "
    "no weights",
    "swiglu clamp": "a clamp on the SwiGLU gate and up activations in the forward pass, no weights",
    # --- encoders (types-enc)
    "frozen": "fills the same P x d position table with fixed sinusoids (frozen, still a parameter: counted)",
    "pooler head": "DeBERTa's ContextPooler belongs to the task heads, not to DebertaV2Model",
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "precision": "the numerical precision of a computation (softmax in fp32): no weights",
    "residual": "which tensor the residual connection adds (normed or not): no weights",
    "mpt ignores": "ignored by transformers 5.x's MptForCausalLM, which always builds bias-free maps, a "
    "4 x d_model MLP, weight-only LayerNorms and ALiBi without a position table (MosaicML's code honoured it)",
    "derived": "written by the config class from another key (GPTBigCode: 1 or n_head, from multi_query), "
    "which is what the model reads",
    "text ties": "the wrapper's own tie flag, which its language model never reads: that model ties lm_head by "
    "the text config's tie_word_embeddings alone",
    "image tokens": "which token ids stand for images or videos, how many per image, and which image "
    "features are kept: the placement of the vision tower's output, no weights",
    "unread copy": "a top-level copy of a text model size that the wrapper's modeling code never reads "
    "(it builds from text_config's)",
    # --- state-space models (catalog/models/ssm.py)
    "kernel": "which implementation of the same scan runs (CUDA kernels, mamba.py, associative scan, the chunk "
    "length of Mamba 2's chunked scan: FLOPs, read as L_chunk): no weights",
    "no dt_proj": "Mamba 2 has no dt_proj: the time-step rank is stored but shapes no weight",
    "norm order": "whether a norm runs before or after its gate: the same weights",
    "unread": "read by no module transformers 5.x builds for this type (the layers are built without it)",
    # --- seq2seq
    "augment": "SpecAugment masking of the input features in training: no weights in this model",
    "generation": "a generation setting (suppressed tokens, timestamp filtering): no weights",
    "longt5_tie": (
        "LongT5Config forces tying: false only turns off the decoder output scaling, and LongT5's checkpoints "
        "store only shared.weight (transformers#47620)"
    ),
    "blocks": "LongT5's local radius and global block size: which tokens attend to which, no weights",
    "longformer window": "Longformer's attention window per layer (LED): which tokens attend to which, no weights",
    # --- audio encoders (catalog/models/audio.py)
    "norm place": "where the norms run (after each sublayer, or before it with the encoder's norm after the "
    "last layer): the same norms, no weights added or removed",
}


def no_effect(**groups: str) -> dict[str, str]:
    return {key: WHY[why] for why, keys in groups.items() for key in keys.split()}


DECODER_NO_EFFECT: dict[str, str] = dict(
    positions="max_position_embeddings",
    dropout="attention_dropout",
    token="bos_token_id eos_token_id pad_token_id",
    act="hidden_act",
    init="initializer_range",
    eps="rms_norm_eps",
    rope="rope_parameters",
    cache="use_cache",
)


# A key whose class default has no padding row: ``ModelType.pad_default`` of a type whose token
# embedding takes no ``padding_idx`` (GPT-2, T5) or that symtrans does not check.
NO_PADDING = object()


@dataclass(frozen=True)
class ModelType:
    """One model type of a Hugging Face ``config.json``.

    Attributes:
        model_type: the ``model_type`` string of the config.json.
        config_class: the transformers 5.x config class whose defaults apply.
        model_class: the transformers 5.x class whose ``parameters()`` symtrans counts.
        read: the reader, ``Reader -> Spec`` (refuses with ``ConfigError``: one sentence).
        defaults: the config class's defaults of the keys ``read`` reads (None: derived; the
            reader says how in a note).
        config_keys: every key of the config class (its ``__init__`` fields, ``to_dict()``
            keys and ``attribute_map`` aliases, less PretrainedConfig's own); checked against
            the installed transformers by tests/test_model_types.py.
        no_param_effect: key -> why it changes no parameter (a text of ``WHY``).
        aliases: the class's ``attribute_map``, alias -> canonical key.
        getattr_keys: keys that are no field but that the modeling file reads with getattr,
            changing the count (audited like fields).
        workload_getattr_keys: such keys that change the workload (windows), not parameters.
        getattr_quiet: such keys that change nothing counted.
        legacy_keys: keys that published checkpoints' config.json files still carry and the
            5.x config class either pops into one of its fields (the reader reads them, e.g.
            LFM2's ``block_ff_dim``) or never reads (no modeling code reads them, e.g. Mamba's
            original ``d_model``): known, so never noted as unknown nor taken for a misspelling.
        pad_default: the class default of ``pad_token_id`` where the token embedding uses it
            as ``padding_idx`` (checked to be a row), else ``NO_PADDING``.
        text_only: a language model that exists only inside a multimodal wrapper (read from
            a ``text_config``, never a top-level model_type).
        family: a short name of the record's module family, for listings.
    """

    model_type: str
    config_class: str
    model_class: str
    read: Callable[[Reader], Spec]
    defaults: Mapping[str, Any]
    config_keys: frozenset[str]
    no_param_effect: Mapping[str, str]
    aliases: Mapping[str, str] = field(default_factory=dict)
    getattr_keys: tuple[str, ...] = ()
    workload_getattr_keys: tuple[str, ...] = ()
    getattr_quiet: tuple[str, ...] = ()
    legacy_keys: frozenset[str] = frozenset()
    pad_default: Any = NO_PADDING
    text_only: bool = False
    family: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.no_param_effect) - self.config_keys
        if unknown:  # a reason for a key the class does not have is a typo in the record
            raise RuntimeError(f"{self.model_type}: no_param_effect names keys outside config_keys: {sorted(unknown)}")
        bad = set(self.no_param_effect.values()) - set(WHY.values())
        if bad:
            raise RuntimeError(f"{self.model_type}: no_param_effect reasons must come from WHY: {sorted(bad)}")


def keys(text: str) -> frozenset[str]:
    """A record's ``config_keys`` from a whitespace-separated list (as ``dir`` prints them)."""
    return frozenset(text.split())
