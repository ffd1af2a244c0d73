import { Type, type Static } from 'typebox';

/* The analytics' and candidates' contract (DESIGN.md §7, docs/incidents.md): validation, OpenAPI and types at once. */

const Seconds = Type.Number({ minimum: 0, description: 'seconds, to the millisecond' });
const MaybeSeconds = Type.Union([Seconds, Type.Null()], { description: 'seconds, to the millisecond; null when no incident counts' });
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a UTC day' });

const Filters = {
  from: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'the first day: a date (2026-11-01), or a date-time with its zone, whose UTC day is taken; default 29 days before `to`' })),
  to: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'the last day, included: a date or a date-time with its zone; default today (UTC)' })),
  integrationId: Type.Optional(Type.String({ format: 'uuid', description: "one integration's incidents" })),
  hostname: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: "one host's incidents (any case)" })),
  alarmName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: "one alarm name's incidents (the exact name)" })),
  severity: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "incidents of this severity (exact)" })),
};
const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'items per list' }));

export const AnalyticsQuery = Type.Object({ ...Filters, limit: Limit }, { additionalProperties: false });

const Period = Type.Object({
  from: Day,
  to: { ...Day, description: 'the last day, included' },
  days: Type.Integer({ minimum: 1 }),
});

const BeforeAfterSide = Type.Object({ count: Type.Integer({ minimum: 0 }), meanSeconds: MaybeSeconds });

export const AnalyticsView = Type.Object({
  period: Period,
  resolved: Type.Integer({ minimum: 0, description: 'incidents resolved in the period (the filters applied)' }),
  automated: Type.Integer({ minimum: 0, description: 'of them, resolved by automation (a pitcrew fix ended within the automation window before)' }),
  automatedShare: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'automated / resolved; null when nothing resolved' }),
  meanSeconds: MaybeSeconds,
  frequent: Type.Array(Type.Object({ alarmName: Type.String(), count: Type.Integer() }), { description: 'most resolved incidents first; ties by name' }),
  slowest: Type.Array(Type.Object({
    alarmName: Type.String(),
    count: Type.Integer(),
    meanSeconds: Seconds,
    p50Seconds: MaybeSeconds,
    p90Seconds: MaybeSeconds,
    maxSeconds: Seconds,
  }), { description: 'longest mean resolution first; ties: more incidents first, then by name. Percentiles interpolate linearly between the closest ranks (docs/incidents.md#analytics)' }),
  mttrByDay: Type.Array(Type.Object({ day: Day, count: Type.Integer(), automated: Type.Integer(), meanSeconds: Seconds }), { description: 'each UTC day with resolved incidents, oldest first' }),
  hosts: Type.Array(Type.Object({ hostname: Type.String(), count: Type.Integer() }), { description: 'most incidents first; incidents without a host are not counted' }),
  rules: Type.Array(Type.Object({
    ruleId: Type.String(),
    ruleName: Type.String(),
    enabled: Type.Boolean(),
    integrationId: Type.String(),
    alarmName: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    before: BeforeAfterSide,
    after: BeforeAfterSide,
  }), { description: "each alert rule and alarm name it covers: the period's incidents of the alarm resolved before the rule was created, and after" }),
});

export const CandidatesQuery = Type.Object({
  ...Filters,
  limit: Limit,
  minCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 3, description: 'at least this many incidents in the period' })),
  minMeanSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000, default: 300, description: 'resolved in at least this long on average' })),
}, { additionalProperties: false });

export const CandidatesView = Type.Object({
  period: Period,
  items: Type.Array(Type.Object({
    integrationId: Type.String(),
    alarmName: Type.String(),
    count: Type.Integer(),
    meanSeconds: Seconds,
    totalSeconds: { ...Seconds, description: 'count × mean: the ranking' },
    severities: Type.Array(Type.String()),
    kind: Type.Enum(['certificate', 'disk', 'memory', 'service_down', 'other']),
    rulesOff: Type.Array(Type.Object({ id: Type.String(), name: Type.String() }), { description: 'rules that cover the alarm but are off' }),
    why: Type.String({ description: 'the ranking in words' }),
    typicalHostname: Type.Union([Type.String(), Type.Null()], { description: 'the host most of its latest (up to 1,000) incidents in the period were on' }),
    suggestion: Type.Object({
      name: Type.String(),
      trigger: Type.Object({
        type: Type.Literal('alert'),
        integrationId: Type.String(),
        alarmName: Type.String({ description: 'matches this alarm name only' }),
        severity: Type.Optional(Type.Array(Type.String())),
      }),
      target: Type.Object({ type: Type.Literal('trigger_host') }),
      starterRunbook: Type.Union([Type.Object({
        slug: Type.String({ description: 'GET /runbook-library/{slug}; POST /runbook-library/{slug}/install' }),
        name: Type.String(),
        flavour: Type.Enum(['autofix', 'diagnostics']),
        why: Type.String(),
        labelDefaults: Type.Array(Type.Object({
          variable: Type.String({ description: 'a variable the starter reads, e.g. ServiceName' }),
          labels: Type.Array(Type.String(), { description: 'the LABEL_<name> variables that give it, the first set winning' }),
        }), { description: "the starter's variables a label of the alarm's newest alert obviously gives" }),
        prelude: Type.String({ description: "the lines the wizard writes after the script's opening comment: each variable from its labels unless set; empty for none" }),
      }), Type.Null()], { description: "the starter runbook for the alarm's kind; null for a kind the library has none for" }),
      labels: Type.Array(Type.String(), { description: "the label names of the alarm's newest alert (its runs read them as LABEL_<name>)" }),
      flapping: Type.Object({ enabled: Type.Boolean(), maxEvents: Type.Integer(), windowSeconds: Type.Integer(), cooldownSeconds: Type.Integer() }),
      actionLimit: Type.Object({ max: Type.Integer(), windowSeconds: Type.Integer(), onLimit: Type.Enum(['escalate', 'drop']) }),
    }, { description: 'what the rule wizard fills in' }),
  }), { description: 'the largest total incident time first' }),
});

export type AnalyticsQuery = Static<typeof AnalyticsQuery>;
export type CandidatesQuery = Static<typeof CandidatesQuery>;
