"""What ``spec.Spec`` checks of a long-input encoder's attention (``Spec.encoder_attention``):
the kinds, where they apply, the sizes they need, and which counts are refused.  Plain checks
importing nothing of the engine, so ``spec.py`` calls them without a cycle;
``engine/transient_global.py`` builds the weights and FLOPs (LongT5: Guo et al. 2022 §3.1, HF
``LongT5LocalAttention`` / ``LongT5TransientGlobalAttention``; LED: Beltagy et al. 2020 §3.1 and §4,
HF ``LEDEncoderSelfAttention``).

LongT5's FLOPs and KV cache are modelled (``b_loc`` tokens per local block, ``b_glob`` tokens per
transient global token), and LED's (``w_att``, one window for every encoder layer, no global
tokens); their activations are not (memory is refused).
"""

from __future__ import annotations

from typing import Any

from symtrans.base.errors import InputError

ENCODER_ATTENTIONS = ("full", "local", "transient-global", "longformer")


def check_options(spec: Any) -> None:
    """Raises InputError (one sentence) for local or transient-global attention outside an
    encoder-decoder with T5's relative positions, or for LongT5's block sizes without the
    attention they size."""
    if spec.encoder_attention == "longformer" and spec.family != "encoder-decoder":
        raise InputError("encoder_attention longformer is LED's: an encoder-decoder")
    if spec.encoder_attention in ("local", "transient-global") and (
        spec.family != "encoder-decoder" or spec.positional != "relative"
    ):
        raise InputError(
            "encoder_attention local or transient-global is LongT5's: an encoder-decoder with relative positions"
        )
    v = dict(spec.sizes)
    if "b_loc" in v and spec.encoder_attention not in ("local", "transient-global"):
        raise InputError("b_loc (tokens per local block) needs encoder_attention local or transient-global (LongT5)")
    if "w_att" in v and spec.encoder_attention != "longformer":
        raise InputError("w_att (the Longformer attention window) needs encoder_attention longformer (LED)")
    if "w_att" in v and v["w_att"] % 2:
        raise InputError(f"w_att={v['w_att']} must be even: LED attends w_att / 2 positions on each side")
    if "b_glob" in v and spec.encoder_attention != "transient-global":
        raise InputError("b_glob (tokens per global token) needs encoder_attention transient-global (LongT5)")


def check_workload(spec: Any, memory: bool = False) -> None:
    """Raises InputError (one sentence) where a count of a long-input encoder is not modelled:
    LED's without one window ``w_att``, LongT5's without its block sizes (``b_loc``, and ``b_glob``
    for transient-global), and, with ``memory``, the activations of either."""
    if spec.encoder_attention == "full":
        return
    v = dict(spec.sizes)
    if spec.encoder_attention == "longformer":
        if "w_att" not in v:
            raise InputError(
                "FLOPs, memory and time of LED's Longformer encoder attention need one attention window w_att "
                "for every encoder layer (a list of different windows is not modelled); parameters are exact"
            )
        if memory:
            raise InputError(
                "memory of LED's Longformer encoder attention (activations of the chunked window) is not "
                "modelled; parameters, FLOPs and the KV cache are exact"
            )
        return
    need = ("b_loc", "b_glob") if spec.encoder_attention == "transient-global" else ("b_loc",)
    missing = [n for n in need if n not in v]
    if missing:
        raise InputError(
            f"FLOPs, memory and time of LongT5's {spec.encoder_attention} encoder attention need "
            f"{' and '.join(missing)} (local_radius + 1; global_block_size); parameters are exact"
        )
    if memory:
        raise InputError(
            f"memory of LongT5's {spec.encoder_attention} encoder attention (activations of blocked scores) is not "
            "modelled; parameters, FLOPs and the KV cache are exact"
        )
