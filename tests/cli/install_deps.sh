#!/bin/bash
# install_deps.sh - scripts/install-deps asks a build only for what the
# build needs, and the tests' packages (Criterion, Chromium, git) only for
# `make test`; on a machine without network it gives up instead of waiting.
# dpkg-query and apt-get are stand-ins on PATH: every package is installed
# except the test-only ones, and apt-get update never returns.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d /tmp/ch_install_deps.XXXXXX)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; }

mkdir -p "$T/bin"
cat >"$T/bin/dpkg-query" <<'EOF'
#!/bin/sh
# dpkg-query -W -f='${Status}' PKG: installed, except the test-only packages
for p; do :; done
case "$p" in
chromium | libcriterion-dev | git) exit 1 ;;
*) printf 'install ok installed' ;;
esac
EOF
cat >"$T/bin/apt-get" <<'EOF'
#!/bin/sh
# no network: update never returns
case "$*" in *update*) sleep 600 ;; esac
exit 100
EOF
chmod +x "$T/bin/dpkg-query" "$T/bin/apt-get"

out=$(PATH="$T/bin:$PATH" scripts/install-deps --check 2>&1); rc=$?
[ $rc -eq 0 ] && ok "install-deps: a build needs no test package (default --build)" || nok "install-deps --check" "exit $rc: $out"
out=$(PATH="$T/bin:$PATH" scripts/install-deps --build --check 2>&1); rc=$?
[ $rc -eq 0 ] && ok "install-deps --build --check: exit 0" || nok "install-deps --build --check" "exit $rc: $out"
out=$(PATH="$T/bin:$PATH" scripts/install-deps --test --check 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "chromium" <<<"$out" && grep -q "libcriterion-dev" <<<"$out" && grep -q "git" <<<"$out"; then
	ok "install-deps --test --check: names the missing test packages"
else
	nok "install-deps --test --check" "exit $rc: $out"
fi
scripts/install-deps --list | grep -qxE 'chromium|libcriterion-dev|git' &&
	nok "install-deps --list" "a test package in the build list" || ok "install-deps --list: build packages only"
scripts/install-deps --test --list | grep -qx chromium && ok "install-deps --test --list: with the test packages" ||
	nok "install-deps --test --list" "no chromium"

# the Makefile asks for the build's packages, and the tests' only for test/unit
for goal in all sweep bench test unit; do
	want=--build; [ $goal = test ] || [ $goal = unit ] && want=--test
	# (under `make test` MAKEFLAGS carries CH_DEPS_DONE=1: a fresh make here)
	line=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n CH_DEPS_DONE= "$goal" 2>/dev/null | grep -m1 'scripts/install-deps')
	if [ "$line" = "scripts/install-deps $want" ]; then
		ok "make $goal runs install-deps $want"
	else
		nok "make $goal" "runs '$line', want 'scripts/install-deps $want'"
	fi
done

# missing packages, no network: root gives up after INSTALL_DEPS_TIMEOUT
if [ "$(id -u)" -eq 0 ]; then
	t0=$(date +%s)
	out=$(PATH="$T/bin:$PATH" INSTALL_DEPS_TIMEOUT=2 timeout 60 scripts/install-deps --test 2>&1); rc=$?
	dt=$(($(date +%s) - t0))
	if [ $rc -eq 1 ] && [ $dt -lt 30 ] && grep -q "no network" <<<"$out" && grep -qE "apt-get install -y .*chromium" <<<"$out"; then
		ok "install-deps: without network it gives up after the timeout (${dt} s) with the line to run"
	else
		nok "install-deps without network" "exit $rc after ${dt} s: $out"
	fi
else
	out=$(PATH="$T/bin:$PATH" scripts/install-deps --test 2>&1); rc=$?
	[ $rc -eq 1 ] && grep -qE "apt-get update && apt-get install -y .*chromium" <<<"$out" &&
		ok "install-deps: not root, names the apt-get line" || nok "install-deps not root" "exit $rc: $out"
fi
