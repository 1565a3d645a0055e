#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of the documents: doc/user/cvars.md matches the CVAR blocks
# (scripts/gen-cvar-doc --check), every relative link of README.md and
# doc/**/*.md reaches a file (and its #anchor a heading there), and README.md
# stays short. Also checks that both checks can fail. No build, a few seconds.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/../lib.sh"
gen=$repo/scripts/gen-cvar-doc
w=$(mktemp -d); trap '[ -n "${KEEP:-}" ] || rm -rf "$w"' EXIT; [ -n "${KEEP:-}" ] && echo "work dir: $w" >&2
README_MAX_LINES=250
fails=0
result() {   # as t_result; the script exits 1 if any test failed
    [ "$1" = FAIL ] && fails=$((fails + 1))
    t_result "$@"
}

# ---- doc/user/cvars.md against the CVAR blocks -----------------------------
if out=$("$gen" --check 2>&1); then
    result PASS unit/docs-cvars-current
else
    result FAIL unit/docs-cvars-current "$(head -c 600 <<<"$out")"
fi

# The check notices a stale page, names the variable and the fix.
cp "$repo/doc/user/cvars.md" "$w/stale.md" 2>/dev/null || : > "$w/stale.md"
python3 - "$w/stale.md" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
# drop the last variable's section, as if a CVAR had been added since
parts = re.split(r"(?m)^## ", s)
open(p, "w").write("## ".join(parts[:-1]) if len(parts) > 2 else s + "\nstale\n")
EOF
last=$(grep '^## ' "$repo/doc/user/cvars.md" 2>/dev/null | tail -1 | sed 's/^## //')
out=$("$gen" --check --output "$w/stale.md" 2>&1) && rc=0 || rc=$?
if [ $rc = 1 ] && grep -q 'run scripts/gen-cvar-doc' <<<"$out" && grep -q -- "$last" <<<"$out"; then
    result PASS unit/docs-cvars-stale-detected
else
    result FAIL unit/docs-cvars-stale-detected "exit $rc, expected 1 naming $last and the fix: $(head -c 300 <<<"$out")"
fi

# The generator on a small tree: a block in a source file (under a comment's
# stars), one added by a patch, an edited MPICH block in a patch (not ours),
# the same definition twice (merged), sorted output.
f=$w/tree
mkdir -p "$f/src/a" "$f/patches"
cat > "$f/src/a/x.c" <<'EOF'
/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CAT_X
      description : the x things

cvars:
    - name        : MPIR_CVAR_ZED
      category    : CAT_X
      alt-env     : MPIR_CVAR_OLD_ZED
      type        : string
      default     : "auto"
      class       : none
      description : >-
        First line of the zed,
        second: with a colon.

    - name        : MPIR_CVAR_ALPHA
      category    : CAT_X
      type        : int
      default     : 3
      description : Alpha in one line.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/
EOF
cat > "$f/src/a/y.h" <<'EOF'
/*
 * === BEGIN_MPI_T_CVAR_INFO_BLOCK ===
 * cvars:
 *     - name        : MPIR_CVAR_ALPHA
 *       category    : CAT_X
 *       type        : int
 *       default     : 3
 *       description : Alpha in one line.
 * === END_MPI_T_CVAR_INFO_BLOCK ===
 */
EOF
cat > "$f/patches/0001-x.patch" <<'EOF'
diff --git a/src/mpid/foo.c b/src/mpid/foo.c
index 1111111..2222222 100644
--- a/src/mpid/foo.c
+++ b/src/mpid/foo.c
@@ -1,3 +1,15 @@
 #include "foo.h"
+/*
+=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===
+cvars:
+    - name        : MPIR_CVAR_MIDDLE
+      category    : CAT_X
+      type        : boolean
+      default     : false
+      description : >-
+        Added by a patch.
+=== END_MPI_T_CVAR_INFO_BLOCK ===
+*/
 int x;
diff --git a/src/mpid/bar.c b/src/mpid/bar.c
--- a/src/mpid/bar.c
+++ b/src/mpid/bar.c
@@ -10,6 +10,6 @@
 === BEGIN_MPI_T_CVAR_INFO_BLOCK ===
     - name        : MPIR_CVAR_MPICH_OWN
-      default     : 1
+      default     : 2
 === END_MPI_T_CVAR_INFO_BLOCK ===
EOF
out=$("$gen" --root "$f" 2>&1) && rc=0 || rc=$?
page=$f/doc/user/cvars.md
problem=
[ $rc = 0 ] || problem="exit $rc: $out"
[ -z "$problem" ] && [ "$(grep '^## ' "$page" | tr '\n' ' ')" != "## MPIR_CVAR_ALPHA ## MPIR_CVAR_MIDDLE ## MPIR_CVAR_ZED " ] &&
    problem="sections: $(grep '^## ' "$page" | tr '\n' ' ')"
[ -z "$problem" ] && ! grep -q 'defined in `patches/0001-x.patch` (in `src/mpid/foo.c`)' "$page" && problem="no patch origin"
[ -z "$problem" ] && ! grep -q 'defined in `src/a/x.c`, `src/a/y.h`' "$page" && problem="duplicate not merged"
[ -z "$problem" ] && ! grep -q '^First line of the zed, second: with a colon.$' "$page" && problem="description not folded"
[ -z "$problem" ] && ! grep -q '^- old name: `MPIR_CVAR_OLD_ZED`$' "$page" && problem="no old name"
[ -z "$problem" ] && ! grep -q '^- category `CAT_X` (the x things)$' "$page" && problem="no category"
[ -z "$problem" ] && grep -q 'MPICH_OWN' "$page" && problem="an edited MPICH block was taken for ours"
[ -z "$problem" ] && ! "$gen" --root "$f" --check >/dev/null 2>&1 && problem="--check fails right after writing"
if [ -z "$problem" ]; then result PASS unit/docs-cvars-generator; else result FAIL unit/docs-cvars-generator "$problem"; fi

# Two different definitions of one CVAR are an error naming both places.
sed -i 's/Alpha in one line/Alpha, otherwise/' "$f/src/a/y.h"
out=$("$gen" --root "$f" 2>&1) && rc=0 || rc=$?
if [ $rc = 2 ] && grep -q 'MPIR_CVAR_ALPHA is defined twice' <<<"$out" && grep -q 'src/a/y.h' <<<"$out"; then
    result PASS unit/docs-cvars-conflict
else
    result FAIL unit/docs-cvars-conflict "exit $rc: $(head -c 300 <<<"$out")"
fi

# ---- links -------------------------------------------------------------------
# check_links ROOT FILE...: prints "FILE:LINE: LINK: reason" for every relative
# link that does not resolve; exit 1 if any.
check_links() {
    python3 - "$@" <<'EOF'
import os, re, sys
from urllib.parse import unquote

root, files = sys.argv[1], sys.argv[2:]
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
anchors_cache = {}

def text_lines(path):
    """(line number, text) outside fenced code, inline code removed."""
    out, fenced = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = FENCE.match(line)
            if m:
                if fenced is None:
                    fenced = m.group(1)
                elif line.strip().startswith(fenced):
                    fenced = None
                continue
            if fenced is None:
                out.append((n, re.sub(r"(`+)(?:(?!\1).)+?\1", "", line)))
    return out

def slug(text):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)   # links: their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")

def anchors(path):
    if path in anchors_cache:
        return anchors_cache[path]
    found, seen = set(), {}
    raw, fenced = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = FENCE.match(line)
            if m:
                fenced = m.group(1) if fenced is None else (None if line.strip().startswith(fenced) else fenced)
                raw.append(None)
                continue
            raw.append(None if fenced else line)
    heads = []
    for i, line in enumerate(raw):
        if line is None:
            continue
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$", line)
        if m:
            heads.append(m.group(1))
        elif i > 0 and raw[i - 1] and raw[i - 1].strip() and "|" not in raw[i - 1] \
                and re.match(r"^\s{0,3}(=+|-+)\s*$", line) and not re.match(r"^\s{0,3}[-*>#]", raw[i - 1]):
            heads.append(raw[i - 1].strip())
        for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
            found.add(m.group(1))
    for h in heads:
        s = slug(h)
        if s in seen:
            seen[s] += 1
            found.add("%s-%d" % (s, seen[s]))
        else:
            seen[s] = 0
            found.add(s)
    anchors_cache[path] = found
    return found

bad = 0
for rel in files:
    path = os.path.join(root, rel)
    for n, line in text_lines(path):
        targets = [m.group(1) for m in LINK.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if not t or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", t):
                continue            # external (http:, mailto:, ...)
            target, _, anchor = t.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), unquote(target))) if target else path
            why = None
            if not os.path.exists(dest):
                why = "no such file"
            elif not os.path.realpath(dest).startswith(os.path.realpath(root) + os.sep):
                why = "outside the repository"
            elif anchor and os.path.isfile(dest) and dest.endswith(".md") and anchor not in anchors(dest):
                why = "no heading with anchor #%s in %s" % (anchor, os.path.relpath(dest, root))
            if why:
                print("%s:%d: %s: %s" % (rel, n, t, why))
                bad += 1
sys.exit(1 if bad else 0)
EOF
}

docs=(README.md)
while IFS= read -r -d '' p; do docs+=("${p#"$repo"/}"); done < <(find "$repo/doc" -name '*.md' -print0 2>/dev/null | sort -z)
[ -d "$repo/doc" ] || result FAIL unit/docs-tree "no doc/ folder"
for d in "${docs[@]}"; do
    if out=$(check_links "$repo" "$d" 2>&1); then
        result PASS "unit/docs-links/$d"
    else
        result FAIL "unit/docs-links/$d" "$(tr '\n' ';' <<<"$out" | head -c 800)"
    fi
done

# The link check fails where it should: a missing file, a missing heading,
# a missing anchor in the same page; links in code are not links.
mkdir -p "$w/links/doc"
cat > "$w/links/doc/a.md" <<'EOF'
# Page A

## Two words, `code` and (parens)

See [b](b.md#the-heading), [self](#two-words-code-and-parens), [dup](#page-a),
[gone](missing.md), [wrong anchor](b.md#nope), [own anchor](#nope-either),
[web](https://example.org/x.md), `[in code](missing-too.md)`.

```
[in a fence](missing-three.md)
```
EOF
printf 'The heading\n===========\n' > "$w/links/doc/b.md"
out=$(check_links "$w/links" doc/a.md 2>&1) && rc=0 || rc=$?
want="doc/a.md:6: missing.md: no such file;doc/a.md:6: b.md#nope: no heading with anchor #nope in doc/b.md;doc/a.md:6: #nope-either: no heading with anchor #nope-either in doc/a.md;"
if [ $rc = 1 ] && [ "$(tr '\n' ';' <<<"$out")" = "$want" ]; then
    result PASS unit/docs-links-check-fails
else
    result FAIL unit/docs-links-check-fails "exit $rc: $(tr '\n' ';' <<<"$out")"
fi

# ---- README length -------------------------------------------------------------
lines=$(wc -l < "$repo/README.md")
if [ "$lines" -le $README_MAX_LINES ]; then
    result PASS unit/docs-readme-length "$lines lines"
else
    result FAIL unit/docs-readme-length "README.md has $lines lines, at most $README_MAX_LINES: move details into doc/"
fi
exit $((fails > 0))
