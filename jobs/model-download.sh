#!/bin/sh
# Fills the model cache with one revision of the model, once. Run by the model-download Job
# (core/render/model_cache.py) with the cache volume as HF_HOME, so the snapshot lands where the
# workers load it from. The marker file is written last: its presence means the snapshot is
# complete, and a Job that runs again (a replaced Job, a new stack on the same volume) finds it
# and stops at once.
#
# Environment: HF_HOME, HF_HUB_VERSION, MODEL, MODEL_REVISION, EXCLUDES (comma-separated glob
# patterns), MARKER; HF_TOKEN_PATH (a file holding the token) when the model needs one;
# PYTHONUSERBASE, where pip installs (the root filesystem is read-only; Python finds the user
# site-packages there by itself).
set -eu

if [ -f "$MARKER" ]; then
  echo "already complete: $(cat "$MARKER")"
  exit 0
fi
pip install --user --no-cache-dir --quiet --no-warn-script-location "huggingface_hub==${HF_HUB_VERSION}"
python3 - <<'PY'
import os, pathlib
from huggingface_hub import snapshot_download
path = snapshot_download(
    os.environ["MODEL"],
    revision=os.environ["MODEL_REVISION"],
    ignore_patterns=os.environ["EXCLUDES"].split(","),
)
marker = pathlib.Path(os.environ["MARKER"])
marker.parent.mkdir(parents=True, exist_ok=True)
marker.write_text(path + "\n")
print("downloaded", path)
PY
