"""The class a config.json's ``architectures`` names, where it differs from the class
symtrans counts for the model type (issue 25.6).

``spec_from_config`` counts one class per model type (``hf_config.CLASSES``: BertModel for
``bert``).  A checkpoint's config.json names the class that saved it in ``architectures``
(``["BertForMaskedLM"]``); ``inspect`` compares the stored tensors with that class, so it
counts that class where symtrans models it:

* the masked-LM classes of the BERT-like encoders (BertForMaskedLM, RobertaForMaskedLM,
  XLMRobertaForMaskedLM, AlbertForMaskedLM, DistilBertForMaskedLM, ElectraForMaskedLM):
  the encoder without its pooler (``add_pooling_layer=False``) plus the masked-LM head,
  dense d_model -> E (E_emb, or d_model) with bias, LayerNorm of width E, and a decoder
  E -> V with a V bias, its matrix the token embedding (``tie_word_embeddings``, True by
  default in each of these config classes; an untied one is not modelled).  Checked
  against each class built on the meta device (tests/test_inspect_types.py).

Any other class is counted as the model type's class, with a note naming both.
"""

from __future__ import annotations

from typing import Any

from symtrans.engine.spec import Spec

# model_type -> its masked-LM class (transformers 5.x models/<type>/modeling_<type>.py)
MASKED_LM = {
    "bert": "BertForMaskedLM",
    "roberta": "RobertaForMaskedLM",
    "xlm-roberta": "XLMRobertaForMaskedLM",
    "albert": "AlbertForMaskedLM",
    "distilbert": "DistilBertForMaskedLM",
    "electra": "ElectraForMaskedLM",
}


def named_class(cfg: dict[str, Any]) -> str | None:
    """The one class ``architectures`` names, or None (absent, empty, several, not text)."""
    arch = cfg.get("architectures")
    if isinstance(arch, list) and len(arch) == 1 and isinstance(arch[0], str) and arch[0]:
        return arch[0]
    return None


def follow_architectures(
    cfg: dict[str, Any], spec: Spec, notes: tuple[str, ...], counted: str
) -> tuple[Spec, tuple[str, ...]]:
    """``(spec, notes)`` of the class ``cfg["architectures"]`` names.

    Args:
        cfg: the parsed config.json.
        spec, notes: ``spec_from_config(cfg)``'s, which count ``counted`` (e.g. BertModel).
        counted: the transformers class ``spec`` counts.

    Returns:
        The spec and notes unchanged when ``architectures`` names ``counted`` or nothing;
        the masked-LM class's spec (no pooler, MLM head) for a class of ``MASKED_LM``;
        otherwise ``spec`` with one note more, saying the named class is counted as
        ``counted``.
    """
    cls = named_class(cfg)
    if cls is None or cls == counted:
        return spec, notes
    mt = cfg.get("model_type")
    # Untied (tie_word_embeddings false), transformers 5 keeps decoder.bias apart from the
    # head's bias: two V vectors, which the Spec's MLM head (one V bias) does not model.
    tied = cfg.get("tie_word_embeddings", True) is True
    if MASKED_LM.get(mt) == cls and spec.family == "encoder-only" and tied:
        # the base class's notes on its pooler and "no task head" no longer hold
        kept = tuple(
            n
            for n in notes
            if not n.startswith(f"counted as transformers {counted}")
            and not (n.startswith(f"{counted} ") and "task head" in n)
        )
        head = (
            f"counted as transformers {cls} (config.json's architectures): {counted} without its pooler "
            "(add_pooling_layer=False) and the masked-LM head: dense + LayerNorm + decoder "
            "tied to the token embedding + a V bias"
        )
        return spec.replace(pooler=False, mlm_head=True, tie_output=True), (head, *kept)
    return spec, (
        *notes,
        f"config.json's architectures names {cls}, which symtrans does not model: counted as {counted} "
        "(tensors of its other modules show below as unexpected)",
    )


__all__ = ["MASKED_LM", "follow_architectures", "named_class"]
