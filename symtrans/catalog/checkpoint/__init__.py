"""Checkpoints as their headers describe them (issue 14).

``read.read_checkpoint(path)`` opens a ``.safetensors`` file, a sharded index, a model
directory or a ``.gguf`` file and returns a ``formats.Checkpoint`` (tensors, files,
metadata, config.json) without reading tensor data; pickles are refused.
``names`` maps each stored tensor to the engine's ``Role`` and ``Block`` per model
family, ``quant`` unpacks quantized tensors to the parameters they represent, and
``infer`` builds a Spec from the shapes when there is no config.  The comparison with
the closed form is ``symtrans.analysis.checkpoint``.
"""
