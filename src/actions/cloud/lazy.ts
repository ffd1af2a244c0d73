import type { CloudProvider } from './provider.js';
import type { CloudSpec } from './kind.js';

/**
 * A provider whose module, and the cloud's SDK with it, is loaded on first use. The four SDKs
 * took 4-5 s and 200 MB of every server start (Google's alone 2.6 s and 130 MB, measured by
 * importing each on this VM), which a tenant that uses one cloud, or none, pays for nothing, and
 * a fleet waits for after every restart.
 */
export function lazyProvider<P extends CloudSpec['provider']>(load: () => Promise<CloudProvider<P>>): CloudProvider<P> {
  let loading: Promise<CloudProvider<P>> | undefined;
  let loaded: CloudProvider<P> | undefined;
  const provider = () => {
    // A failed load (a broken install) is tried again by the next call, not cached.
    loading ??= load().then((p) => (loaded = p), (error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  return {
    run: async (...args) => (await provider()).run(...args),
    instancesTagged: async (...args) => (await provider()).instancesTagged(...args),
    probe: async (secret) => (await provider()).probe(secret),
    close: () => loaded?.close(),
  };
}
