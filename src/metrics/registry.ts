import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * How often the event-loop delay histogram behind `pitcrew_nodejs_eventloop_lag_*` samples, in ms.
 * prom-client's 10 ms woke an idle server 100 times a second, a third of its idle CPU
 * (bench/idle.js); a block of the loop longer than this is still measured to within it.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** The service's Prometheus metrics; one registry per app so several apps can share a process. */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Histogram({
    name: 'pitcrew_http_request_duration_seconds',
    help: 'HTTP request duration by route and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  /** The agent port's handshake gate (server/handshake-gate.ts), set once it listens. */
  handshakeGate: { readonly waitingCount: number; readonly handshakingCount: number } | undefined;

  readonly agentHandshakes = new Gauge({
    name: 'pitcrew_agent_tls_connections',
    help: 'Connections on the agent port (PITCREW_TLS_PORT) before their TLS handshake is done: waiting for a place in the gate, or handshaking',
    labelNames: ['stage'],
    registers: [this.registry],
    collect: () => {
      this.agentHandshakes.set({ stage: 'waiting' }, this.handshakeGate?.waitingCount ?? 0);
      this.agentHandshakes.set({ stage: 'handshaking' }, this.handshakeGate?.handshakingCount ?? 0);
    },
  });

  /** The agent gateway (agents/gateway.ts), set when the app is built. */
  agentGateway: { readonly welcomedCount: number } | undefined;

  readonly agentsConnected = new Gauge({
    name: 'pitcrew_agents_connected',
    help: 'Agent connections this node holds that said hello and were welcomed',
    registers: [this.registry],
    collect: () => {
      this.agentsConnected.set(this.agentGateway?.welcomedCount ?? 0);
    },
  });

  /**
   * From an agent's hello to the service's welcome. A fleet reconnecting after a restart shows
   * here whether the service keeps up with the hellos as they come (bench/fleet.js prints it).
   */
  readonly agentHelloSeconds = new Histogram({
    name: 'pitcrew_agent_hello_duration_seconds',
    help: 'From an agent\'s hello to the service\'s welcome: its session recorded and its runs reconciled',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly events = new Counter({
    name: 'pitcrew_events_total',
    help: 'Events recorded, by outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly ingressRejections = new Counter({
    name: 'pitcrew_ingress_rejections_total',
    help: 'Webhook calls refused, by HTTP status; a refused call stored nothing',
    labelNames: ['status'],
    registers: [this.registry],
  });

  readonly throttled = new Counter({
    name: 'pitcrew_ingress_throttled_total',
    help: 'Webhook calls refused with 429 because their tenant was over its throttle, by tenant id (nothing stored)',
    labelNames: ['tenant'],
    registers: [this.registry],
  });

  readonly ingestBatchSize = new Histogram({
    name: 'pitcrew_ingest_batch_size',
    help: 'Events committed per storage transaction (group commit)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry],
  });

  readonly ingestCommitSeconds = new Histogram({
    name: 'pitcrew_ingest_commit_duration_seconds',
    help: 'Duration of one group-commit transaction',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });

  readonly dataDirFreeBytes = new Gauge({
    name: 'pitcrew_data_dir_free_bytes',
    help: "Free space of the data directory's file system (PITCREW_DATA_DIR), as an unprivileged writer may use it",
    registers: [this.registry],
  });

  readonly dataDirLowSpace = new Gauge({
    name: 'pitcrew_data_dir_low_space',
    help: "1 while the data directory's free space is below PITCREW_DISK_WARN_FREE (or the reserve), else 0",
    registers: [this.registry],
  });

  readonly dataDirFull = new Gauge({
    name: 'pitcrew_data_dir_full',
    help: "1 while the data directory's free space is below PITCREW_DISK_RESERVE: events are answered 503 and nothing is written",
    registers: [this.registry],
  });

  readonly backupsTaken = new Counter({
    name: 'pitcrew_backups_total',
    help: 'Scheduled backups of the SQLite database (PITCREW_BACKUP_SCHEDULE) by outcome: ok or failed',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly backupLastSuccess = new Gauge({
    name: 'pitcrew_backup_last_success_timestamp_seconds',
    help: 'When the last scheduled backup was written whole (Unix time); alert when it is older than the schedule allows',
    registers: [this.registry],
  });

  readonly retentionDeleted = new Counter({
    name: 'pitcrew_retention_deleted_total',
    help: 'Rows deleted because they were older than PITCREW_RETENTION_DAYS, by table (executions with their transitions, artifacts and output)',
    labelNames: ['table'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'pitcrew_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
}
