# A real Backstage catalog backend for tests/remote/test_backstage_real.py (marker server):
# the npm packages tests/backstage_backend/package.json pins (Backstage's backend-defaults, the
# catalog plugin, the scaffolder's Template kind, better-sqlite3), installed with the machine's
# Node.js and npm once per version of that file into $KGBUILD_CI_CACHE/backstage-<hash>
# (better-sqlite3 is compiled against the machine's Node.js headers: nothing else is
# downloaded). The test starts `node tests/backstage_backend/index.js` with NODE_PATH there.
# Exports KGBUILD_BACKSTAGE_DIR.
_bs_key="$(sha256sum tests/backstage_backend/package.json | cut -c1-16)"
_bs_dir="$KGBUILD_CI_CACHE/backstage-$_bs_key"
if [ ! -e "$_bs_dir/.installed" ]; then
    rm -rf "$_bs_dir"
    mkdir -p "$_bs_dir"
    cp tests/backstage_backend/package.json "$_bs_dir/"
    if ! (cd "$_bs_dir" && npm_config_nodedir=/usr npm install --no-audit --no-fund \
            --no-package-lock --loglevel=error </dev/null >"$_bs_dir/install.log" 2>&1); then
        tail -n 30 "$_bs_dir/install.log" >&2
        echo "ci: the Backstage backend's npm packages did not install" >&2
        exit 1
    fi
    touch "$_bs_dir/.installed"
fi
export KGBUILD_BACKSTAGE_DIR="$_bs_dir"
