import { CopyButton } from './CopyButton';

/**
 * A command or snippet to copy, monospaced, with its own copy button. A command wraps; a file's
 * lines (`lines`: YAML, where a break inside a URL reads as a different file) keep their shape and
 * the block scrolls sideways.
 */
export function CodeBlock({ code, copyLabel = 'Copy', label, lines = false }: { code: string; copyLabel?: string; label?: string; lines?: boolean }) {
  return (
    <div className={lines ? 'code-block code-block-lines' : 'code-block'}>
      <pre aria-label={label}>{code}</pre>
      <CopyButton text={code} label={copyLabel} className="code-block-copy" />
    </div>
  );
}
