import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/*
 * A stand-in for systemctl and journalctl, for runbooks tested on hosts without systemd (no
 * systemd as PID 1 in a container). It runs real processes: a unit is a sh script run as the
 * service's main process, in its own session, its output appended to the unit's journal file.
 * Like a Type=notify unit, `restart` ends when the service says it is ready (creates the file
 * $READY) and fails when the process exits first. It records every call.
 *
 * The agent gives scripts a fixed PATH (agent/environment.ts) that starts with /usr/local/sbin,
 * so these stand-ins are mounted there for one agent only: `launcher` starts that agent in a mount
 * namespace of its own (unshare, as root, which the tests are) where /usr/local/sbin is the
 * stand-ins' directory. Nothing outside that agent sees them.
 */

const SYSTEMCTL = `#!/bin/sh
STATE=%STATE%
echo "systemctl $*" >> "$STATE/calls.log"
command= unit= property=
for arg do
  case $arg in
    --property=*) property=\${arg#--property=} ;;
    -*) ;;
    *) if [ -z "$command" ]; then command=$arg; else unit=$arg; fi ;;
  esac
done
case $unit in *.service) ;; *) unit=$unit.service ;; esac
pidfile=$STATE/run/$unit.pid
# Alive and not a zombie: the service's parent (this script) may be gone before anyone reaps it.
alive() { [ -f "$pidfile" ] && [ -r "/proc/$(cat "$pidfile")/stat" ] && [ "$(cut -d ' ' -f 3 "/proc/$(cat "$pidfile")/stat")" != Z ]; }
state() { if alive; then echo active; elif [ -f "$pidfile" ]; then echo failed; else echo inactive; fi; }
case $command in
  restart)
    [ -f "$STATE/units/$unit" ] || { echo "Failed to restart $unit: Unit $unit not found." >&2; exit 5; }
    if alive; then kill "$(cat "$pidfile")"; while alive; do sleep 0.05; done; fi
    rm -f "$STATE/run/$unit.ready"
    READY=$STATE/run/$unit.ready setsid sh "$STATE/units/$unit" >> "$STATE/journal/$unit.log" 2>&1 < /dev/null &
    echo $! > "$pidfile"
    until [ -f "$STATE/run/$unit.ready" ]; do
      if ! alive && [ ! -f "$STATE/run/$unit.ready" ]; then
        echo "Job for $unit failed because the control process exited with error code." >&2
        echo "See \\"systemctl status $unit\\" and \\"journalctl -xeu $unit\\" for details." >&2
        exit 1
      fi
      sleep 0.05
    done ;;
  is-active) state; alive || exit 3 ;;
  show)
    [ "$property" = MainPID ] || { echo "stand-in: show --property=MainPID only" >&2; exit 1; }
    if alive; then echo "MainPID=$(cat "$pidfile")"; else echo MainPID=0; fi ;;
  status)
    echo "● $unit - stand-in unit"
    echo "     Active: $(state)"
    if alive; then echo "   Main PID: $(cat "$pidfile") (sh)"; fi
    alive || exit 3 ;;
  *) echo "stand-in systemctl: $command is not supported" >&2; exit 1 ;;
esac
`;

const JOURNALCTL = `#!/bin/sh
STATE=%STATE%
echo "journalctl $*" >> "$STATE/calls.log"
unit= lines=10
for arg do
  case $arg in
    --unit=*) unit=\${arg#--unit=} ;;
    --lines=*) lines=\${arg#--lines=} ;;
  esac
done
case $unit in *.service) ;; *) unit=$unit.service ;; esac
[ ! -f "$STATE/journal/$unit.log" ] || tail -n "$lines" "$STATE/journal/$unit.log"
`;

export interface SystemdStandIn {
  /** Mounted over /usr/local/sbin for the agent that uses it. */
  binDir: string;
  /** Starts a command (the agent) in a mount namespace where /usr/local/sbin holds the stand-ins. */
  launcher: string[];
  /** A unit whose main process runs `script` (sh); it must create "$READY" once it serves. */
  addUnit(unit: string, script: string): void;
  /** Every call, in order: "systemctl restart shop.service". */
  calls(): string[];
  /** The unit's main process while it runs (not a zombie). */
  mainPid(unit: string): number | undefined;
  /** Stops every unit's process and removes the files. */
  close(): void;
}

export function systemdStandIn(): SystemdStandIn {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-systemd-'));
  const binDir = path.join(root, 'bin');
  const state = path.join(root, 'state');
  for (const dir of [binDir, `${state}/units`, `${state}/run`, `${state}/journal`]) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(`${state}/calls.log`, '');
  const quoted = `'${state}'`;
  fs.writeFileSync(path.join(binDir, 'systemctl'), SYSTEMCTL.replace('%STATE%', quoted), { mode: 0o755 });
  fs.writeFileSync(path.join(binDir, 'journalctl'), JOURNALCTL.replace('%STATE%', quoted), { mode: 0o755 });

  const mainPid = (unit: string) => {
    const pidFile = `${state}/run/${unit}.pid`;
    if (!fs.existsSync(pidFile)) return undefined;
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    try {
      return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z' ? undefined : pid;
    } catch {
      return undefined;
    }
  };
  return {
    binDir,
    // unshare makes the mount namespace private (no propagation back to the host); sh binds, then execs the agent.
    launcher: ['unshare', '--mount', '--', 'sh', '-c', 'mount --bind "$0" /usr/local/sbin && exec "$@"', binDir],
    addUnit: (unit, script) => fs.writeFileSync(`${state}/units/${unit}`, script),
    calls: () => fs.readFileSync(`${state}/calls.log`, 'utf8').split('\n').filter(Boolean),
    mainPid,
    close: () => {
      for (const file of fs.readdirSync(`${state}/run`).filter((name) => name.endsWith('.pid'))) {
        const pid = mainPid(file.slice(0, -'.pid'.length));
        if (pid) process.kill(pid, 'SIGKILL');
      }
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
