"""The checkpoint a config.json describes: its ``torch_dtype``/``dtype`` and its
``quantization_config``, read without importing the weight formats (``quantization``)
unless the config is quantized, so that counting a config.json's parameters does not pay for
them (issue 26).  ``quantization`` re-exports ``Checkpoint`` and gives
``checkpoint_from_config`` with its own parser; ``hf_config`` passes that parser only for a
quantized config.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


def _show(v) -> str:
    import json

    return json.dumps(v) if isinstance(v, (str, bool, int, type(None))) else type(v).__name__


_TORCH_DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32", "half": "fp16"}


@dataclass(frozen=True)
class Checkpoint:
    """How a config.json says its checkpoint stores the weights.

    Attributes:
        dtype: ``torch_dtype``/``dtype`` as a ``memory.DTYPES`` name, or None if not given.
        quantization: its ``quantization_config``, or None.
        dtype_problem, quantization_problem: why the bytes cannot be counted from it
            (an unknown dtype; an unsupported quantization_config); empty when they can.
            Commands that count bytes refuse with them unless --dtype / --quantization
            override (``weight_format``).
        notes: what was read, for the output.
        serving_context: vLLM's default max_model_len where the config's rope scaling
            makes it differ from max_position_embeddings (``vllm_profile.derived_max_model_len``).
        max_positions: the config's ``max_position_embeddings`` (a positive integer, else None):
            vLLM's default max_model_len for a model whose Spec has no position limit ``L_max``
            (Jamba, without positions).
    """

    dtype: str | None = None
    quantization: Any = None  # a quantization.Quantization (not imported here: see the module docstring)
    dtype_problem: str = ""
    quantization_problem: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    serving_context: int | None = None
    max_positions: int | None = None


def checkpoint_from_config(cfg: dict, from_config: Callable | None = None) -> Checkpoint:
    """The Checkpoint of a parsed config.json (never raises: problems are recorded).

    ``from_config`` is the parser of a ``quantization_config`` (``quantization.from_config``:
    ``(quantization_config, dtype) -> Quantization``, raising ValueError); it must be given
    when the config has one (a RuntimeError otherwise: a caller's error).
    """
    notes: list[str] = []
    dtype, dtype_problem, quant_problem = None, "", ""
    given = [(k, cfg[k]) for k in ("dtype", "torch_dtype") if cfg.get(k) is not None]
    names = {_TORCH_DTYPES.get(v) if isinstance(v, str) else None for _, v in given}
    if given:
        if None in names:
            bad = next(v for _, v in given if not isinstance(v, str) or v not in _TORCH_DTYPES)
            dtype_problem = f"{given[0][0]} {_show(bad)} is not a dtype symtrans knows (float16, bfloat16, float32)"
        elif len(names) > 1:
            dtype_problem = f"dtype and torch_dtype disagree ({_show(given[0][1])} vs {_show(given[1][1])})"
        else:
            dtype = names.pop()
            notes.append(f"weights in {dtype}: the config's {given[0][0]} is {_show(given[0][1])}")
    quant = None
    if "quantization_config" in cfg and cfg["quantization_config"] is not None:
        if from_config is None:
            raise RuntimeError("a quantization_config needs its parser (quantization.from_config)")
        try:
            quant = from_config(cfg["quantization_config"], dtype)
            notes.append(f"quantized weights from the config's quantization_config: {quant.name}")
        except ValueError as e:
            quant_problem = str(e)
    from symtrans.accounting.vllm_profile import derived_max_model_len

    pos = cfg.get("max_position_embeddings")
    pos = pos if isinstance(pos, int) and not isinstance(pos, bool) and 0 < pos <= 10**8 else None
    return Checkpoint(dtype, quant, dtype_problem, quant_problem, tuple(notes), derived_max_model_len(cfg), pos)
