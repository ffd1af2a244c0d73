/** What the liveness check does to a connection: a `ws` WebSocket. */
export interface Peer {
  ping(): void;
  terminate(): void;
}

/**
 * Tells half-open agent connections (a firewall or NAT that dropped the flow, a frozen host) from
 * quiet ones, checked once a heartbeat. Every agent since the first pings the service every
 * heartbeat (agent/connection.ts), so a connection heard from since the last check needs no ping
 * of ours: pinging all of them every heartbeat cost 0.26 ms per agent back after a restart (bench
 * README, session 30). One not heard from for a whole interval is pinged (an agent with a longer
 * `--heartbeat-seconds` answers that); one still silent at the next check is dropped. So a
 * connection is dropped 2 to 3 intervals after the last frame heard on it (docs/agent.md).
 */
export class Liveness<P extends Peer> {
  private readonly heardSinceCheck = new WeakSet<P>();
  private readonly pinged = new WeakSet<P>();

  /** A frame came from the peer (its ping, or the pong to ours). */
  heard(peer: P): void {
    this.heardSinceCheck.add(peer);
  }

  /** Once a heartbeat: pings the peers silent for an interval, drops those silent since their ping. */
  check(peers: Iterable<P>): void {
    for (const peer of peers) {
      if (this.heardSinceCheck.delete(peer)) this.pinged.delete(peer);
      else if (this.pinged.has(peer)) peer.terminate();
      else {
        this.pinged.add(peer);
        peer.ping();
      }
    }
  }
}
