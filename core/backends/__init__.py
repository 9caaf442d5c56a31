"""Serving backends: what is specific to the engine the workers run (TensorRT-LLM today)."""
