"""The workload one command counts, resolved once and read by every output.

``flops``, ``memory``, ``time``, ``report`` (its headline, its FLOPs and usage sections and
its charts), the notebook's ``Model.flops`` and ``diff`` all substitute the same sizes:
``resolve_workload`` is the only place that decides them.  Before it existed the rule
was written out nine times, twice differently: ``flops t5-small --set L_src=512
--seq-len 128`` counted L_src = 512 while the report of the same command counted
L_src = 128 in its headline and 512 in its chart.

The rule (one per stack):

* ``L`` (the sequence of an encoder-only or decoder-only model) is ``--seq-len`` when
  given, else the spec's ``L`` (``catalog.resolve.default_seq_len`` always puts one there,
  with its source).
* An encoder-decoder's ``L_src`` and ``L_tgt`` are the spec's own (``--set L_src=512``)
  when it carries them, else that ``L``: an explicit per-stack length is more specific
  than the one length ``--seq-len`` gives both stacks.
* ``L_pre`` (prompt tokens) and ``T_gen`` (generated tokens) are only set when given.

The symbolic shapes the Cost tree is built at (``architectures.Workload``: symbols B, L,
L_src, L_tgt and the mask) are ``Workload.tree()``; this object holds their numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from symtrans.base.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from symtrans.engine.architectures import Workload as TreeWorkload
    from symtrans.engine.spec import Spec


@dataclass(frozen=True)
class Workload:
    """The numbers one command counts at (all exact positive integers).

    Attributes:
        batch: sequences per batch ``B``.
        seq_len: tokens per sequence ``L`` (for an encoder-decoder: the length that
            fills a stack without a length of its own).
        src, tgt: an encoder-decoder's encoder and decoder tokens ``L_src``, ``L_tgt``
            (None for the other families).
        prompt, generated: prompt tokens ``L_pre`` and generated tokens ``T_gen`` of the
            inference modes, None unless given.
        window: the sliding window ``w`` of the spec (tokens), None without one.
        mask: how self-attention scores are counted (``engine.conventions.MASK_MODES``).
        seq_len_source: where ``seq_len`` comes from, in words (``--seq-len``, a preset's
            documented context, symtrans's default ...).
    """

    batch: int
    seq_len: int
    src: int | None = None
    tgt: int | None = None
    prompt: int | None = None
    generated: int | None = None
    window: int | None = None
    mask: str = "full"
    seq_len_source: str = ""

    @property
    def lengths(self) -> tuple[tuple[str, int], ...]:
        """(symbol name, tokens) of each stack's sequence: ``(("L", n),)`` or
        ``(("L_src", s), ("L_tgt", t))``."""
        if self.src is not None and self.tgt is not None:
            return (("L_src", self.src), ("L_tgt", self.tgt))
        return (("L", self.seq_len),)

    @property
    def tokens(self) -> int:
        """Tokens one forward step produces an output for: B*L, or B*L_tgt (decoder)."""
        return self.batch * (self.tgt if self.tgt is not None else self.seq_len)

    def sizes(self) -> dict[str, int]:
        """The workload's own sizes: B, L (L_src, L_tgt; L_pre, T_gen when given)."""
        out = {"B": self.batch, "L": self.seq_len}
        if self.src is not None and self.tgt is not None:
            out.update(L_src=self.src, L_tgt=self.tgt)
        if self.prompt is not None:
            out["L_pre"] = self.prompt
        if self.generated is not None:
            out["T_gen"] = self.generated
        return out

    def values(self, spec: Spec) -> dict[str, int]:
        """Every size to substitute into ``spec``'s closed forms: the model's and the
        workload's (a new dict)."""
        return {**spec.values, **self.sizes()}

    def describe(self) -> str:
        """``B=1, L_src=512, L_tgt=128`` (as the CLI prints it)."""
        return ", ".join(f"{n}={v}" for n, v in (("B", self.batch), *self.lengths))

    def tree(self) -> TreeWorkload:
        """The symbolic shapes the Cost tree is built at, with this workload's mask."""
        from symtrans.engine.architectures import Workload as TreeWorkload

        return TreeWorkload(mask=self.mask)


def _positive(n: object, what: str) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise InputError(f"{what} must be a positive integer, not {n!r}")
    return n


def resolve_workload(
    spec: Spec,
    batch: int = 1,
    seq_len: int | None = None,
    *,
    prompt: int | None = None,
    generated: int | None = None,
    mask: str = "full",
    seq_len_source: str = "",
    v4_counted: bool = False,
) -> Workload:
    """The workload of one command on ``spec`` (the module docstring states the rule).

    Args:
        spec: the model (its ``L``, and ``L_src``/``L_tgt`` when set, are the defaults).
        batch: sequences ``B``; seq_len: ``--seq-len`` or None for the spec's ``L``.
        prompt, generated: ``--prefill``/``--prompt`` and ``--generate`` tokens, or None.
        mask: ``full``, ``causal`` or ``half``.
        seq_len_source: where the default ``L`` comes from (``Resolved.seq_len_source``);
            ``--seq-len`` when ``seq_len`` is given.
        v4_counted: the workload of DeepSeek-V4's FLOPs (``mixer_rules.v4_flops``), which
            ``Spec.check_workload`` otherwise refuses.

    Raises:
        InputError: a batch or length that is not a positive integer (bools and floats
            included), no length at all (the spec has no ``L`` and none is given), an
            unknown mask, or sizes outside the spec's option ranges at this workload
            (``Spec.check_sizes``).
    """
    from symtrans.engine.conventions import MASK_MODES  # no SymPy: the generated fast path uses this too

    batch = _positive(batch, "B")
    seq_len = _positive(seq_len, "L")
    prompt = _positive(prompt, "the prompt length")
    generated = _positive(generated, "the generated tokens")
    if mask not in MASK_MODES:
        raise InputError(f"mask must be one of {', '.join(MASK_MODES)}, not {mask!r}")
    v = spec.values
    if seq_len is not None:
        source = "--seq-len"
    else:
        seq_len, source = v.get("L"), seq_len_source
        if seq_len is None:
            raise InputError("give --seq-len (the model has no sequence length L)")
    src = tgt = None
    if spec.family == "encoder-decoder":
        src, tgt = v.get("L_src", seq_len), v.get("L_tgt", seq_len)
    wl = Workload(
        batch=batch,
        seq_len=seq_len,
        src=src,
        tgt=tgt,
        prompt=prompt,
        generated=generated,
        window=v.get("w"),
        mask=mask,
        seq_len_source=source,
    )
    spec.check_sizes(
        wl.values(spec), workload=True, v4_counted=v4_counted
    )  # the option ranges at this workload (global_tokens <= L)
    return wl
