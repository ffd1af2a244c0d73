#!/bin/sh
# pitcrew starter runbook "JVM thread dump": DumpCount thread dumps of one JVM, DumpIntervalSeconds
# apart, with jcmd (else jstack, else kill -3). Notes: jvm-thread-dump.md. Exit: 0 dumped,
# 1 no dump could be taken, 2 a variable was refused or no single JVM matched.
set -u

refuse() {
  echo "refused: $*" >&2
  exit 2
}

whole_number() { # NAME VALUE MIN MAX
  case $2 in '' | *[!0-9]*) refuse "$1=\"$2\" is not a whole number (from $3 to $4)" ;; esac
  if [ "${#2}" -gt 9 ] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then refuse "$1=$2 is out of range: from $3 to $4"; fi
}

jvms() { # "pid args" of every running java process; JavaProcess (read by awk from the environment) filters
  ps -eo pid=,comm=,args= | awk '$2 == "java" {
    pid = $1; $1 = ""; $2 = ""; args = substr($0, 3)
    if (ENVIRON["JavaProcess"] == "" || index(args, ENVIRON["JavaProcess"]) > 0) print pid, substr(args, 1, 160)
  }'
}

pid=${JavaPid:-}
count=${DumpCount:-3}
interval=${DumpIntervalSeconds:-5}
whole_number DumpCount "$count" 1 20
whole_number DumpIntervalSeconds "$interval" 0 300
if [ -n "$pid" ]; then
  whole_number JavaPid "$pid" 1 4194304
  [ -d "/proc/$pid" ] || refuse "no process has pid $pid (JavaPid) on $(uname -n)"
  comm=$(ps -o comm= -p "$pid")
  [ "$comm" = java ] || refuse "pid $pid (JavaPid) is $comm, not a java process"
elif [ -n "${JavaProcess:-}" ]; then
  found=$(jvms)
  all=$(JavaProcess='' jvms)
  [ -n "$found" ] || refuse "no java process on $(uname -n) has \"$JavaProcess\" (JavaProcess) in its command line; the java processes are:
${all:-(none)}"
  [ "$(printf '%s\n' "$found" | wc -l)" -eq 1 ] || refuse "several java processes have \"$JavaProcess\" (JavaProcess) in their command line; set JavaPid to one of them:
$found"
  pid=${found%% *}
else
  refuse "set JavaPid (a process id) or JavaProcess (a main class, jar or other text of the JVM's command line)"
fi

dir=${PITCREW_ARTIFACTS:-.}
echo "JVM pid $pid on $(uname -n): $(ps -o args= -p "$pid" | cut -c 1-160)"
# Tools by name from PATH only: a command chosen at run time is one an agent's --allow list could not check.
if command -v jcmd >/dev/null 2>&1; then tool='jcmd'; elif command -v jstack >/dev/null 2>&1; then tool='jstack'; else tool='kill'; fi
if [ "$tool" = kill ]; then
  echo "taking $count thread dumps, $interval s apart, with kill -3: no jcmd or jstack on PATH"
  jdk=$(dirname "$(readlink "/proc/$pid/exe" 2>/dev/null || echo /nonexistent/java)")
  if [ -x "$jdk/jcmd" ]; then echo "(this JVM's own JDK has $jdk/jcmd: link it into /usr/local/bin, or add $jdk to the agent's --script-path, for full dumps in this output)"; fi
else
  echo "taking $count thread dumps, $interval s apart, with $tool"
fi

taken=0
n=1
while [ "$n" -le "$count" ]; do
  [ "$n" -eq 1 ] || sleep "$interval"
  at=$(date -u '+%Y-%m-%dT%H:%M:%SZ')
  if [ "$tool" = kill ]; then
    if kill -3 "$pid"; then
      taken=$((taken + 1))
      echo "dump $n of $count at $at: sent SIGQUIT; the JVM writes the dump to its own standard output (its console log, or journalctl -u for a service)"
    else
      echo "dump $n of $count at $at FAILED: kill -3 $pid did not work" >&2
    fi
    n=$((n + 1))
    continue
  fi
  file=$dir/thread-dump-$pid-$n.txt
  if [ "$tool" = jcmd ]; then timeout 60 jcmd "$pid" Thread.print -l > "$file" 2>&1; else timeout 60 jstack -l "$pid" > "$file" 2>&1; fi
  status=$?
  threads=$(grep -c '^"' "$file")
  if [ "$status" -ne 0 ] || [ "$threads" -eq 0 ]; then
    echo "dump $n of $count at $at FAILED (exit $status):" >&2
    head -n 5 "$file" >&2
    rm -f "$file"
  else
    taken=$((taken + 1))
    states=$(grep -o 'java.lang.Thread.State: [A-Z_]*' "$file" | sed 's/.*: //' | sort | uniq -c | awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
    echo "dump $n of $count at $at: $threads threads${states:+ ($states)}"
    if grep -q 'Found .*deadlock' "$file"; then echo "  DEADLOCK: $(grep -c 'Found .*deadlock' "$file") found; see the dump"; fi
    if [ -n "${PITCREW_ARTIFACTS:-}" ]; then
      echo "  saved as $(basename "$file") (this execution's artifacts)"
    else
      echo "----- thread dump $n of $count, pid $pid, $at"
      cat "$file"
      rm -f "$file"
    fi
  fi
  n=$((n + 1))
done
[ "$taken" -gt 0 ] || { echo "FAILED: no thread dump of pid $pid could be taken (the JVM may run as another user: jcmd must run as the JVM's user)" >&2; exit 1; }
echo "OK: $taken of $count thread dumps of pid $pid taken"
