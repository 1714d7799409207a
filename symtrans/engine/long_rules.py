"""What ``spec.Spec`` checks of a long-input encoder's attention (``Spec.encoder_attention``):
the kinds, where they apply, and why their FLOPs are refused.  Plain checks importing nothing of
the engine, so ``spec.py`` calls them without a cycle; ``engine/transient_global.py`` builds the
weights (LongT5: Guo et al. 2022 §3.1, HF ``LongT5LocalAttention`` /
``LongT5TransientGlobalAttention``; LED: Beltagy et al. 2020 §3.1 and §4, HF ``LEDEncoderSelfAttention``).
"""

from __future__ import annotations

from typing import Any

from symtrans.base.errors import InputError

ENCODER_ATTENTIONS = ("full", "local", "transient-global", "longformer")


def check_options(spec: Any) -> None:
    """Raises InputError (one sentence) for local or transient-global attention outside an
    encoder-decoder with T5's relative positions."""
    if spec.encoder_attention == "longformer" and spec.family != "encoder-decoder":
        raise InputError("encoder_attention longformer is LED's: an encoder-decoder")
    if spec.encoder_attention in ("local", "transient-global") and (
        spec.family != "encoder-decoder" or spec.positional != "relative"
    ):
        raise InputError(
            "encoder_attention local or transient-global is LongT5's: an encoder-decoder with relative positions"
        )


def check_workload(spec: Any) -> None:
    """Raises InputError (one sentence): LongT5's encoder attends in blocks of local_radius + 1 tokens
    (and, transient-global, to one summary per global_block_size tokens), which symtrans does not model."""
    if spec.encoder_attention == "longformer":
        raise InputError(
            "FLOPs, memory and time of LED's Longformer encoder attention (a sliding attention_window and "
            "global tokens with their own projections) are not modelled; parameters are exact"
        )
    if spec.encoder_attention != "full":
        raise InputError(
            f"FLOPs, memory and time of LongT5's {spec.encoder_attention} encoder attention (blocks of "
            "local_radius + 1 tokens, global_block_size summaries) are not modelled; parameters are exact"
        )
