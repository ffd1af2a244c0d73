#!/bin/sh
# pitcrew starter runbook "restart a systemd service": systemctl restart, then waits until the unit
# is active and stays so. Notes: restart-service.md. Exit: 0 active, 1 it did not become or stay
# active (status and journal shown), 2 a variable was refused (nothing restarted).
set -u

refuse() {
  echo "refused: $*; nothing was restarted" >&2
  exit 2
}

whole_number() { # NAME VALUE MIN MAX
  case $2 in '' | *[!0-9]*) refuse "$1=\"$2\" is not a whole number (from $3 to $4)" ;; esac
  if [ "${#2}" -gt 9 ] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then refuse "$1=$2 is out of range: from $3 to $4"; fi
}

main_pid() {
  systemctl show --property=MainPID "$unit" 2>/dev/null | sed -n 's/^MainPID=//p'
}

explain() { # why it failed, then the unit's status and journal; exits 1
  echo "FAILED: $*" >&2
  echo "--- systemctl status $unit"
  systemctl status --no-pager --full --lines=0 "$unit" 2>&1
  echo "--- journalctl -u $unit (last $lines lines)"
  if command -v journalctl >/dev/null 2>&1; then
    journalctl --unit="$unit" --lines="$lines" --no-pager 2>&1
  else
    echo "(journalctl is not installed here)"
  fi
  exit 1
}

name=${ServiceName:-}
timeout=${RestartTimeoutSeconds:-60}
settle=${SettleSeconds:-5}
lines=${JournalLines:-50}
[ -n "$name" ] || refuse "ServiceName is not set: the service to restart, e.g. nginx or php8.2-fpm.service"
# Unit names are letters, digits and :-_.@ (systemd.unit(5)); a leading - would be read as an option.
case $name in
  -* | *[!A-Za-z0-9:_.@-]*) refuse "ServiceName=\"$name\" is not a systemd unit name (letters, digits and : - _ . @, not starting with -)" ;;
esac
[ "${#name}" -le 256 ] || refuse "ServiceName is longer than the 256 characters of a unit name"
case $name in
  *.service) unit=$name ;;
  *.socket | *.target | *.timer | *.mount | *.automount | *.path | *.slice | *.scope | *.swap | *.device)
    refuse "ServiceName=\"$name\" is not a service: this runbook restarts .service units only" ;;
  *) unit=$name.service ;;
esac
whole_number RestartTimeoutSeconds "$timeout" 1 3600
whole_number SettleSeconds "$settle" 0 600
whole_number JournalLines "$lines" 0 10000
command -v systemctl >/dev/null 2>&1 || { echo "systemctl is not installed on $(uname -n): is this a systemd host?" >&2; exit 1; }

before=$(systemctl is-active "$unit" 2>/dev/null)
echo "restarting $unit on $(uname -n) (it was ${before:-unknown}, main pid $(main_pid))"
if ! output=$(systemctl restart "$unit" 2>&1); then
  [ -z "$output" ] || echo "$output" >&2
  case $output in
    *"not found"*) explain "$unit does not exist on $(uname -n) (systemctl list-units --type=service lists the services)" ;;
    *"nteractive authentication"* | *"ccess denied"*) explain "the agent's user ($(id -un)) may not restart $unit: allow it with polkit or sudo, or run this as a user that may" ;;
    *) explain "systemctl restart $unit failed" ;;
  esac
fi

waited=0
state=$(systemctl is-active "$unit" 2>/dev/null)
until [ "$state" = active ]; do
  case $state in
    failed | inactive) explain "$unit is $state after the restart" ;;
  esac
  [ "$waited" -lt "$timeout" ] || explain "$unit did not become active within RestartTimeoutSeconds=$timeout s (it is ${state:-unknown})"
  sleep 1
  waited=$((waited + 1))
  state=$(systemctl is-active "$unit" 2>/dev/null)
done
pid=$(main_pid)
echo "$unit is active (main pid $pid) after ${waited} s; checking that it stays active for $settle s"
if [ "$settle" -gt 0 ]; then
  sleep "$settle"
  state=$(systemctl is-active "$unit" 2>/dev/null)
  [ "$state" = active ] || explain "$unit stopped being active within $settle s of the restart (it is ${state:-unknown}): it crashes after starting"
  [ "$(main_pid)" = "$pid" ] || explain "the main process of $unit changed within $settle s of the restart (pid $pid, then $(main_pid)): it is restarting in a loop"
fi
echo "OK: $unit restarted and active, main pid $pid"
