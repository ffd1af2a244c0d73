import type { MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import type { Secret } from '../../credentials/schema.js';
import type { Graph, GraphCapture, GraphSource } from '../graph-source.js';
import { graphSettingError, MAX_IMAGE_BYTES, toolRefused } from '../tool-api.js';
import { isRecord } from '../values.js';
import { CloudwatchClients } from './client.js';
import { credentialParts, regionOf, sender } from './import.js';

/*
 * The alarm's metric as CloudWatch draws it (issue 39, docs/graph-snapshots.md#cloudwatch), with the
 * stored AWS credential (or its role, client.ts) through the official SDK, every signed request
 * through the capture's fetch. Two reads, allowed by cloudwatch:GetMetricData and
 * cloudwatch:GetMetricWidgetImage:
 *
 * - GetMetricData over the window, for the alarm's metrics: that they have data. CloudWatch's image
 *   of a metric without data is a blank graph, without an error (boto/boto3#1744), and pitcrew says
 *   "no data" rather than store a blank picture.
 * - GetMetricWidgetImage (CloudWatch API Reference; MetricWidget as "GetMetricWidgetImage: Metric
 *   Widget Structure and Syntax" gives it: metrics [[Namespace, MetricName, DimName, DimValue, ...,
 *   {stat, period, id, visible}]] or [{expression, id, label}], start, end, width, height, title,
 *   annotations {horizontal:[{label, value}], vertical:[{label, value}]}, timezone): the PNG.
 *
 * The widget is made from the alarm in the SNS message (Trigger: Namespace, MetricName, Dimensions
 * [{name, value}], Statistic (AVERAGE) or ExtendedStatistic (p99), Period, Threshold; or a metric
 * math alarm's Metrics [{Id, Expression | MetricStat:{Metric, Period, Stat}, ReturnData}]), with
 * the threshold as a line and the alert's start marked. A rule's graph is a MetricWidget JSON of
 * its own, drawn as it is (the window and size filled in where it has none).
 */

const TOOL = 'CloudWatch';
/** SNS's Statistic names, as the widget's `stat` names them. */
const STATISTICS: Record<string, string> = { AVERAGE: 'Average', SUM: 'Sum', MINIMUM: 'Minimum', MAXIMUM: 'Maximum', SAMPLE_COUNT: 'SampleCount' };

export interface CloudwatchGraphSettings {
  /** PITCREW_AWS_ENDPOINT_URL and PITCREW_AWS_STS_ENDPOINT_URL, as the import takes them. */
  awsEndpoint?: string | undefined;
  stsEndpoint?: string | undefined;
}

interface Widget {
  query: string;
  title: string;
  widget: Record<string, unknown>;
  /** The metrics whose data is checked first; none for a rule's own widget. */
  queries: MetricDataQuery[];
}

export class CloudwatchGraphSource implements GraphSource {
  readonly tool = TOOL;
  private readonly clients: CloudwatchClients;

  constructor(private readonly settings: CloudwatchGraphSettings = {}) {
    this.clients = new CloudwatchClients(settings);
  }

  async capture(request: GraphCapture): Promise<Graph[]> {
    const alarm = alarmOf(request.alert.payload);
    const region = regionOf({ topicArns: topicOf(request.alert.payload, alarm), ...request.config }, (tool, field, message) => graphSettingError(tool, `config/${field}`, message));
    const secret = awsSecret(request.secret);
    const secrets = credentialParts(secret);
    const endpoint = this.settings.awsEndpoint ?? `https://monitoring.${region}.amazonaws.com`;
    const widgets = request.graphs.length > 0 ? request.graphs.map((graph) => ruleWidget(graph, request)) : [alarmWidget(alarm, request)];
    const { GetMetricDataCommand, GetMetricWidgetImageCommand } = await import('@aws-sdk/client-cloudwatch');
    const client = await this.clients.client(region, secret, request.fetch, request.signal);
    const send = sender(endpoint, secrets, request.signal);
    try {
      const graphs: Graph[] = [];
      for (const widget of widgets) {
        if (widget.queries.length > 0) {
          const data = await send('GetMetricData', () => client.send(new GetMetricDataCommand({ MetricDataQueries: widget.queries, StartTime: new Date(request.from), EndTime: new Date(request.to) }), { abortSignal: request.signal }));
          if (!(data.MetricDataResults ?? []).some((result) => (result.Values ?? []).length > 0)) {
            throw toolRefused({ tool: TOOL, url: endpoint, operation: 'GetMetricData', secrets }, `no data for ${widget.query} between ${new Date(request.from).toISOString()} and ${new Date(request.to).toISOString()}`);
          }
        }
        const answer = await send('GetMetricWidgetImage', () => client.send(new GetMetricWidgetImageCommand({ MetricWidget: JSON.stringify(widget.widget), OutputFormat: 'png' }), { abortSignal: request.signal }));
        const bytes = answer.MetricWidgetImage;
        const call = { tool: TOOL, url: endpoint, operation: 'GetMetricWidgetImage', secrets };
        if (!bytes || bytes.byteLength === 0) throw toolRefused(call, `an answer without an image for ${widget.query}`);
        if (bytes.byteLength > MAX_IMAGE_BYTES) throw toolRefused(call, `an image of ${bytes.byteLength} bytes, over the ${MAX_IMAGE_BYTES} pitcrew keeps`);
        graphs.push({ kind: 'image', title: widget.title, query: widget.query, contentType: 'image/png', bytes, width: Number(widget.widget.width), height: Number(widget.widget.height) });
      }
      return graphs;
    } finally {
      client.destroy();
    }
  }
}

/** The CloudWatch alarm: the payload itself (what the SNS parser keeps), or the SNS envelope's Message. */
function alarmOf(payload: Record<string, unknown>): Record<string, unknown> {
  if (isRecord(payload.Trigger)) return payload;
  if (typeof payload.Message === 'string') {
    try {
      const message: unknown = JSON.parse(payload.Message);
      if (isRecord(message)) return message;
    } catch {
      // Not an alarm: the rule's graphs must say what to draw.
    }
  }
  return {};
}

/** Where the region comes from when config has none: the SNS topic, else the alarm's ARN (same region). */
function topicOf(payload: Record<string, unknown>, alarm: Record<string, unknown>): string[] {
  return [payload.TopicArn, alarm.AlarmArn].filter((arn): arn is string => typeof arn === 'string');
}

/** The widget of the alarm's metric (or metric math), its threshold and the alert's start. */
export function alarmWidget(alarm: Record<string, unknown>, request: Pick<GraphCapture, 'from' | 'to' | 'width' | 'height' | 'alert'>): Widget {
  const trigger = isRecord(alarm.Trigger) ? alarm.Trigger : undefined;
  if (!trigger) throw graphSettingError(TOOL, 'graphs', 'the alert carries no CloudWatch alarm (no Trigger in the SNS message): give a MetricWidget JSON in the rule’s graphs');
  const name = typeof alarm.AlarmName === 'string' ? alarm.AlarmName : request.alert.alarmName;
  const period = typeof trigger.Period === 'number' ? trigger.Period : 300;
  const metrics: unknown[] = [];
  const queries: MetricDataQuery[] = [];
  if (Array.isArray(trigger.Metrics)) {
    for (const entry of trigger.Metrics.filter(isRecord)) {
      const id = String(entry.Id ?? `m${metrics.length + 1}`);
      const stat = isRecord(entry.MetricStat) ? entry.MetricStat : undefined;
      const metric = stat && isRecord(stat.Metric) ? stat.Metric : undefined;
      if (metric && typeof metric.Namespace === 'string' && typeof metric.MetricName === 'string') {
        const dims = dimensionsOf(metric.Dimensions);
        const statName = String(stat!.Stat ?? 'Average');
        const statPeriod = typeof stat!.Period === 'number' ? stat!.Period : period;
        metrics.push([metric.Namespace, metric.MetricName, ...dims.flatMap((d) => [d.Name, d.Value]), { id, stat: statName, period: statPeriod, visible: entry.ReturnData !== false }]);
        queries.push({ Id: id, MetricStat: { Metric: { Namespace: metric.Namespace, MetricName: metric.MetricName, Dimensions: dims }, Period: statPeriod, Stat: statName }, ReturnData: true });
      } else if (typeof entry.Expression === 'string') {
        metrics.push([{ expression: entry.Expression, id, label: typeof entry.Label === 'string' ? entry.Label : entry.Expression }]);
      }
    }
  } else if (typeof trigger.Namespace === 'string' && typeof trigger.MetricName === 'string') {
    const dims = dimensionsOf(trigger.Dimensions);
    const stat = typeof trigger.ExtendedStatistic === 'string' && trigger.ExtendedStatistic !== '' ? trigger.ExtendedStatistic : STATISTICS[String(trigger.Statistic).toUpperCase()] ?? 'Average';
    metrics.push([trigger.Namespace, trigger.MetricName, ...dims.flatMap((d) => [d.Name, d.Value]), { stat, period }]);
    queries.push({ Id: 'm1', MetricStat: { Metric: { Namespace: trigger.Namespace, MetricName: trigger.MetricName, Dimensions: dims }, Period: period, Stat: stat }, ReturnData: true });
  }
  if (queries.length === 0) throw graphSettingError(TOOL, 'graphs', `alarm ${name} names no metric in its Trigger: give a MetricWidget JSON in the rule’s graphs`);
  const horizontal = typeof trigger.Threshold === 'number' ? [{ label: `${name} threshold`, value: trigger.Threshold }] : [];
  const widget = {
    metrics, title: name, view: 'timeSeries', stacked: false, period,
    start: new Date(request.from).toISOString(), end: new Date(request.to).toISOString(), width: request.width, height: request.height, timezone: '+0000',
    annotations: { horizontal, vertical: [{ label: 'alert', value: new Date(request.alert.startedAt).toISOString() }] },
  };
  const query = queries.map((q) => `${q.MetricStat!.Metric!.Namespace}/${q.MetricStat!.Metric!.MetricName}{${(q.MetricStat!.Metric!.Dimensions ?? []).map((d) => `${d.Name}=${d.Value}`).join(',')}} ${q.MetricStat!.Stat}`).join(', ');
  return { query, title: name, widget, queries };
}

/** A rule's MetricWidget JSON, with the capture's window and size where it gives none. */
function ruleWidget(graph: string, request: Pick<GraphCapture, 'from' | 'to' | 'width' | 'height'>): Widget {
  let parsed: unknown;
  try {
    parsed = JSON.parse(graph);
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.metrics)) throw graphSettingError(TOOL, 'graphs', `"${graph.slice(0, 80)}" is not a MetricWidget: give CloudWatch's widget JSON, {"metrics": [["AWS/EC2", "CPUUtilization", "InstanceId", "i-…"]]}`);
  const widget = { start: new Date(request.from).toISOString(), end: new Date(request.to).toISOString(), width: request.width, height: request.height, ...parsed };
  return { query: graph, title: typeof parsed.title === 'string' ? parsed.title : 'CloudWatch', widget, queries: [] };
}

/** SNS's dimensions [{name, value}] (the API's Name/Value read too). */
function dimensionsOf(list: unknown): Array<{ Name: string; Value: string }> {
  return (Array.isArray(list) ? list.filter(isRecord) : []).flatMap((d) => {
    const name = d.name ?? d.Name;
    const value = d.value ?? d.Value;
    return typeof name === 'string' && typeof value === 'string' ? [{ Name: name, Value: value }] : [];
  });
}

function awsSecret(secret: unknown): Secret<'aws'> {
  if (isRecord(secret) && typeof secret.accessKeyId === 'string' && typeof secret.secretAccessKey === 'string') return secret as Secret<'aws'>;
  throw graphSettingError(TOOL, 'secret', 'CloudWatch graphs are read with a stored AWS credential ({accessKeyId, secretAccessKey[, sessionToken, roleArn, externalId]}) allowed cloudwatch:GetMetricData and cloudwatch:GetMetricWidgetImage');
}
