"""gpt-oss-infra: Pulumi components that run OpenAI's gpt-oss-120b on Kubernetes with NVIDIA Dynamo
and TensorRT-LLM."""

from pathlib import Path

__version__ = "0.1.0"

# Installed (a wheel), core/, components/ and tools/ are folders of this package. In the repository
# they are the top-level folders beside this one (pyproject.toml maps them so): a run from a clone
# finds them there, in that clone, with nothing installed.
_source_tree = Path(__file__).resolve().parent.parent
if not (Path(__file__).parent / "core").is_dir() and (_source_tree / "core" / "__init__.py").is_file():
    __path__.append(str(_source_tree))
