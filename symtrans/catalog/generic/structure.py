"""The structure of a model built on meta: its module tree, with repeated children
(``layers.0 .. layers.N-1``, ``experts.0 .. experts.E-1``) grouped by kind.

A kind is the child's class and the names of its parameters: layers whose
``layer_types`` or modules differ fall into different kinds, each counted once with a
multiplicity.  Every quantity the closed forms are inferred for is named here, the same
way in every build of the same type (a tensor's dimension, a kind's count), so builds
at other sizes can be compared name by name.

Tied tensors are counted once, where ``named_parameters`` first meets them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


@dataclass
class Tensor:
    """One parameter tensor of a module: ``name`` (relative to its module), ``shape``,
    and ``qname`` (the module-qualified name its dimensions are known by)."""

    name: str
    shape: tuple[int, ...]
    qname: str
    module_class: str


@dataclass
class Group:
    """The children of one kind in a repeated container: ``count`` of them, shaped like
    ``node`` (the first).  ``regular`` is False when children of this kind differ in shape."""

    kind: str
    count: int
    node: "Node"
    regular: bool = True
    all_params: int = 0  # the parameters of every child of this kind (exact when not regular)

    @property
    def qname(self) -> str:
        return f"count:{self.node.qname}"


@dataclass
class Node:
    """A module with parameters below it: its own tensors, plain children, and groups of
    repeated children."""

    name: str
    path: str
    qname: str
    module_class: str
    tensors: list[Tensor] = field(default_factory=list)
    children: list["Node"] = field(default_factory=list)
    groups: list[tuple[str, list[Group]]] = field(default_factory=list)  # (container name, kinds)

    def quantities(self) -> dict[str, int]:
        """Every named quantity below this node: ``qname:i`` dimensions and group counts."""
        out: dict[str, int] = {}
        for t in self.tensors:
            for i, d in enumerate(t.shape):
                out[f"{t.qname}:{i}"] = d
        for c in self.children:
            out.update(c.quantities())
        for name, kinds in self.groups:
            out[f"total:{self.qname}.{name}"] = sum(g.count for g in kinds)  # layer keys are found by it
            for g in kinds:
                out[g.qname] = g.count
                out.update(g.node.quantities())
        return out

    def total(self) -> int:
        n = sum(_numel(t.shape) for t in self.tensors) + sum(c.total() for c in self.children)
        return n + sum(g.all_params for _, kinds in self.groups for g in kinds)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _signature(module) -> str:
    """A repeated child's kind: its class and the names of its parameters (not shapes)."""
    names = sorted(_template(n) for n, _ in module.named_parameters(remove_duplicate=False))
    return hashlib.sha1(("|".join([type(module).__name__, *names])).encode()).hexdigest()[:8]


def _template(name: str) -> str:
    return ".".join("*" if part.isdigit() else part for part in name.split("."))


def _repeated(module) -> bool:
    """A container whose children are numbered (ModuleList, Sequential)."""
    names = list(module._modules)
    return bool(names) and all(n.isdigit() for n in names) and not module._parameters


def tree(model) -> Node:
    """The Node tree of ``model`` (a torch module, on meta or not)."""
    seen: set[int] = set()
    root = _walk(model, "", "", type(model).__name__, seen)
    return root


def _walk(module, path: str, qname: str, name: str, seen: set[int]) -> Node:
    node = Node(name=name, path=path, qname=qname, module_class=type(module).__name__)
    for pname, p in module._parameters.items():
        if p is None or id(p) in seen:
            continue
        seen.add(id(p))
        q = f"{qname}.{pname}" if qname else pname
        node.tensors.append(Tensor(pname, tuple(int(d) for d in p.shape), q, type(module).__name__))
    for cname, child in module._modules.items():
        if child is None:
            continue
        cpath = f"{path}.{cname}" if path else cname
        cq = f"{qname}.{cname}" if qname else cname
        if _repeated(child):
            items = [(i, m) for i, m in child._modules.items() if m is not None]
            sigs = {i: _signature(m) for i, m in items}
            # Children of one kind that differ in shape (a conv stack whose widths grow) are
            # kept apart, each with its own name, so that every tensor keeps a closed form.
            trial = set(seen)
            shapes: dict[str, dict] = {}
            uneven: set[str] = set()
            for i, m in items:
                q = _walk(m, "", f"{cq}[{sigs[i]}]", "", trial).quantities()
                if sigs[i] in shapes and shapes[sigs[i]] != q:
                    uneven.add(sigs[i])
                shapes.setdefault(sigs[i], q)
            kinds: dict[str, Group] = {}
            for i, m in items:
                key = f"{sigs[i]}@{i}" if sigs[i] in uneven else sigs[i]
                sub = _walk(m, f"{cpath}.{i}", f"{cq}[{key}]", f"{cname}.{i}", seen)
                if not (sub.tensors or sub.children or sub.groups):
                    continue  # a parameter-free child (an activation, a tied copy)
                g = kinds.get(key)
                if g is None:
                    kinds[key] = Group(kind=key, count=1, node=sub, all_params=sub.total())
                else:
                    g.count += 1
                    g.all_params += sub.total()
            if kinds:
                node.groups.append((cname, list(kinds.values())))
        else:
            sub = _walk(child, cpath, cq, cname, seen)
            if sub.tensors or sub.children or sub.groups:
                node.children.append(sub)
    return node
