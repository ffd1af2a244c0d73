/** Checks in a row without a frame from the service after which the agent takes it for gone. */
export const SILENT_CHECKS = 3;

/**
 * The agent's half of liveness (docs/agent.md, "Liveness"): once a heartbeat it checks whether it
 * heard anything from the service (a message, a ping, the pong to its own ping) since the check
 * before; three such checks in a row mean a half-open connection. Counted in checks, as the
 * service counts its own (src/agents/liveness.ts), not in time since the last frame: an agent
 * whose own loop runs late (a host starved of CPU, or one process holding thousands of simulated
 * agents) reads the pongs late too, and a clock would take its own lateness for the service's
 * silence (552 agents of the fleet benchmark reconnected for it, bench/README.md, session 33).
 */
export class ServiceSilence {
  private heardSinceCheck = true;
  private silentChecks = 0;

  /** A frame came from the service. */
  heard(): void {
    this.heardSinceCheck = true;
  }

  /** Once a heartbeat, before the agent's ping: whether the service has been silent for SILENT_CHECKS checks. */
  check(): boolean {
    this.silentChecks = this.heardSinceCheck ? 0 : this.silentChecks + 1;
    this.heardSinceCheck = false;
    return this.silentChecks >= SILENT_CHECKS;
  }
}
