#!/bin/sh
# pitcrew starter runbook "certificate expiry": days left on the certificates a TLS endpoint serves
# and on PEM files. Changes nothing. Notes: cert-expiry.md. Exit: 0 every certificate has at least
# CertWarnDays left, 1 one expires sooner or has expired, 2 a variable was refused, 3 one could not
# be checked (none expiring).
set -u

refuse() {
  echo "refused: $*" >&2
  exit 2
}

whole_number() { # NAME VALUE MIN MAX
  case $2 in '' | *[!0-9]*) refuse "$1=\"$2\" is not a whole number (from $3 to $4)" ;; esac
  if [ "${#2}" -gt 9 ] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then refuse "$1=$2 is out of range: from $3 to $4"; fi
}

# notAfter ("Jun  1 12:00:00 2026 GMT", as openssl prints it) to seconds since the epoch, in awk:
# date -d is not POSIX. Days from the civil date: H. Hinnant's algorithm.
epoch_of() {
  printf '%s\n' "$1" | awk '{
    m = (index("JanFebMarAprMayJunJulAugSepOctNovDec", $1) + 2) / 3; d = $2; y = $4; split($3, t, ":")
    y -= (m <= 2); era = int(y / 400); yoe = y - era * 400
    doy = int((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
    days = era * 146097 + yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy - 719468
    printf "%.0f\n", days * 86400 + t[1] * 3600 + t[2] * 60 + t[3] }'
}

report() { # LABEL PEM: one line for the certificate, counted in the totals
  subject=$(printf '%s\n' "$2" | openssl x509 -noout -subject 2>/dev/null | sed 's/^subject= *//')
  end=$(printf '%s\n' "$2" | openssl x509 -noout -enddate 2>/dev/null | sed 's/^notAfter=//')
  if [ -z "$end" ]; then
    echo "UNREADABLE  $1: not a certificate openssl can read"
    unchecked=$((unchecked + 1))
    return
  fi
  expires_at=$(epoch_of "$end")
  left=$((expires_at - now))
  days=$((left / 86400)) hours=$((left % 86400 / 3600))
  if [ "$left" -le 0 ]; then
    echo "EXPIRED     $1: $subject, expired $end, $((-left / 86400)) days ago"
    expiring=$((expiring + 1))
  elif [ "$left" -lt "$warn_seconds" ]; then
    echo "EXPIRING    $1: $subject, expires $end, in $days days $hours h (under CertWarnDays=$warn)"
    expiring=$((expiring + 1))
  else
    echo "OK          $1: $subject, expires $end, in $days days $hours h"
  fi
  checked=$((checked + 1))
}

check_pem() { # LABEL, PEM text on stdin: each certificate in it (a chain holds several)
  n=0 cert='' inside=false
  # Plain read strips blanks around lines, which PEM lines lack (an --allow list refuses assigning IFS).
  while read -r line; do
    line=${line%"$(printf '\r')"}
    case $line in
      '-----BEGIN CERTIFICATE-----') inside=true cert=$line ;;
      '-----END CERTIFICATE-----')
        if [ "$inside" = true ]; then
          n=$((n + 1)) inside=false
          if [ "$n" -eq 1 ]; then label=$1; else label="$1, chain certificate $n"; fi
          report "$label" "$cert
$line"
        fi ;;
      *) [ "$inside" = false ] || cert="$cert
$line" ;;
    esac
  done
  [ "$n" -gt 0 ] || { echo "UNCHECKED   $1: no certificate found"; unchecked=$((unchecked + 1)); }
}

endpoints=$(printf '%s' "${CertEndpoints:-}" | tr ',' ' ')
files=$(printf '%s' "${CertFiles:-}" | tr ',' ' ')
warn=${CertWarnDays:-14}
connect_timeout=${CertConnectTimeoutSeconds:-10}
whole_number CertWarnDays "$warn" 0 3650
whole_number CertConnectTimeoutSeconds "$connect_timeout" 1 120
set -f # the lists are words, never globbed
[ -n "$(printf '%s' "$endpoints$files" | tr -d ' \t\n')" ] || refuse "set CertEndpoints (host:port, separated by commas) or CertFiles (PEM files), or both"
for endpoint in $endpoints; do
  case $endpoint in -* | *[!]A-Za-z0-9.:_[-]*) refuse "\"$endpoint\" in CertEndpoints is not host:port" ;; esac
  port=${endpoint##*:}
  case $port in '' | *[!0-9]*) refuse "\"$endpoint\" in CertEndpoints has no port: write host:port, e.g. $endpoint:443" ;; esac
  if [ "${#port}" -gt 5 ] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then refuse "the port of \"$endpoint\" in CertEndpoints is not from 1 to 65535"; fi
done
for file in $files; do
  case $file in /*) ;; *) refuse "\"$file\" in CertFiles is not an absolute path" ;; esac
done
case ${CertServerName:-} in
  -* | *[!A-Za-z0-9.-]*) refuse "CertServerName=\"$CertServerName\" is not a host name" ;;
esac
command -v openssl >/dev/null 2>&1 || { echo "FAILED: openssl is not installed on $(uname -n)" >&2; exit 3; }

warn_seconds=$((warn * 86400))
now=$(date -u +%s)
checked=0 expiring=0 unchecked=0
echo "certificates on $(uname -n) at $(date -u '+%Y-%m-%dT%H:%M:%SZ'); warning under $warn days"
for endpoint in $endpoints; do
  # SNI takes a name, never an address: [IPv6] or IPv4 (digits and dots) get none.
  host=${endpoint%:*}
  case $host in
    \[*) sni= ;;
    *[!0-9.]*) sni=$host ;;
    *) sni= ;;
  esac
  sni=${CertServerName:-$sni}
  set -- -connect "$endpoint" -showcerts
  [ -z "$sni" ] || set -- "$@" -servername "$sni"
  output=$(timeout "$connect_timeout" openssl s_client "$@" < /dev/null 2>&1)
  case $output in
    *'-----BEGIN CERTIFICATE-----'*)
      check_pem "$endpoint" <<EOF
$output
EOF
      ;;
    *)
      echo "UNCHECKED   $endpoint: no certificate received: $(printf '%s\n' "$output" | grep -v '^ *$' | tail -n 1)"
      unchecked=$((unchecked + 1)) ;;
  esac
done
for file in $files; do
  if [ -r "$file" ] && [ -f "$file" ]; then
    # shellcheck disable=SC2094 # the name is only a label
    check_pem "$file" < "$file"
  else
    echo "UNCHECKED   $file: not a readable file"
    unchecked=$((unchecked + 1))
  fi
done

echo "$checked certificates checked: $expiring expiring or expired, $unchecked not checked"
[ "$expiring" -eq 0 ] || exit 1
[ "$unchecked" -eq 0 ] || exit 3
