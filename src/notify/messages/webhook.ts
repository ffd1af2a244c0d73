import type { Notification } from '../notification.js';
import { digest } from './digest.js';

/**
 * The generic webhook body: the notification as structured data, plus the title and summary a
 * receiver can show as is. `id` is the message id: the same on every retry, so receivers can
 * drop a repeat (delivery is at least once).
 */
export function webhookBody(messageId: string, createdAt: string, notification: Notification): Record<string, unknown> {
  const d = digest(notification);
  return { id: messageId, type: notification.kind, severity: notification.severity, createdAt, title: d.title, summary: d.summary, notification };
}
