import { CopyButton } from './CopyButton';

/** A command or snippet to copy: monospaced, wrapped, with its own copy button. */
export function CodeBlock({ code, copyLabel = 'Copy', label }: { code: string; copyLabel?: string; label?: string }) {
  return (
    <div className="code-block">
      <pre aria-label={label}>{code}</pre>
      <CopyButton text={code} label={copyLabel} className="code-block-copy" />
    </div>
  );
}
