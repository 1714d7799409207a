"""The generic path (issue 22): a config.json whose model_type has no curated record,
counted from the installed transformers' own modeling code on PyTorch's meta device.

One job per module: ``build`` (the only place torch and transformers are imported),
``structure`` (the module tree, repeated modules grouped by kind), ``infer`` (closed forms
from rebuilds, verified at probes), ``symbols`` (config keys -> symbols), ``tree`` (the
Cost tree), ``model`` (the whole count) and ``route`` (the dispatch from hf_config).
"""
