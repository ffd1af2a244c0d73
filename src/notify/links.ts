/**
 * Links to the UI's pages (web UI routes /rules/{id}, /events/{id}, /executions/{id}), under
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

  private to(path: string): string | null {
    return this.publicUrl ? `${this.publicUrl}${path}` : null;
  }
}
