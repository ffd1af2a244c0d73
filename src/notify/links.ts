/**
 * Links to the UI's pages (web UI routes /rules/{id}, /events/{id}, /executions/{id}) and to
 * snapshot images (the API beside the UI), under
 * PITCREW_PUBLIC_URL. Without a public URL the service cannot know how people reach it, so
 * messages carry ids instead of links.
 */
export class UiLinks {
  constructor(private readonly publicUrl: string | undefined) {}

  rule(id: string): string | null {
    return this.to(`/rules/${id}`);
  }

  event(id: string): string | null {
    return this.to(`/events/${id}`);
  }

  execution(id: string): string | null {
    return this.to(`/executions/${id}`);
  }

  /** The page that asks the signed-in person to approve or reject, under its signed link's query (executions/approval-link.ts). */
  decide(executionId: string, query: string): string | null {
    return this.to(`/executions/${executionId}/decide?${query}`);
  }

  /** A snapshot's image under its signed link's query (snapshots/signed-link.ts). */
  snapshot(id: string, query: string): string | null {
    return this.to(`/api/v1/snapshots/${id}?${query}`);
  }

  private to(path: string): string | null {
    return this.publicUrl ? `${this.publicUrl}${path}` : null;
  }
}
