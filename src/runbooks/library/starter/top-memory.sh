#!/bin/sh
# pitcrew starter runbook "top memory processes": the processes and the commands holding the most
# resident memory, and the host's memory. Changes nothing. Notes: top-memory.md. Exit: 0 shown,
# 1 ps failed, 2 a variable was refused.
set -u

refuse() {
  echo "refused: $*" >&2
  exit 2
}

count=${TopCount:-10}
case $count in '' | *[!0-9]*) refuse "TopCount=\"$count\" is not a whole number (from 1 to 100)" ;; esac
if [ "${#count}" -gt 3 ] || [ "$count" -lt 1 ] || [ "$count" -gt 100 ]; then refuse "TopCount=$count is out of range: from 1 to 100"; fi
case ${ShowCommandLines:-false} in
  true | TRUE | True | yes | 1) column='args' ;;
  false | FALSE | False | no | 0) column='comm' ;;
  *) refuse "ShowCommandLines=\"$ShowCommandLines\" must be true or false" ;;
esac

# Command lines may hold secrets (a password given as an argument): only names unless asked.
processes=$(ps -eo rss=,pid=,user=,"$column"=) || { echo "FAILED: ps did not run" >&2; exit 1; }
total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo 2>/dev/null)

echo "memory on $(uname -n) at $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
if command -v free >/dev/null 2>&1; then free -m; else grep -E '^(MemTotal|MemAvailable|SwapTotal|SwapFree):' /proc/meminfo; fi
echo
echo "top $count processes by resident memory (RSS):"
printf '%s\n' "$processes" | sort -k1,1nr | head -n "$count" | awk -v total="${total_kb:-0}" '
  BEGIN { printf "%10s %6s %8s %-12s %s\n", "RSS MiB", "%MEM", "PID", "USER", "COMMAND" }
  { rss = $1; pid = $2; user = $3; $1 = $2 = $3 = ""; sub(/^ +/, "")
    printf "%10.1f %6.1f %8s %-12s %s\n", rss / 1024, (total > 0 ? 100 * rss / total : 0), pid, user, substr($0, 1, 200) }'
echo
echo "top $count commands, their processes together:"
printf '%s\n' "$processes" | awk '{ rss = $1; $1 = $2 = $3 = ""; sub(/^ +/, ""); split($0, word, " "); sum[word[1]] += rss; n[word[1]]++ }
  END { for (c in sum) printf "%.0f %d %s\n", sum[c], n[c], c }' | sort -k1,1nr | head -n "$count" | awk '
  BEGIN { printf "%10s %9s %s\n", "RSS MiB", "PROCESSES", "COMMAND" }
  { printf "%10.1f %9d %s\n", $1 / 1024, $2, $3 }'
printf '%s\n' "$processes" | awk -v total="${total_kb:-0}" '{ sum += $1; n++ }
  END { printf "\n%d processes hold %.1f MiB resident", n, sum / 1024; if (total > 0) printf " of %.1f MiB", total / 1024
        print " (shared pages count in every process that maps them, so the sum can exceed what is used)" }'
