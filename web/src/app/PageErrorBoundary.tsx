import { Component, type ErrorInfo, type ReactNode } from 'react';
import { messageOf } from '../api/problem';

interface State {
  error: unknown;
}

/**
 * A page that fails to load (its code chunk is gone after an upgrade, say) or to render shows
 * what went wrong and a way out, instead of a blank screen.
 */
export class PageErrorBoundary extends Component<{ children: ReactNode }, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.warn('page failed', error, info.componentStack);
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="banner banner-error" role="alert">
        <div>
          <strong>This page failed: </strong>
          {messageOf(this.state.error)}
        </div>
        <button type="button" className="button button-small" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    );
  }
}
