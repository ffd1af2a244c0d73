#!/bin/sh
# pitcrew starter runbook "log tail": the last lines of a log file under the allowed roots,
# optionally only those matching a pattern. Changes nothing. Notes: log-tail.md. Exit: 0 shown
# (also when no line matches), 1 the file could not be read, 2 a variable was refused.
set -u

refuse() {
  echo "refused: $*" >&2
  exit 2
}

file=${LogFile:-}
lines=${LogLines:-100}
pattern=${LogPattern:-}
case $lines in '' | *[!0-9]*) refuse "LogLines=\"$lines\" is not a whole number (from 1 to 10000)" ;; esac
if [ "${#lines}" -gt 5 ] || [ "$lines" -lt 1 ] || [ "$lines" -gt 10000 ]; then refuse "LogLines=$lines is out of range: from 1 to 10000"; fi
[ -n "$file" ] || refuse "LogFile is not set: the log file to read, e.g. /var/log/nginx/error.log"
case $file in /*) ;; *) refuse "LogFile=\"$file\" is not an absolute path" ;; esac

# The file as it really is: its directory without symbolic links or .., then the file itself
# (a link to another file is followed once, with readlink -f where there is one).
dir=$(cd -P -- "$(dirname -- "$file")" 2>/dev/null && pwd -P) || refuse "LogFile=\"$file\": its directory does not exist or cannot be entered"
real=${dir%/}/$(basename -- "$file")
if [ -L "$real" ]; then
  real=$(readlink -f -- "$real" 2>/dev/null) || refuse "LogFile=\"$file\" is a symbolic link that cannot be resolved here; give the file it points to"
fi

set -f # the roots are words, never globbed
allowed=
for root in $(printf '%s' "${LogRoots:-/var/log}" | tr ',' ' '); do
  case $root in /*) ;; *) refuse "\"$root\" in LogRoots is not an absolute path" ;; esac
  real_root=$(cd -P -- "$root" 2>/dev/null && pwd -P) || continue # a root that does not exist here allows nothing
  [ "$real_root" != / ] || refuse "LogRoots may not hold / (it would allow every file); name the directories that hold logs"
  case $real in "$real_root"/*) allowed=$real_root ;; esac
done
[ -n "$allowed" ] || refuse "LogFile=\"$file\" ($real) is not under the allowed directories LogRoots=${LogRoots:-/var/log}"
[ -f "$real" ] || { echo "FAILED: $real is not a regular file (or does not exist)" >&2; exit 1; }
[ -r "$real" ] || { echo "FAILED: $real cannot be read by $(id -un)" >&2; exit 1; }

if [ -n "$pattern" ]; then
  # grep answers 2 for a pattern it cannot use; tried on no input first, so that error is told apart.
  problem=$(grep -E -e "$pattern" < /dev/null 2>&1)
  [ $? -ne 2 ] || refuse "LogPattern=\"$pattern\" is not a valid extended regular expression: $problem"
fi

size=$(wc -c < "$real")
echo "== $real on $(uname -n): $size bytes, last modified $(date -u -r "$real" '+%Y-%m-%dT%H:%M:%SZ' 2>/dev/null || echo '?')"
if [ -z "$pattern" ]; then
  echo "== its last $lines lines:"
  tail -n "$lines" -- "$real"
  exit 0
fi
echo "== its last $lines lines matching /$pattern/ (extended regular expression):"
matches=$(grep -E -e "$pattern" -- "$real" | tail -n "$lines")
if [ -n "$matches" ]; then printf '%s\n' "$matches"; else echo "(no line matches)"; fi
