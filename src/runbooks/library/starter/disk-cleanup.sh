#!/bin/sh
# pitcrew starter runbook "disk cleanup": deletes old files matching name patterns under the given
# directories. A dry run unless DryRun=false. Notes: disk-cleanup.md. Exit: 0 done (or dry run),
# 1 some files could not be deleted, 2 a variable was refused (nothing deleted), 3 more files than
# MaxDeleteFiles (nothing deleted).
set -u

refuse() {
  echo "refused: $*; nothing was deleted" >&2
  exit 2
}

whole_number() { # NAME VALUE MIN MAX
  case $2 in '' | *[!0-9]*) refuse "$1=\"$2\" is not a whole number (from $3 to $4)" ;; esac
  if [ "${#2}" -gt 9 ] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then refuse "$1=$2 is out of range: from $3 to $4"; fi
}

human() { # bytes -> "12.3 MiB"
  awk -v b="$1" 'BEGIN { split("B KiB MiB GiB TiB", u, " "); i = 1; while (b >= 1024 && i < 5) { b /= 1024; i++ } printf (i == 1 ? "%d %s\n" : "%.1f %s\n"), b, u[i] }'
}

show_df() { # the filesystems of the roots: used and available
  # shellcheck disable=SC2086 # $roots is split on purpose: checked paths without blanks
  df -P -k $roots | awk 'NR > 1 && !seen[$6]++ { printf "  %s (%s): %s used, %.1f GiB available\n", $6, $1, $5, $4 / 1048576 }'
}

paths=$(printf '%s' "${CleanupPaths:-}" | tr ',' ' ')
patterns=$(printf '%s' "${CleanupPatterns:-*.gz,*.log.[0-9]*,*.tmp}" | tr ',' ' ')
days=${OlderThanDays:-7}
max=${MaxDeleteFiles:-1000}
case ${DryRun:-true} in
  true | TRUE | True | yes | 1) dry=true ;;
  false | FALSE | False | no | 0) dry=false ;;
  *) refuse "DryRun=\"$DryRun\" must be true or false" ;;
esac
whole_number OlderThanDays "$days" 1 36500
whole_number MaxDeleteFiles "$max" 1 1000000

set -f # the paths and patterns are words, never globbed here
[ -n "$(printf '%s' "$paths" | tr -d ' \t\n')" ] || refuse "CleanupPaths is not set: the directories to clean, separated by commas (e.g. /var/log/app,/srv/cache)"
roots=
for path in $paths; do
  case $path in /*) ;; *) refuse "\"$path\" in CleanupPaths is not an absolute path" ;; esac
  [ -d "$path" ] || refuse "\"$path\" in CleanupPaths is not a directory"
  real=$(cd -P -- "$path" 2>/dev/null && pwd -P) || refuse "cannot enter \"$path\" (CleanupPaths)"
  case $real in
    / | /bin | /boot | /dev | /etc | /home | /lib | /lib32 | /lib64 | /opt | /proc | /root | /run | /sbin | /srv | /sys | /usr | /var | /var/lib \
      | /proc/* | /sys/* | /dev/* | /boot/* | /etc/* | /bin/* | /sbin/* | /lib/* | /lib32/* | /lib64/* | /usr/*)
      refuse "\"$path\" in CleanupPaths is (or is inside) a system directory ($real); name the application's own directory, e.g. /var/log/app" ;;
  esac
  roots="$roots $real"
done
# A root inside another on the same filesystem is already swept by that one: counted once. One on a
# filesystem of its own stays, since find -xdev does not enter it from the root it is in.
mount_of() { df -P -- "$1" | awk 'NR == 2 { print $6 }'; }
distinct=
for root in $roots; do
  case " $distinct " in *" $root "*) continue ;; esac
  for other in $roots; do
    case $root in "$other"/*) [ "$(mount_of "$root")" != "$(mount_of "$other")" ] || continue 2 ;; esac
  done
  distinct="$distinct $root"
done
roots=$distinct

set -- # the find expression: -name P1 -o -name P2 ...
for pattern in $patterns; do
  case $pattern in */*) refuse "pattern \"$pattern\" in CleanupPatterns holds a /: patterns match file names, not paths" ;; esac
  [ $# -eq 0 ] || set -- "$@" -o
  set -- "$@" -name "$pattern"
done
[ $# -gt 0 ] || refuse "CleanupPatterns is empty: give file name patterns such as *.gz,*.log.[0-9]*"

# find -mtime +N matches files at least N+1 whole days old; "older than 7 days" is -mtime +6.
age=$((days - 1))
# Prints "files bytes failed" for the files found; deletes them when $1 is "delete".
sweep() {
  mode=$1
  shift
  for root in $roots; do
    find "$root" -xdev -type f \( "$@" \) -mtime +"$age" -exec sh -c '
      mode=$1; shift; n=0; b=0; failed=0
      for f do
        s=$(wc -c < "$f" 2>/dev/null) || s=0
        if [ "$mode" = delete ]; then
          if rm -f -- "$f"; then n=$((n + 1)); b=$((b + s)); else failed=$((failed + 1)); fi
        else n=$((n + 1)); b=$((b + s)); fi
      done
      echo "$n $b $failed"' sh "$mode" {} +
  done | awk '{ n += $1; b += $2; f += $3 } END { printf "%d %.0f %d\n", n, b, f }'
}

echo "disk cleanup on $(uname -n): files older than $days days named $(printf '%s' "$patterns" | tr -s ' ' ' ') under$roots"
echo "disk usage before:"
show_df
# shellcheck disable=SC2046 # word splitting of the counts on purpose
set -- $(sweep count "$@") "$@"
found=$1 bytes=$2
shift 3
echo "found $found files, $(human "$bytes")"

if [ "$dry" = true ]; then
  for root in $roots; do find "$root" -xdev -type f \( "$@" \) -mtime +"$age" -print; done | head -n 20 | sed 's/^/  would delete /'
  [ "$found" -le 20 ] || echo "  … and $((found - 20)) more"
  [ "$found" -le "$max" ] || echo "a real run would refuse: $found files is more than MaxDeleteFiles=$max"
  echo "dry run: nothing deleted; set DryRun=false to delete these files"
  exit 0
fi
if [ "$found" -gt "$max" ]; then
  echo "refused: $found files is more than MaxDeleteFiles=$max, so nothing was deleted; check the patterns, or raise MaxDeleteFiles" >&2
  exit 3
fi
# shellcheck disable=SC2046
set -- $(sweep delete "$@")
echo "deleted $1 files, $(human "$2")"
echo "disk usage after:"
show_df
echo "(a deleted file that a process still holds open frees its space only once that process closes it: lsof +L1 lists them)"
if [ "$3" -gt 0 ]; then
  echo "$3 files could not be deleted (see the errors above)" >&2
  exit 1
fi
