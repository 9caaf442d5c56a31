#!/bin/sh
# Benchmarks one deployment with aiperf through its Dynamo frontend. Run by the opt-in benchmark
# Job (core/render/benchmark.py); the arguments follow Dynamo's gpt-oss-120b perf Jobs and
# [dynamo-gptoss-trtllm]'s aiperf command (SOURCES.md): fixed input and output lengths
# (ignore_eos), one warm-up request per concurrent stream. ignore_eos goes at the request's top
# level only, as the perf Jobs on Dynamo's main branch send it: Dynamo 1.6.1's frontend refuses
# the older {"nvext": {"ignore_eos": true}} with HTTP 400 ("unknown field `ignore_eos`", seen by
# `make trial`), and the v1.0.0 perf Jobs sent both in one request, so the top level is accepted
# from 1.0.0 on.
#
# Environment: AIPERF_VERSION, ENDPOINT (host:port of the frontend), MODEL, TOKENIZER (a local
# snapshot path), ISL, OSL, CONCURRENCY, REQUEST_COUNT, ARTIFACT_DIR; PYTHONUSERBASE, where pip
# installs (the root filesystem is read-only; Python finds the user site-packages there by itself).
set -eu

export PATH="${PYTHONUSERBASE}/bin:${PATH}"  # the aiperf command
pip install --user --no-cache-dir --quiet "aiperf==${AIPERF_VERSION}"
python3 - <<'PY'
import json, os, time, urllib.request
url = f"http://{os.environ['ENDPOINT']}/v1/models"
while True:  # the frontend lists the model once a worker has registered it
    try:
        models = json.load(urllib.request.urlopen(url, timeout=10))
        if any(m.get("id") == os.environ["MODEL"] for m in models.get("data", [])):
            break
    except OSError:
        pass
    print("waiting for", os.environ["MODEL"], "at", url, flush=True)
    time.sleep(15)
PY
mkdir -p "${ARTIFACT_DIR}"
aiperf profile --artifact-dir "${ARTIFACT_DIR}" --model "${MODEL}" --tokenizer "${TOKENIZER}" \
  --endpoint-type chat --endpoint /v1/chat/completions --streaming --url "http://${ENDPOINT}" \
  --synthetic-input-tokens-mean "${ISL}" --synthetic-input-tokens-stddev 0 \
  --output-tokens-mean "${OSL}" --output-tokens-stddev 0 \
  --extra-inputs "max_tokens:${OSL}" --extra-inputs "min_tokens:${OSL}" --extra-inputs ignore_eos:true \
  --concurrency "${CONCURRENCY}" --request-count "${REQUEST_COUNT}" --warmup-request-count "${CONCURRENCY}" \
  --random-seed 100 --ui simple
echo "results kept in ${ARTIFACT_DIR} on the model-cache volume"
