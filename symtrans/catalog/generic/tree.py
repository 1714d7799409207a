"""The Cost tree of a generic model: one Step per parameter tensor, one Cost per module,
repeated modules as one Cost per kind with its count as multiplicity.

A Step's role is named only where the module's class and name make it certain (an
``nn.Linear`` called ``q_proj`` is a query projection, an ``nn.Embedding`` called
``embed_tokens`` the token embedding, a class whose name says Norm a norm); otherwise
the role is ``Role.GENERIC`` and the label is the tensor's module path.
"""

from __future__ import annotations

import sympy as sp

from symtrans.catalog.generic.structure import Group, Node
from symtrans.engine.cost import Cost, Step
from symtrans.engine.roles import Block, Role

_LINEAR_ROLES = {
    "q_proj": Role.Q_PROJ,
    "k_proj": Role.K_PROJ,
    "v_proj": Role.V_PROJ,
    "o_proj": Role.O_PROJ,
    "gate_proj": Role.FFN_GATE,
    "up_proj": Role.FFN_UP,
    "down_proj": Role.FFN_DOWN,
    "lm_head": Role.LM_HEAD,
}
_EMBEDDING_ROLES = {
    "embed_tokens": Role.TOKEN_EMBEDDING,
    "wte": Role.TOKEN_EMBEDDING,
    "word_embeddings": Role.TOKEN_EMBEDDING,
    "wpe": Role.POSITION_EMBEDDING,
    "position_embeddings": Role.POSITION_EMBEDDING,
    "token_type_embeddings": Role.TYPE_EMBEDDING,
}
_LAYER_CONTAINERS = ("layers", "layer", "h", "block", "blocks")


def role_of(module_name: str, module_class: str, tensor: str) -> Role:
    """The role of ``tensor`` of the module ``module_name`` (its attribute name) of class
    ``module_class``, where certain; else ``Role.GENERIC``."""
    if module_class == "Linear" and module_name in _LINEAR_ROLES:
        return _LINEAR_ROLES[module_name]
    if module_class == "Embedding" and module_name in _EMBEDDING_ROLES:
        return _EMBEDDING_ROLES[module_name]
    if "Norm" in module_class and tensor in ("weight", "bias"):
        return Role.NORM
    if module_name == "experts":
        return Role.EXPERTS
    return Role.GENERIC


class Builder:
    """Turns the real build's Node tree into Costs, with the fitted forms (quantity name ->
    expression, None where numeric) and count symbols for kinds no key counts."""

    def __init__(self, forms: dict[str, sp.Expr | None], count_symbol) -> None:
        self.forms = forms
        self.count_symbol = count_symbol  # label -> Symbol (a new N_<label>)
        self.count_values: dict[str, int] = {}

    def dim(self, name: str, value: int) -> sp.Expr:
        f = self.forms.get(name)
        return sp.Integer(value) if f is None else f

    def cost(self, node: Node, name: str, block: Block = Block.OTHER, mult: sp.Expr = sp.Integer(1)) -> Cost:
        steps = []
        last = node.path.split(".")[-1] if node.path else ""
        for t in node.tensors:
            params = sp.Integer(1)
            for i, d in enumerate(t.shape):
                params *= self.dim(f"{t.qname}:{i}", d)
            label = f"{node.path}.{t.name}" if node.path else t.name
            steps.append(
                Step(
                    label=label,
                    role=role_of(last, t.module_class, t.name),
                    params=params,
                    bias=t.name == "bias",
                    shape=" x ".join(str(self.dim(f"{t.qname}:{i}", d)) for i, d in enumerate(t.shape)),
                )
            )
        children = [self.cost(c, c.name, _block(c.name)) for c in node.children]
        for container, kinds in node.groups:
            children += [self.group(container, g, kinds) for g in kinds]
        return Cost(name=name, block=block, steps=tuple(steps), children=tuple(children), multiplicity=mult)

    def group(self, container: str, g: Group, kinds: list[Group]) -> Cost:
        label = _kind_label(container, g, kinds)
        block = Block.LAYER if container in _LAYER_CONTAINERS else Block.OTHER
        if not g.regular:  # children of one kind differ in shape: one numeric step
            step = Step(
                label=f"{g.node.path} ... ({g.count} modules)", role=Role.GENERIC, params=sp.Integer(g.all_params)
            )
            note = "the modules of this kind differ in shape: counted numerically"
            return Cost(name=label, block=block, steps=(step,), note=note)
        mult = self.forms.get(g.qname)
        if mult is not None and any(not c.is_Integer for c in mult.as_coefficients_dict().values()):
            mult = None  # N*3/4 holds for this pattern's period only: a count symbol says more
        if mult is None:
            sym = self.count_symbol(label)
            self.count_values[sym.name] = g.count
            mult = sym
        return self.cost(g.node, label, block, mult)


def _block(name: str) -> Block:
    if name == "lm_head":
        return Block.LM_HEAD
    return Block.OTHER


def _kind_label(container: str, g: Group, kinds: list[Group]) -> str:
    """``layers`` for one kind; else the module that tells this kind apart
    (``layers[linear_attn]``), or its class."""
    if len(kinds) == 1:
        return container

    def parts(k: Group) -> set[str]:  # the module names below a kind, relative to it
        prefix = k.node.qname + "."
        return {q[len(prefix) :].rsplit(".", 1)[0].split(":")[0] for q in k.node.quantities() if q.startswith(prefix)}

    mine = parts(g)
    others = set().union(*(parts(k) for k in kinds if k is not g))
    own = sorted({n.split(".")[0].split("[")[0] for n in mine - others})
    if own:
        return f"{container}[{own[0]}]"
    return f"{container}[{g.node.module_class}#{kinds.index(g) + 1}]"
