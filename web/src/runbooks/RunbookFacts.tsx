import { CopyButton } from '../ui/CopyButton';

// Apart from RunbookContent, which renders notes: the pages that show only these facts (a rule, an
// execution, the wizard) do not load the Markdown renderer.

/** The script's SHA-256, as `sha256sum` gives it for the file: executions record it. */
export function Sha256({ value }: { value: string }) {
  return (
    <span className="sha256">
      <span className="mono" data-sha256>
        {value}
      </span>{' '}
      <CopyButton text={value} label="Copy" />
    </span>
  );
}

export function EnvNames({ names }: { names: string[] }) {
  return (
    <span className="env-names">
      {names.map((name) => (
        <code key={name}>${name}</code>
      ))}
    </span>
  );
}
