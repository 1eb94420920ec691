# Headless Chromium for tests/render/test_html_browser.py (the HTML picture opened in a real
# browser) and Graphviz `dot` for the SVG picture. Debian packages; the install is skipped
# when both are already there. Exports KGBUILD_CHROMIUM, which the browser test reads.
if [ ! -x /usr/bin/chromium ] || ! command -v dot >/dev/null 2>&1; then
    sudo_=""
    [ "$(id -u)" -eq 0 ] || sudo_="sudo -n"
    export DEBIAN_FRONTEND=noninteractive
    $sudo_ apt-get update -q </dev/null >/dev/null
    $sudo_ apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core </dev/null >/dev/null
    $sudo_ apt-get install -y -q graphviz </dev/null >/dev/null
fi
export KGBUILD_CHROMIUM=/usr/bin/chromium
mkdir -p .ci/artifacts
