import { useLayoutEffect, useRef } from 'react';

/** A terminal-like view of one output stream that keeps following the end while you are there. */
export function OutputPane({ title, text, truncated, live, emptyText }: { title: string; text: string; truncated?: boolean; live?: boolean; emptyText: string }) {
  const ref = useRef<HTMLPreElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const pre = ref.current;
    if (pre && following.current) pre.scrollTop = pre.scrollHeight;
  }, [text]);
  return (
    <section className="output" aria-label={title}>
      <header className="output-header">
        <h3>{title}</h3>
        {live ? <span className="live-indicator">live</span> : null}
        {truncated ? <span className="muted">truncated at the agent's limit</span> : null}
      </header>
      <pre
        ref={ref}
        className="output-text"
        data-stream={title}
        tabIndex={0}
        onScroll={(event) => {
          const pre = event.currentTarget;
          following.current = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 24;
        }}
      >
        {text || <span className="muted">{emptyText}</span>}
      </pre>
    </section>
  );
}
