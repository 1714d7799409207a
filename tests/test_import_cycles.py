"""No import cycles between symtrans's modules, at any level (issue 20, Build 7).

The import graph is grimp's (the library import-linter is built on): every ``import``
statement of every module, inside functions too, so a cycle hidden in a function-level
import counts.  A cycle is a strongly connected component of more than one module
(Tarjan's algorithm, written out below).
"""

from __future__ import annotations

import pytest
from conftest import require


def _cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        # iterative Tarjan: (module, iterator over its imports)
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


@pytest.fixture(scope="module")
def graph():
    grimp = require("grimp")
    return grimp.build_graph("symtrans", include_external_packages=False)


def test_the_cycle_finder_finds_a_planted_cycle():
    class Graph:  # a -> b -> c -> a, and d -> a
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, m):
            return self.edges.get(m, set())

    assert _cycles(Graph()) == [["a", "b", "c"]]


def test_no_import_cycle(graph):
    # the cli too: its subcommands share cli.common (not cli.main's private helpers), and
    # the preset cache filler that needs main's parser is cli.warm, which nothing imports
    cycles = _cycles(graph)
    assert cycles == [], f"import cycles: {cycles}"
