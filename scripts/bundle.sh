#!/bin/sh
# Makes a self-contained pathproof for a machine without Java (GPU nodes often have none): a jlink'ed Java runtime
# with only the modules pathproof uses, the fat jar, and a `pathproof` launcher.
#   scripts/bundle.sh [OUTDIR]            (default target/bundle, about 46 MB; needs a JDK 17 with jlink here)
#   scripts/bundle.sh FILE.tar.xz         (the same, packed in about 17 MB: runtime and jar stored uncompressed, then
#                                          xz over both, which packs them far better than their own zip compression;
#                                          for a transfer with a size limit. Unpack with `tar -xJf FILE -C DIR`.)
# Copy OUTDIR to the GPU machine and run OUTDIR/pathproof there (run needs a python3 with torch on that machine).
set -e
base=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$base/target/bundle}
case $out in *.tar.xz) packed=$out; out=$(mktemp -d)/bundle; compress=0 ;; *) packed=; compress=2 ;; esac
(cd "$base" && ./mvnw -q -B -DskipTests package)
rm -rf "$out" && mkdir -p "$out"
# java.sql (the SQLite JDBC driver for nsys exports) brings java.logging, java.xml and java.transaction.xa; nothing
# pathproof or its libraries load needs java.management or java.naming (2 MB of modules).
jlink --add-modules java.base,java.sql,java.logging,java.xml,jdk.unsupported \
  --strip-debug --no-man-pages --no-header-files --compress=$compress --output "$out/jre"
if [ -n "$packed" ]; then
  # For a transfer: the runtime's native libraries without their symbol tables (libjvm.so alone packs 0.8 MB
  # smaller; the dynamic symbols the JVM links by stay), where this machine has binutils' strip.
  if command -v strip >/dev/null; then find "$out/jre" -name '*.so' -exec strip --strip-unneeded {} +; fi
  # The SQLite JDBC driver's native library only for this platform (it picks its own by os.name and
  # os.arch, org/sqlite/util/OSInfo): the other nine are 4.5 MB the GPU node never loads; of uPlot only the build the
  # report inlines (report/Page.java); no Maven metadata.
  plat="Linux/$(uname -m | sed 's/^arm64$/aarch64/')"
  mkdir "$out/j" && (cd "$out/j" && jar xf "$base/target/pathproof-0.1.0-all.jar" \
    && find org/sqlite/native -name '*.so' -o -name '*.dll' -o -name '*.jnilib' -o -name '*.dylib' \
       | grep -v "^org/sqlite/native/$plat/" | xargs rm -f \
    && find META-INF/resources/webjars/uplot -type f ! -name 'uPlot.iife.min.js' ! -name '*.css' -delete \
    && rm -rf META-INF/maven \
    && jar --create --no-compress \
    --file ../pathproof.jar --manifest META-INF/MANIFEST.MF -C . .) && rm -rf "$out/j"
else
  cp "$base/target/pathproof-0.1.0-all.jar" "$out/pathproof.jar"
fi
cat > "$out/pathproof" <<'SH'
#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/jre/bin/java" ${PATHPROOF_JAVA_OPTS:-} -jar "$here/pathproof.jar" "$@"
SH
chmod +x "$out/pathproof"
if [ -n "$packed" ]; then
  tar -cf - -C "$out" . | xz -9 -T0 > "$packed"
  rm -rf "$(dirname "$out")"
  ls -la "$packed"
else
  du -sh "$out"
fi
