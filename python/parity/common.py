"""Polygraphy's ``common`` structures."""
from parity.backend.base import TensorMetadata

__all__ = ["TensorMetadata"]
