#!/usr/bin/env bash
# Fetch the real-code corpora for `nearsym bench` and tests/bench/ctags_recall.py
# from the package registries (apt and npm), idempotently, into $BENCH
# (default /tmp/bench):
#   linux/linux-source-*   the whole Linux kernel (Debian linux-source)
#   jdk                    the whole JDK 17 src.zip (Debian openjdk-17-source)
#   /usr/share/go-*/src    the Go standard library (Debian golang-src)
#   cpython                this Python's standard library, without site-packages
#   BENCH=/tmp/bench bash tests/bench/prepare_corpora.sh
set -euo pipefail
BENCH="${BENCH:-/tmp/bench}"
mkdir -p "$BENCH"
need=()
for p in universal-ctags golang-src openjdk-17-source linux-source librust-serde-dev librust-regex-dev librust-syn-dev ruby neovim; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
cd "$BENCH"
if [ ! -d linux/linux-source-* ]; then
  mkdir -p linux && tar -xJf /usr/src/linux-source-*.tar.xz -C linux
  # Debian's packaging rules ignore the whole tree (`/*`, `!/debian/`); a
  # checkout of the kernel has no such lines, so drop them.
  sed -i '/^\/\*$/d; /^!\/debian\/$/d' linux/linux-source-*/.gitignore
fi
[ -d jdk/java.base ] || { mkdir -p jdk && (cd jdk && unzip -q -o /usr/lib/jvm/openjdk-17/lib/src.zip); }
[ -d java/java.base ] || { mkdir -p java && (cd java && unzip -q -o /usr/lib/jvm/openjdk-17/lib/src.zip 'java.base/*'); }
[ -d linux-source-6.1/kernel ] || tar -xJf /usr/src/linux-source-*.tar.xz --wildcards \
  'linux-source-*/kernel' 'linux-source-*/mm' 'linux-source-*/fs/ext4' 'linux-source-*/include/linux'
[ -d js/package ] || { mkdir -p js && (cd js && npm pack lodash@4 --silent >/dev/null && tar xzf lodash-*.tgz); }
[ -d ts/package ] || { mkdir -p ts && (cd ts && npm pack typescript@5 --silent >/dev/null && tar xzf typescript-*.tgz); }
if [ ! -d cpython ]; then
  stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
  mkdir -p cpython && cp -r "$stdlib"/. cpython/ && rm -rf cpython/site-packages
fi
echo "bench: kernel=$(ls -d "$BENCH"/linux/linux-source-*) jdk=$BENCH/jdk go=$(ls -d /usr/share/go-*/src | tail -1) cpython=$BENCH/cpython"
echo "recall: python=$BENCH/cpython go=$(ls -d /usr/share/go-*/src | tail -1) java=$BENCH/java c=$(ls -d "$BENCH"/linux-source-*) rust=/usr/share/cargo/registry typescript=$BENCH/ts/package javascript=$BENCH/js/package ruby=$(ls -d /usr/lib/ruby/3.*/ | head -1) lua=/usr/share/nvim/runtime/lua"
