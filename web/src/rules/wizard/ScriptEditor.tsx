import { lazy, Suspense, type ComponentProps } from 'react';

// CodeMirror is the largest part of the UI: it loads with the forms that edit a script only.
const CodeEditor = lazy(() => import('./CodeEditor'));

/** The code editor, loaded on demand; Field gives it its id and descriptions as to any control. */
export function ScriptEditor(props: ComponentProps<typeof CodeEditor>) {
  return (
    <Suspense fallback={<div className="code-editor code-editor-loading">Loading the editor…</div>}>
      <CodeEditor {...props} />
    </Suspense>
  );
}
