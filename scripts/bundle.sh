#!/bin/sh
# Makes a self-contained pathproof for a machine without Java (GPU nodes often have none): a jlink'ed Java runtime
# with only the modules pathproof uses (about 40 MB), the fat jar, and a `pathproof` launcher.
#   scripts/bundle.sh [OUTDIR]        (default target/bundle; needs a JDK 17 with jlink here)
# Copy OUTDIR to the GPU machine and run OUTDIR/pathproof there (run needs a python3 with torch on that machine).
set -e
base=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$base/target/bundle}
(cd "$base" && ./mvnw -q -B -DskipTests package)
rm -rf "$out" && mkdir -p "$out"
jlink --add-modules java.base,java.sql,java.logging,java.management,java.naming,java.xml,jdk.unsupported \
  --strip-debug --no-man-pages --no-header-files --compress=2 --output "$out/jre"
cp "$base/target/pathproof-0.1.0-all.jar" "$out/pathproof.jar"
cat > "$out/pathproof" <<'SH'
#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/jre/bin/java" ${PATHPROOF_JAVA_OPTS:-} -jar "$here/pathproof.jar" "$@"
SH
chmod +x "$out/pathproof"
du -sh "$out"
