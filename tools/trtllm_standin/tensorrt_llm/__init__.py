"""A stand-in for TensorRT-LLM, for Dynamo's argument parsers only (tools/dynamo_parsers.py).

`dynamo.trtllm`'s parser imports TensorRT-LLM for one thing: the defaults of four engine fields
(max_batch_size, max_num_tokens, max_seq_len, max_beam_width), which become the defaults of its own
flags. TensorRT-LLM itself cannot be installed here (PyPI has only stubs of the 1.3.0rc builds the
Dynamo runtime images carry, and it needs a GPU), so this package answers that one import with the
defaults of the field list the engine configs are checked against (vendor/trtllm/). It
parses nothing and serves nothing: every flag is still judged by Dynamo's own parser.
"""
