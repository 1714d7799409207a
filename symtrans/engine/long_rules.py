"""What ``spec.Spec`` checks of a long-input encoder's attention (``Spec.encoder_attention``):
the kinds, where they apply, the sizes they need, and which counts are refused.  Plain checks
importing nothing of the engine, so ``spec.py`` calls them without a cycle;
``engine/transient_global.py`` builds the weights and FLOPs (LongT5: Guo et al. 2022 §3.1, HF
``LongT5LocalAttention`` / ``LongT5TransientGlobalAttention``; LED: Beltagy et al. 2020 §3.1 and §4,
HF ``LEDEncoderSelfAttention``).

LongT5's FLOPs and KV cache are modelled (``b_loc`` tokens per local block, ``b_glob`` tokens per
transient global token), and LED's (``w_att``, the window of every encoder layer or, when the layers'
windows differ, the largest, with ``Spec.encoder_windows`` listing each layer's; no global tokens);
their activations are not (memory is refused).
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
    if spec.encoder_windows and spec.encoder_attention != "longformer":
        raise InputError("encoder_windows (LED's window per encoder layer) needs encoder_attention longformer")
    encoder_windows(spec)


def encoder_windows(spec: Any) -> tuple[int, ...]:
    """The attention window of each encoder layer, from ``Spec.encoder_windows`` (LED's
    attention_window list, joined by "|", given when the layers' windows differ); () when it is empty
    (every layer then has w_att).

    Raises:
        InputError: an entry that is not an even positive integer, or one that does not divide the
            largest (LEDEncoder pads the input to a multiple of the largest window, and
            LEDEncoderSelfAttention's chunks need a multiple of the layer's own).
    """
    if not spec.encoder_windows:
        return ()
    if not isinstance(spec.encoder_windows, str):
        raise InputError(
            f"encoder_windows must be windows joined by '|' (text), not {type(spec.encoder_windows).__name__}"
        )
    parts = spec.encoder_windows.split("|")
    if not all(p.isascii() and p.isdigit() and int(p) > 0 and int(p) % 2 == 0 for p in parts):
        shown = spec.encoder_windows if len(spec.encoder_windows) <= 80 else spec.encoder_windows[:80] + "..."
        raise InputError(f"encoder_windows must be even positive integers joined by '|', not {shown!r}")
    windows = tuple(int(p) for p in parts)
    big = max(windows)
    odd = sorted({w for w in windows if big % w})
    if odd:
        raise InputError(
            f"encoder_windows {', '.join(map(str, odd))} do not divide the largest, {big}: LEDEncoder pads the input "
            "to a multiple of the largest window and a layer's sliding chunks then fail on lengths that are not a "
            "multiple of its own, so their FLOPs are not modelled"
        )
    return windows


def check_window_sizes(spec: Any, v: dict[str, int]) -> None:
    """Raises InputError (one sentence) where ``Spec.encoder_windows`` does not fit the sizes ``v``: w_att
    must be the largest window (the padding unit) and there must be one window per encoder layer."""
    windows = encoder_windows(spec)
    if not windows:
        return
    if v.get("w_att") != max(windows):
        raise InputError(
            f"w_att must be the largest of encoder_windows ({max(windows)}), the multiple LEDEncoder pads to, not "
            f"{v.get('w_att')}: give the windows of every layer in encoder_windows"
        )
    layers = v.get("N", v.get("N_enc"))
    if layers is not None and layers != len(windows):
        raise InputError(
            f"encoder_windows lists {len(windows)} windows for {layers} encoder layers: give one per layer"
        )


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
                "FLOPs, memory and time of LED's Longformer encoder attention are not modelled without the window "
                "w_att (and encoder_windows when the layers' windows differ, each dividing the largest); "
                "parameters are exact"
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
