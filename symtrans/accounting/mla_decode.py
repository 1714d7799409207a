"""Multi-head latent attention at decode, both ways: ``expanded`` (transformers' eager
``DeepseekV3Attention``, what ``engine.mla`` counts) and ``absorbed`` (DeepSeek-V2 §2.1.3;
vLLM's and SGLang's MLA decode kernels, vllm/v1/attention/backends/mla/common.py).

Per layer, one new token attending ``ctx`` positions (itself included), heads h:

* expanded: ``kv_b_proj`` re-expands every cached latent into h keys and values,
  2·ctx·r_kv·h·(d_nope + d_v); scores over d_nope + d_rope, 2·h·ctx·(d_nope + d_rope);
  the weighted sum of values, 2·h·ctx·d_v;
* absorbed: W_UK is folded into the query (the new token's nope part times W_UK per head,
  2·h·d_nope·r_kv), scores run against the cached latent and the shared rotary key,
  2·h·ctx·(r_kv + d_rope), the weighted sum stays in the latent, 2·h·ctx·r_kv, and W_UV
  maps it to each head's value once, 2·h·r_kv·d_v.

Everything else (query maps, the down-projection of the new token, W_O, the FFN, the head)
is the same both ways, so absorbed = expanded − the saving per token and layer::

    S(ctx) = 2·h·ctx·(r_kv·(d_nope + d_v) + d_nope + d_v − 2·r_kv) − 2·h·r_kv·(d_nope + d_v)

summed over the decoded tokens (ctx_t = L_pre + t) and the N layers.  Prefill is the same
both ways here (vLLM runs prefill expanded).  Units: FLOPs (2 per multiply-accumulate).
"""

from __future__ import annotations

import sympy as sp

from symtrans.base.errors import InputError

FORMS = ("absorbed", "expanded")

ctx, h, r_kv, d_nope, d_rope, d_v = sp.symbols("ctx h r_kv d_nope d_rope d_v", positive=True, integer=True)

EXPANDED = 2 * ctx * r_kv * h * (d_nope + d_v) + 2 * h * ctx * (d_nope + d_rope) + 2 * h * ctx * d_v
ABSORBED = 2 * h * d_nope * r_kv + 2 * h * ctx * (r_kv + d_rope) + 2 * h * ctx * r_kv + 2 * h * r_kv * d_v
SAVING = sp.expand(EXPANDED - ABSORBED)


def check_form(form: str) -> str:
    """``form`` if it is one of FORMS; ``InputError`` otherwise."""
    if form not in FORMS:
        raise InputError(f"--mla must be absorbed or expanded, not {str(form)[:40]!r}")
    return form


def saving(values: dict, batch: int, prompt: int, generate: int) -> sp.Integer:
    """FLOPs the absorbed form saves over the expanded one in the decode of ``generate``
    tokens after ``prompt`` (B sequences, every MLA layer): B·N·Σ_t S(L_pre + t)."""
    layers = values["N"]
    per = sp.Poly(
        SAVING.subs(
            {
                h: values["h"],
                r_kv: values["r_kv"],
                d_nope: values["d_nope"],
                d_rope: values["d_rope"],
                d_v: values["d_v"],
            }
        ),
        ctx,
    )
    a, c = (per.coeff_monomial(ctx), per.coeff_monomial(1))
    sum_ctx = generate * prompt + generate * (generate + 1) // 2  # Σ_{t=1..T} (L_pre + t)
    return sp.Integer(batch * layers * (a * sum_ctx + c * generate))


def decode_flops_per_token(spec, values: dict, context: int, form: str) -> sp.Integer:
    """FLOPs of decoding one token that attends ``context`` positions (itself included),
    the whole model, at batch 1, in ``form``: the engine's expanded count
    (``flops.decode_expr`` at L_pre = context − 1, T_gen = 1), less ``saving``
    when absorbed."""
    from symtrans.accounting.flops import decode_expr, evaluate

    check_form(form)
    if not spec.mla:
        raise InputError("--mla applies to multi-head latent attention (DeepSeek-V2/V3)")
    v = {**values, "B": 1, "L_pre": context - 1, "T_gen": 1}
    expanded = sp.Integer(evaluate(decode_expr(spec), v))
    return expanded if form == "expanded" else expanded - saving(values, 1, context - 1, 1)
